"""Recover from a table write that a killed process left half done.

Spark creates a managed table in two steps: it writes the data into the table's default location
(``<warehouse>/<schema>.db/<table>``), then registers the table in the metastore. A process killed
between the two (SIGKILL, an out-of-memory kill, a lost node) leaves a directory that no table
owns. Spark then refuses every later ``CREATE TABLE ... AS SELECT`` (and ``saveAsTable``) of that
name with ``LOCATION_ALREADY_EXISTS``: a managed table's location must be empty, and Spark 4 has no
setting to relax that. Every incremental model's first build, every ``--full-refresh`` and every
run of the package's own hidden tables (``<model>__cdc_v<N>``, ``__cdc_batch``, ``__cdc_touched``,
``__cdc_next``) writes a table of a name the killed run also wrote, so one kill at the wrong moment
would stop the model for good, until someone deleted the directory by hand.

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

Appends (``INSERT INTO``, how dbt-spark's incremental ``append`` strategy adds each batch to the
staging models) are not atomic either. Spark's file committer (Hadoop's FileOutputCommitter,
algorithm 1) writes each task's files under ``<table>/_temporary/0/task_*`` and publishes them in
the job commit, one rename per file. Killed before that commit, the write leaves its committed tasks
there, and the next append's commit publishes every committed task it finds under
``_temporary/0``, the dead job's as well as its own: the killed batch is staged twice. Killed during
the commit, part of the batch is published and the next run's watermark (the largest staged
position) can skip the rest. :func:`settle_interrupted_append` runs before every ``INSERT INTO``
and costs a catalog lookup and one ``exists`` call when there is no ``_temporary``; when there is
one, it finishes the commit of a job that had published some of its files (Spark names every
file of a job with the job's id), and discards what no commit had begun to publish (its rows are
staged again by this run, after the watermark).
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


def clear_abandoned_location(spark: Any, exc: BaseException) -> tuple[str, str] | None:
    """Delete the abandoned directory ``exc`` complains about; return (table identifier, its
    location), or None.

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
    return conflict


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


def retry_after_clearing(spark: Any, exc: BaseException) -> bool:
    """Clear the abandoned directory behind ``exc`` and log it; True when the statement may retry."""
    cleared = clear_abandoned_location(spark, exc)
    if cleared is None:
        return False
    identifier, location = cleared
    warn(
        f"deleted {location}, the directory of an interrupted write of {identifier} that no table "
        "owns (a run was killed while writing it); writing the table again."
    )
    return True


#: An append as dbt-spark writes it: ``insert into table <relation> select ...``, after dbt's query
#: comment (``/* {"app": "dbt", ...} */``) and any other leading comments.
INSERT_INTO = re.compile(
    r"(?:\s|/\*.*?\*/|--[^\n]*\n)*insert\s+into\s+(?:table\s+)?((?:`[^`]+`|\w+)(?:\.(?:`[^`]+`|\w+))?)\s",
    re.I | re.S,
)
#: Spark's name for the files of one write job: part-<task>-<job uuid>[-c<n>].<ext>.
JOB_FILE = re.compile(r"part-\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def settle_interrupted_append(spark: Any, sql: str) -> str | None:
    """Before ``sql``, an append: settle a killed append to the same table (see the module
    docstring). Returns what was done, for the log, or None when there was nothing to do."""
    match = INSERT_INTO.match(sql)
    if match is None:
        return None
    state = spark._jsparkSession.sessionState()
    try:
        table = state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(match.group(1)))
    except Exception:  # not a table of this catalog: the statement itself will say so
        return None
    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.hadoop.fs.Path(table.location())
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    temporary = jvm.org.apache.hadoop.fs.Path(root, "_temporary")
    if not fs.exists(temporary):
        return None
    prefix = root.toUri().getPath().rstrip("/") + "/"
    published: set[str] = set()
    committed: list[tuple[Any, str, str | None]] = []  # (file, path under its task dir, job id)
    unpublished = 0  # files under _temporary
    files = fs.listFiles(root, True)
    while files.hasNext():
        path = files.next().getPath()
        parts = path.toUri().getPath()[len(prefix) :].split("/")
        named = JOB_FILE.match(parts[-1])
        if parts[0] != "_temporary":
            if named:
                published.add(named.group(1))
        else:
            unpublished += 1
            if len(parts) >= 4 and parts[2].startswith("task_"):
                # _temporary/<attempt>/task_*/...: a committed task; task attempts that never
                # committed (_temporary/<attempt>/_temporary/...) were never going to be published.
                committed.append((path, "/".join(parts[3:]), named.group(1) if named else None))
    moved, nested = 0, False
    for path, relative, job_id in committed:
        if job_id is not None and job_id in published:
            target = jvm.org.apache.hadoop.fs.Path(root, relative)
            if not fs.exists(target):
                fs.mkdirs(target.getParent())
                fs.rename(path, target)
                moved += 1
                nested = nested or "/" in relative
    fs.delete(temporary, True)
    ident = table.identifier()
    name = f"{_quoted(ident.database().get())}.{_quoted(ident.table())}"
    if nested:  # new partition directories: into the metastore, as the commit would have
        spark.sql(f"alter table {name} recover partitions")
    spark.catalog.refreshTable(name)
    return (
        f"settled an interrupted append to {name} (a run was killed while writing it): "
        f"published the {moved} file(s) its commit had not, discarded {unpublished - moved} file(s) no "
        "commit had begun to publish (their rows are staged again)"
    )


def warn(message: str) -> None:
    """Log ``message`` through dbt's adapter logger when there is one."""
    try:
        from dbt.adapters.events.logging import AdapterLogger
    except ImportError:  # pragma: no cover - dbt-core is a dependency of the plugin's users
        return
    AdapterLogger("spark_cdc").warning(message)
