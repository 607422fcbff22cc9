"""The dbt plugin: adds ``submission_method: session`` to dbt-spark and registers UDFs on first use.

Nothing here creates a SparkSession. dbt-spark creates it on its first query with the profile's
``server_side_parameters``; creating it earlier would silently drop ``spark.master``, memory and
catalog settings (``getOrCreate`` on an existing session only applies runtime SQL settings). So the
UDFs are registered inside dbt-spark's own cursor, right after it has obtained its session.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

_PATCHED_MARKER = "_spark_cdc_patched"


def _patch_dbt_spark() -> bool:
    """Install the two hooks into dbt-spark; False when dbt-spark (session extra) is unavailable."""
    try:
        from dbt.adapters.spark.impl import SparkAdapter
        from dbt.adapters.spark.session import Cursor
    except ImportError:
        return False

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
            prepare_session(get_session(self.server_side_parameters))
            original_execute(self, sql, *parameters)

        Cursor.execute = execute  # type: ignore[method-assign]  # deliberate monkey-patch of dbt-spark
        setattr(Cursor, _PATCHED_MARKER, True)
    return True


def install() -> bool:
    """Apply the plugin's effects without dbt's plugin manager (used by tests and notebooks)."""
    from dbt_spark_cdc.session import ensure_python_workers_env

    ensure_python_workers_env()
    return _patch_dbt_spark()


@functools.cache
def plugin_classes() -> list[type]:
    """The plugin classes dbt instantiates; empty where dbt-core is not installed."""
    try:
        from dbt.plugins.manager import dbtPlugin
    except ImportError:
        return []

    class SparkCdcPlugin(dbtPlugin):
        """spark_cdc's dbt plugin (see module docstring)."""

        def initialize(self) -> None:
            install()

    return [SparkCdcPlugin]
