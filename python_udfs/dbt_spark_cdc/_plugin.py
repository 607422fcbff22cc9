"""The dbt plugin: adds ``submission_method: session`` to dbt-spark and registers UDFs on first use.

It also makes ``dbt seed`` correct on the session method: dbt-spark's session cursor substitutes
seed values into ``insert ... values (cast(%s as type), ...)`` as ``'<value>'`` without escaping, so
a value with a quote fails to parse, a backslash is silently eaten (``\"`` in JSON text becomes
``"``) and a missing value is stored as the text ``'None'``. Seeds of raw CDC messages (JSON)
hit all three. :func:`spark_sql_literal` writes real Spark SQL literals instead.

A statement Spark refuses with LOCATION_ALREADY_EXISTS, because a killed run left the directory of
the table it was writing, runs again once that directory is cleared; an append to a table a killed
append left unsettled settles it first (see :mod:`abandoned_writes`).

dbt loads the plugin for every project of the environment; it changes nothing unless the project
uses the spark_cdc package (the package itself, or installed by `dbt deps`).

Nothing here creates a SparkSession. dbt-spark creates it on its first query with the profile's
``server_side_parameters``; creating it earlier would silently drop ``spark.master``, memory and
catalog settings (``getOrCreate`` on an existing session only applies runtime SQL settings). So the
UDFs are registered inside dbt-spark's own cursor, right after it has obtained its session.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import inspect
import math
import os
import re
from pathlib import Path
from typing import Any

_PATCHED_MARKER = "_spark_cdc_patched"
#: The dbt package's name (its dbt_project.yml).
PACKAGE_NAME = "spark_cdc"


def spark_sql_literal(value: Any) -> str:
    """``value`` as a Spark SQL literal (default parser settings: backslash escapes in strings)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return format(value, "f")
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, dt.date):
        text = value.isoformat()
    else:
        text = str(value)  # strings, and 'NaN' / 'Infinity' (cast from text)
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _patch_dbt_spark() -> bool:
    """Install the two hooks into dbt-spark; False when dbt-spark (session extra) is unavailable."""
    try:
        from dbt.adapters.spark.impl import SparkAdapter
        from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
    except ImportError:
        return False

    from dbt_common.exceptions import DbtRuntimeError

    from dbt_spark_cdc.abandoned_writes import explain, retry_after_clearing, settle_interrupted_append, warn
    from dbt_spark_cdc.session import SUBMISSION_METHOD, SessionPythonJobHelper, get_session, prepare_session

    if not getattr(SparkAdapter, _PATCHED_MARKER, False):
        # The property object itself (class attribute access would give mypy the getter's signature).
        original_helpers = inspect.getattr_static(SparkAdapter, "python_submission_helpers")

        def python_submission_helpers(self: Any) -> dict[str, Any]:
            helpers = dict(original_helpers.fget(self))
            helpers.setdefault(SUBMISSION_METHOD, SessionPythonJobHelper)
            return helpers

        # Replacing the read-only property is the point of the patch; mypy sees it as a method.
        SparkAdapter.python_submission_helpers = property(python_submission_helpers)  # type: ignore[method-assign,assignment]
        setattr(SparkAdapter, _PATCHED_MARKER, True)

    if not getattr(Cursor, _PATCHED_MARKER, False):
        original_execute = Cursor.execute

        @functools.wraps(original_execute)
        def execute(self: Any, sql: str, *parameters: Any) -> None:
            # Same builder and parameters as dbt-spark's execute, so this is its session, not a new one.
            params = self.server_side_parameters
            spark = prepare_session(get_session(params), params)
            settled = settle_interrupted_append(spark, sql)
            if settled is not None:
                warn(settled)
            try:
                original_execute(self, sql, *parameters)
            except Exception as exc:
                # Spark refused to create a table over a directory a killed run left (see
                # abandoned_writes): cleared, the statement runs again; it wrote nothing.
                if not retry_after_clearing(spark, exc):
                    message = explain(exc)
                    if message is None:
                        raise
                    raise DbtRuntimeError(message) from exc
                original_execute(self, sql, *parameters)

        Cursor.execute = execute  # type: ignore[method-assign]  # deliberate monkey-patch of dbt-spark
        setattr(Cursor, _PATCHED_MARKER, True)

    if not getattr(SessionConnectionWrapper, _PATCHED_MARKER, False):
        # Seed bindings (see module docstring); the cursor formats them into the SQL with `%`.
        SessionConnectionWrapper._fix_binding = classmethod(  # type: ignore[method-assign,assignment]
            lambda cls, value: spark_sql_literal(value)
        )
        setattr(SessionConnectionWrapper, _PATCHED_MARKER, True)
    return True


def install() -> bool:
    """Apply the plugin's effects without dbt's plugin manager (used by tests and notebooks)."""
    from dbt_spark_cdc.session import ensure_python_workers_env

    ensure_python_workers_env()
    return _patch_dbt_spark()


def project_uses_package(project_dir: str | os.PathLike[str] | None) -> bool:
    """Whether the dbt project in ``project_dir`` (default: the working directory) uses the spark_cdc
    package: it is the package itself, or `dbt deps` installed it. The plugin changes nothing for
    any other project, although dbt loads it for every project of the environment."""
    root = Path(project_dir or ".")
    try:
        text = (root / "dbt_project.yml").read_text(encoding="utf-8")
    except OSError:
        return False
    name = re.search(r"^name:\s*['\"]?([A-Za-z0-9_]+)", text, re.MULTILINE)
    if name and name.group(1) == PACKAGE_NAME:
        return True
    install_path = re.search(r"^packages-install-path:\s*['\"]?([^'\"\n#]+)", text, re.MULTILINE)
    packages = root / (install_path.group(1).strip() if install_path else "dbt_packages")
    return (packages / PACKAGE_NAME / "dbt_project.yml").exists()


def _project_dir() -> str | None:
    """The project directory of the running dbt invocation (--project-dir, else the working one)."""
    try:
        from dbt.flags import get_flags

        flags: Any = get_flags()  # type: ignore[no-untyped-call]
        return getattr(flags, "PROJECT_DIR", None)
    except Exception:  # flags not set up: a plugin loaded outside an invocation
        return None


@functools.cache
def plugin_classes() -> list[type]:
    """The plugin classes dbt instantiates; empty where dbt-core is not installed."""
    try:
        from dbt.plugins.manager import dbtPlugin
    except ImportError:
        return []

    class SparkCdcPlugin(dbtPlugin):
        """spark_cdc's dbt plugin (see module docstring): active only in projects that use the
        package (project_uses_package)."""

        def initialize(self) -> None:
            if project_uses_package(_project_dir()):
                install()

    return [SparkCdcPlugin]
