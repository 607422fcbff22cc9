"""Python half of the spark_cdc dbt package.

dbt-core imports every top-level module whose name starts with ``dbt_`` at start-up and instantiates
the classes listed in its ``plugins`` attribute. Importing this module must stay cheap and must not
fail where dbt-spark (or dbt-core) is absent, so ``plugins`` is resolved lazily (PEP 562) and
everything heavy lives in submodules that are imported on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

__all__ = ["__version__", "plugins"]


def __getattr__(name: str) -> Any:
    if name == "plugins":
        from dbt_spark_cdc._plugin import plugin_classes

        return plugin_classes()
    raise AttributeError(f"module 'dbt_spark_cdc' has no attribute {name!r}")
