"""The UDFs that spark_cdc registers in the Spark session, callable from SQL and Python models.

Every UDF is a vectorised (Arrow) pandas UDF: measured on this stack, per-row pickled UDFs were
1.6-1.8x slower. The functions are shipped to executors *by value* (cloudpickle), so a cluster whose
workers do not have ``dbt-spark-cdc`` installed still runs them; only pandas and pyarrow, which
PySpark itself needs for Arrow UDFs, must be present on the workers.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

# pandas at module level: PySpark resolves the UDFs' type hints (pd.Series) at registration time.
# This module is imported only when UDFs are registered, never by `import dbt_spark_cdc`.
import pandas as pd

# Referenced as module globals (never imported inside a UDF body): with the package registered for
# pickling by value, cloudpickle ships these functions' code along with the UDFs, so executors never
# import dbt_spark_cdc.
from dbt_spark_cdc import __version__ as _version
from dbt_spark_cdc.checksums import crc32c_function
from dbt_spark_cdc.decoders import decode_connect_decimal
from dbt_spark_cdc.json_variant import array_elements, canonical_json, image_members

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REGISTERED_MARKER = "_spark_cdc_udfs_registered"
_lock = threading.Lock()


def _crc32c_series(texts: pd.Series) -> pd.Series:
    fn = crc32c_function()
    values = [None if t is None else fn(t.encode("utf-8")) for t in texts]
    return pd.Series(values, dtype="Int64")


def _decode_connect_decimal_series(encoded: pd.Series, scales: pd.Series) -> pd.Series:
    values = [
        decode_connect_decimal(e, None if s is None or pd.isna(s) else int(s))
        for e, s in zip(encoded, scales, strict=True)
    ]
    return pd.Series(values, dtype="object")


def _json_members_series(texts: pd.Series) -> pd.Series:
    return pd.Series([image_members(t) for t in texts], dtype="object")


def _json_canonical_series(texts: pd.Series) -> pd.Series:
    return pd.Series([canonical_json(t) for t in texts], dtype="object")


def _json_elements_series(texts: pd.Series) -> pd.Series:
    return pd.Series([array_elements(t) for t in texts], dtype="object")


def _version_series(dummy: pd.Series) -> pd.Series:
    return pd.Series([_version] * len(dummy), dtype="object")


@dataclass(frozen=True)
class UdfSpec:
    """One SQL-callable function: its SQL name, Python implementation and Spark return type."""

    name: str
    func: Callable[..., Any]
    return_type: str
    doc: str


UDFS: tuple[UdfSpec, ...] = (
    UdfSpec(
        "spark_cdc_crc32c",
        _crc32c_series,
        "bigint",
        "spark_cdc_crc32c(text string) -> bigint: CRC32C of the UTF-8 bytes of text (null for null).",
    ),
    UdfSpec(
        "spark_cdc_decode_connect_decimal",
        _decode_connect_decimal_series,
        "string",
        "spark_cdc_decode_connect_decimal(base64 string, scale int) -> string: exact decimal text of a "
        "Kafka Connect Decimal (base64 big-endian unscaled bytes); null when undecodable or wider "
        "than 38 digits.",
    ),
    # Spark 3.5 has no VARIANT: the macros read JSON through these three there (json_variant.py).
    UdfSpec(
        "spark_cdc_json_members",
        _json_members_series,
        "map<string,string>",
        "spark_cdc_json_members(text string) -> map<string,string>: each top-level member of a JSON "
        "object as Spark 4's to_json(from_json(text, 'map<string, variant>')[name]) writes it.",
    ),
    UdfSpec(
        "spark_cdc_json_canonical",
        _json_canonical_series,
        "string",
        "spark_cdc_json_canonical(text string) -> string: Spark 4's to_json(try_parse_json(text)).",
    ),
    UdfSpec(
        "spark_cdc_json_elements",
        _json_elements_series,
        "array<string>",
        "spark_cdc_json_elements(text string) -> array<string>: each element of a JSON array as Spark 4's "
        "to_json of the VARIANT element writes it.",
    ),
    UdfSpec(
        "spark_cdc_version",
        _version_series,
        "string",
        "spark_cdc_version(any) -> string: version of dbt-spark-cdc that registered the UDFs.",
    ),
)


def _ship_by_value() -> None:
    from pyspark import cloudpickle

    # PySpark's vendored cloudpickle has no annotations; this states the signature we rely on.
    register_pickle_by_value: Callable[[ModuleType], None] = cloudpickle.register_pickle_by_value
    register_pickle_by_value(sys.modules["dbt_spark_cdc"])


def register_udfs(spark: SparkSession, *, force: bool = False) -> list[str]:
    """Register every spark_cdc UDF in ``spark`` (idempotent per session); returns their names."""
    with _lock:
        if getattr(spark, REGISTERED_MARKER, False) and not force:
            return [u.name for u in UDFS]
        # The defining module: pyspark.sql.functions re-exports it implicitly, invisible to mypy.
        from pyspark.sql.pandas.functions import pandas_udf

        _ship_by_value()
        for spec in UDFS:
            # UdfSpec.func is Callable[..., Any]; pandas_udf's overloads want each exact pandas signature.
            udf = pandas_udf(spec.func, spec.return_type)  # type: ignore[call-overload]
            spark.udf.register(spec.name, udf)
        setattr(spark, REGISTERED_MARKER, True)
        return [u.name for u in UDFS]
