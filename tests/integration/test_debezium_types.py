"""Debezium logical types through `dbt build`: the inline schema's type hints decide how each image
value becomes the target column's declared Spark type (decode_debezium_value)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages
from tests.helpers.results import assert_records_accounted

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[2] / "integration_tests" / "data" / "debezium_postgres"
# The SCD2 targets have their own modules (test_debezium_scd2.py, test_apply_reference_formats.py).
# Eager test selection: excluding a model excludes its tests (the buildable default of conftest.py
# would still run the SCD2 targets' reconciliation tests, whose parent products is built).
BUILD = (
    "build",
    "--indirect-selection",
    "eager",
    "--exclude",
    "udf_smoke_sql",
    "udf_smoke_python",
    "products_history",
    "products_weight_history",
)


def connect_decimal(unscaled: int) -> str:
    """Kafka Connect Decimal encoding: base64 of the big-endian two's-complement unscaled value."""
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


FIELDS: list[tuple[str, str, str | None, dict[str, str] | None, Any]] = [
    # field, Connect type, logical name, parameters, value in the message
    ("id", "int32", None, None, 1),
    ("d", "int32", "io.debezium.time.Date", None, 19782),
    ("ts_ms", "int64", "io.debezium.time.Timestamp", None, 1709201730123),
    ("ts_us", "int64", "io.debezium.time.MicroTimestamp", None, 1709201730123456),
    ("ts_ns_ntz", "int64", "io.debezium.time.NanoTimestamp", None, 1709201730123456789),
    ("ts_connect", "int64", "org.apache.kafka.connect.data.Timestamp", None, 1709201730123),
    ("zts", "string", "io.debezium.time.ZonedTimestamp", None, "2024-02-29T12:15:30.5+02:00"),
    ("t_ms", "int32", "io.debezium.time.Time", None, 37230123),
    ("t_us", "int64", "io.debezium.time.MicroTime", None, 37230123456),
    ("t_us_micros", "int64", "io.debezium.time.MicroTime", None, 37230123456),
    ("t_ns", "int64", "io.debezium.time.NanoTime", None, 37230123456789),
    ("amount", "bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3"}, connect_decimal(-12345678)),
    (
        "amount_text",
        "bytes",
        "org.apache.kafka.connect.data.Decimal",
        {"scale": "3"},
        connect_decimal(1234567890123456),
    ),
    (
        "var_amount",
        "struct",
        "io.debezium.data.VariableScaleDecimal",
        None,
        {"scale": 4, "value": connect_decimal(123456789)},
    ),
    ("doc", "string", "io.debezium.data.Json", None, '{"a": [1, 2]}'),
    ("payload", "bytes", None, None, base64.b64encode(b"\x00\x01\xfe").decode()),
    ("duration_us", "int64", "io.debezium.time.MicroDuration", None, 90061000001),
    ("flag", "boolean", None, None, True),
    ("ratio", "double", None, None, 0.875),
    ("uid", "string", "io.debezium.data.Uuid", None, "0e1c6a7d-6f5e-4c1b-9a8b-7d6e5f4c3b2a"),
]

EXPECTED = {
    "id": 1,
    "d": "2024-02-29",
    "ts_ms": "2024-02-29 10:15:30.123",
    "ts_us": "2024-02-29 10:15:30.123456",
    "ts_ns_ntz": "2024-02-29 10:15:30.123456",
    "ts_connect": "2024-02-29 10:15:30.123",
    "zts": "2024-02-29 10:15:30.5",
    "t_ms": "10:20:30.123000",
    "t_us": "10:20:30.123456",
    "t_us_micros": "37230123456",
    "t_ns": "10:20:30.123456",
    "amount": "-12345.678",
    "amount_text": "1234567890123.456",
    "var_amount": "12345.6789",
    "doc": '{"a": [1, 2]}',
    "payload": "0001FE",
    "duration_us": "90061000001",
    "flag": "true",
    "ratio": "0.875",
    "uid": "0e1c6a7d-6f5e-4c1b-9a8b-7d6e5f4c3b2a",
}


def all_types_message(op: str, lsn: int, values: dict[str, Any]) -> str:
    fields = []
    for name, connect_type, logical, params, _ in FIELDS:
        field: dict[str, Any] = {"type": connect_type, "optional": name != "id", "field": name}
        if logical:
            field["name"] = logical
        if params:
            field["parameters"] = params
        fields.append(field)
    row_schema = {"type": "struct", "fields": fields, "optional": True}
    return json.dumps(
        {
            "schema": {
                "type": "struct",
                "fields": [{**row_schema, "field": "before"}, {**row_schema, "field": "after"}],
            },
            "payload": {
                "before": None,
                "after": values,
                "source": {"schema": "public", "table": "all_types", "lsn": lsn, "ts_ms": 1709201730000},
                "op": op,
                "ts_ms": 1709201730100,
            },
        }
    )


def all_types_rows(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    columns = ", ".join(
        f"hex({name}) as {name}" if name == "payload" else f"cast({name} as string) as {name}"
        for name in EXPECTED
    )
    return project.rows(f"select {columns} from `{schema}`.debezium_all_types order by id")


def test_every_logical_type_decodes_to_the_declared_type(project: DbtProject, schema: str) -> None:
    values = {name: value for name, _, _, _, value in FIELDS}
    land_messages(project.spark, f"{schema}_raw", "debezium", [all_types_message("c", 100, values)])
    project.dbt(*BUILD)
    assert all_types_rows(project, schema) == [
        {k: (str(v) if k != "id" else "1") for k, v in EXPECTED.items()}
    ]

    # A later partial-free update of one column re-decodes nothing else wrongly, and a no-op re-run
    # keeps every typed value (the key column included) as it was.
    values["ratio"] = 1.5
    land_messages(project.spark, f"{schema}_raw", "debezium", [all_types_message("u", 200, values)])
    project.dbt(*BUILD)
    result = project.dbt(*BUILD)
    assert_records_accounted(project, schema, result, ("debezium",))
    expected = {**{k: str(v) for k, v in EXPECTED.items()}, "ratio": "1.5"}
    assert all_types_rows(project, schema) == [expected]


def test_decimal_and_micro_timestamp_corpus(project: DbtProject, schema: str) -> None:
    """The Debezium 2.5 walkthrough corpus: Connect Decimal prices and MicroTimestamp dates."""
    corpus = DATA / "readme_orders_decimal"
    messages = read_jsonl_messages(str(corpus / "envelope_with_schema.jsonl"))
    land_messages(project.spark, f"{schema}_raw", "debezium", messages)
    project.dbt(*BUILD)
    expected = {
        r["order_id"]: r
        for r in (
            json.loads(line) for line in read_jsonl_messages(str(corpus / "expected_decoded_derived.jsonl"))
        )
    }
    rows = project.rows(
        "select order_id, customer_name, product, quantity, cast(price as string) as price,"
        " date_format(order_date, \"yyyy-MM-dd'T'HH:mm:ss.SSSSSS\") as order_date_utc, status"
        f" from `{schema}`.orders order by order_id"
    )
    assert rows == [expected[i] for i in (1, 2, 7, 8)]
    assert project.rows(f"select count(*) as n from `{schema}`.cdc_quarantine") == [{"n": 0}]
