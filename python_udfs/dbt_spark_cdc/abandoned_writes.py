"""Recover from a table write that a killed process left half done.

Spark creates a managed table in two steps: it writes the data into the table's default location
(``<warehouse>/<schema>.db/<table>``), then registers the table in the metastore. A process killed
between the two (SIGKILL, an out-of-memory kill, a lost node) leaves a directory that no table
owns. Spark then refuses every later ``CREATE TABLE ... AS SELECT`` (and ``saveAsTable``) of that
name with ``LOCATION_ALREADY_EXISTS``: a managed table's location must be empty, and Spark 4 has no
setting to relax that. Every incremental model's first build, every ``--full-refresh`` and every
run of the package's own hidden tables (``<model>__cdc_v<N>``, ``__cdc_touched``, ``__cdc_next``)
writes a table of a name the killed run also wrote, so one kill at the wrong moment would stop the
model for good, until someone deleted the directory by hand.

:func:`clear_abandoned_location` is that hand. It runs only after Spark has refused a statement
with ``LOCATION_ALREADY_EXISTS``, so it costs nothing on a normal run, and it deletes the directory
only when all of these hold:

* the catalog has no table of that name (the directory is nobody's data);
* the directory is the managed default location Spark names in the error (dbt owns the relation of
  that name: its materializations drop and recreate it as they need);
* the directory holds the remains of a Spark write, and nothing else: a trace of the write,
  ``_temporary`` (a write killed before its commit), ``.spark-staging-*`` (a killed
  dynamic-partition write) or ``_SUCCESS`` (a write committed just before the kill, or a table whose
  ``DROP`` was killed after the metastore forgot it), besides only what Spark writes there (``part-*``
  files, their ``.crc`` checksums, ``<column>=<value>`` partition directories).

Anything else (files someone put there by hand) is left alone and the error says what to do. The
path and the table name come from Spark's error and the catalog, never from message data.
"""

from __future__ import annotations

import re
from typing import Any

#: Spark's error condition for a managed table whose default location is not empty.
CONDITION = "LOCATION_ALREADY_EXISTS"
#: Names a Spark write leaves in its output directory (the Hadoop committers' work directory, the
#: staging directory of a dynamic partition overwrite, the marker of a committed job).
WRITE_TRACES = ("_temporary", "_SUCCESS")
STAGING_PREFIX = ".spark-staging-"
#: Everything a Spark file-source write puts in a table's directory.
SPARK_ENTRY = re.compile(r"\.?part-.+|_temporary|_SUCCESS|\._SUCCESS\.crc|\.spark-staging-.+|[^=]+=.*")


def _captured(exc: BaseException | None) -> Any:
    """The Spark error behind ``exc`` (dbt-spark re-raises some as DbtRuntimeError ``from`` it)."""
    seen = 0
    while exc is not None and seen < 5:
        if callable(getattr(exc, "getMessageParameters", None)):
            return exc
        exc = exc.__cause__
        seen += 1
    return None


def location_conflict(exc: BaseException) -> tuple[str, str] | None:
    """(table identifier, location) when ``exc`` is Spark's LOCATION_ALREADY_EXISTS, else None."""
    err = _captured(exc)
    if err is None:
        return None
    condition = getattr(err, "getCondition", None) or getattr(err, "getErrorClass", None)
    if condition is None or condition() != CONDITION:
        return None
    params = err.getMessageParameters() or {}
    identifier, location = params.get("identifier"), params.get("location")
    if not identifier or not location:
        return None
    # Spark quotes the location as 'file:/…' in the message parameters.
    return str(identifier), str(location).strip("'")


def is_write_leftover(names: list[str]) -> bool:
    """True when a directory holding the entries ``names`` is the output of a Spark write: a trace
    of one, and nothing Spark would not have written."""
    traced = any(n in WRITE_TRACES or n.startswith(STAGING_PREFIX) for n in names)
    return traced and all(SPARK_ENTRY.fullmatch(n) for n in names)


def clear_abandoned_location(spark: Any, exc: BaseException) -> str | None:
    """Delete the abandoned directory ``exc`` complains about; return its path, or None.

    None means ``exc`` is not this error, or the directory does not look abandoned (see the module
    docstring); the caller then raises ``exc`` (see :func:`explain`).
    """
    conflict = location_conflict(exc)
    if conflict is None:
        return None
    identifier, location = conflict
    if spark.catalog.tableExists(identifier):
        return None
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return None
    names = [status.getPath().getName() for status in fs.listStatus(path)]
    if not is_write_leftover(names):
        return None
    if not fs.delete(path, True):
        return None
    return location


def explain(exc: BaseException) -> str | None:
    """A message with the fix for a LOCATION_ALREADY_EXISTS this module did not clear, else None."""
    conflict = location_conflict(exc)
    if conflict is None:
        return None
    identifier, location = conflict
    return (
        f"spark_cdc: Spark cannot create table {identifier}: its location {location} already holds "
        "files, and no table in the catalog owns them. They are not only the remains of a Spark write "
        "(a _temporary, _SUCCESS or .spark-staging-* entry, part files, partition directories), so "
        "spark_cdc did not delete them. "
        "Fix: move that directory away (or delete it if nothing needs it), then run again."
    )


def warn_cleared(identifier_or_model: str, location: str) -> None:
    """Log, through dbt's adapter logger when there is one, that a directory was deleted."""
    message = (
        f"deleted {location}, the directory of an interrupted write of "
        f"{identifier_or_model} that no table owns (a run was killed while writing it); "
        "writing the table again."
    )
    try:
        from dbt.adapters.events.logging import AdapterLogger
    except ImportError:  # pragma: no cover - dbt-core is a dependency of the plugin's users
        return
    AdapterLogger("spark_cdc").warning(message)


def retry_after_clearing(spark: Any, exc: BaseException) -> bool:
    """Clear the abandoned directory behind ``exc`` and log it; True when the statement may retry."""
    location = clear_abandoned_location(spark, exc)
    if location is None:
        return False
    conflict = location_conflict(exc)
    warn_cleared(conflict[0] if conflict else "a table", location)
    return True
