"""The pandas-UDF implementations, called directly on pandas Series (no SparkSession)."""

import inspect
import typing

import dbt_spark_cdc
import pandas as pd
import pytest
from dbt_spark_cdc.checksums import crc32c_pure
from dbt_spark_cdc.udfs import (
    UDFS,
    _crc32c_series,
    _decode_connect_decimal_series,
    _version_series,
)


def test_crc32c_series_values_and_nulls():
    texts = pd.Series(["123456789", None, "", "Grüße 🚀"], dtype="object")
    result = _crc32c_series(texts)
    assert str(result.dtype) == "Int64"
    assert len(result) == 4
    assert result.isna().tolist() == [False, True, False, False]
    assert int(result[0]) == 0xE3069283
    assert int(result[2]) == 0
    assert int(result[3]) == crc32c_pure("Grüße 🚀".encode())


def test_crc32c_series_all_null_and_empty():
    assert _crc32c_series(pd.Series([None, None], dtype="object")).isna().tolist() == [True, True]
    empty = _crc32c_series(pd.Series([], dtype="object"))
    assert len(empty) == 0
    assert str(empty.dtype) == "Int64"


def test_crc32c_series_keeps_values_above_int32():
    # 0xE3069283 does not fit a signed 32-bit int; Spark's bigint must receive it unchanged.
    assert _crc32c_series(pd.Series(["123456789"])).tolist() == [3808858755]


def test_decode_series_with_nulls_in_either_column():
    encoded = pd.Series(["AdTA", "CfY=", None, "AdTA", "not base64!", "/w=="], dtype="object")
    # Arrow hands a nullable int column to pandas as float64 with NaN.
    scales = pd.Series([2, 2, 2, None, 2, 2], dtype="float64")
    result = _decode_connect_decimal_series(encoded, scales)
    assert result.dtype == object
    assert result.tolist() == ["1200.00", "25.50", None, None, None, "-0.01"]


def test_decode_series_accepts_nullable_int_scales():
    encoded = pd.Series(["AdTA", "AdTA", "CfY="], dtype="object")
    scales = pd.Series([0, pd.NA, 1], dtype="Int64")
    assert _decode_connect_decimal_series(encoded, scales).tolist() == ["120000", None, "255.0"]


def test_decode_series_length_mismatch_raises():
    with pytest.raises(ValueError):
        _decode_connect_decimal_series(pd.Series(["AdTA", "CfY="]), pd.Series([2]))


def test_version_series():
    result = _version_series(pd.Series([1, None, 3], dtype="object"))
    assert result.tolist() == [dbt_spark_cdc.__version__] * 3
    assert len(_version_series(pd.Series([], dtype="object"))) == 0


def test_udf_names_unique_and_prefixed():
    names = [spec.name for spec in UDFS]
    assert len(names) == len(set(names))
    assert all(name.startswith("spark_cdc_") for name in names)
    assert names == [
        "spark_cdc_crc32c",
        "spark_cdc_decode_connect_decimal",
        "spark_cdc_json_members",
        "spark_cdc_json_canonical",
        "spark_cdc_json_elements",
        "spark_cdc_version",
    ]


def test_udf_docs_name_their_function():
    for spec in UDFS:
        assert spec.doc.startswith(f"{spec.name}("), spec


def test_udf_return_types():
    assert {spec.name: spec.return_type for spec in UDFS} == {
        "spark_cdc_crc32c": "bigint",
        "spark_cdc_decode_connect_decimal": "string",
        "spark_cdc_json_members": "map<string,string>",
        "spark_cdc_json_canonical": "string",
        "spark_cdc_json_elements": "array<string>",
        "spark_cdc_version": "string",
    }


@pytest.mark.parametrize("spec", UDFS, ids=lambda spec: spec.name)
def test_udf_type_hints_resolve_to_scalar_pandas_udfs(spec):
    # What pandas_udf does at registration, minus the JVM: unresolvable or non-Series hints fail here.
    from pyspark.sql.pandas.typehints import infer_eval_type

    try:
        from pyspark.util import PythonEvalType
    except ImportError:  # Spark 3.5 keeps it in pyspark.rdd
        from pyspark.rdd import PythonEvalType  # type: ignore[attr-defined,no-redef]

    hints = typing.get_type_hints(spec.func)
    assert all(hint is pd.Series for hint in hints.values())
    assert infer_eval_type(inspect.signature(spec.func), hints) == PythonEvalType.SQL_SCALAR_PANDAS_UDF
