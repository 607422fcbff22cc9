"""YDB changefeeds end to end through `dbt build`: the upstream corpus (every scenario's final table),
JSON and Debezium-compatible modes, positional composite keys, partial updates, virtual-timestamp
order, YDB type decoding, bad records and idempotent re-runs."""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.corpora.ydb import DATA, SCENARIOS, jsonl, synthetic_tx, unwildcard
from tests.helpers.landing import DbtProject, RawMessage, land_messages
from tests.helpers.results import assert_records_accounted

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BUILD = ("build", "--exclude", "udf_smoke_sql", "udf_smoke_python")

DOCS_PARTITION = 15
#: Streams that cannot carry the new values (the table state in expected.jsonl is derived from the
#: test's SQL): only the key set is reconstructible, values stay null.
KEYS_ONLY_STREAMS = {"KeysOnlyLog", "UuidExchange", "KeysOnlyLogDebezium", "OldImageLogDebezium"}


def spark_cdc_vars(
    *, source_table: str | None = None, max_payload_bytes: int | None = None, conformance: bool = False
) -> str:
    """--vars for dbt: the project's spark_cdc var with YDB settings replaced (CLI vars replace a
    whole top-level var, so the project's value is the starting point)."""
    project_vars = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]
    cfg = copy.deepcopy(project_vars["spark_cdc"])
    if source_table is not None:
        cfg["formats"]["ydb"]["source_table"] = source_table
    if max_payload_bytes is not None:
        cfg["max_payload_bytes"] = max_payload_bytes
    return json.dumps({"spark_cdc": cfg, "spark_cdc_ydb_conformance": conformance})


def reasons(project: DbtProject, schema: str, model: str) -> Counter[str]:
    return Counter(r["reason_code"] for r in project.rows(f"select reason_code from `{schema}`.{model}"))


def table(project: DbtProject, schema: str, model: str, *, bookkeeping: bool = False) -> list[dict[str, Any]]:
    """The target's rows; without the _cdc_* bookkeeping columns unless asked for."""
    rows = project.rows(f"select * from `{schema}`.{model} order by 1")
    return [{c: v for c, v in r.items() if bookkeeping or not c.startswith("_cdc")} for r in rows]


def props(project: DbtProject, schema: str, model: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{model}")}


def land_corpus(project: DbtProject, schema: str) -> None:
    by_scenario: dict[str, list[RawMessage]] = defaultdict(list)
    for record in jsonl("changefeed_ut.jsonl") + jsonl("table_writer_inputs.jsonl"):
        n = record.get("seq", record.get("order"))
        key = record.get("kafka_key_meta__key")
        value = json.dumps(unwildcard(record["message"], int(n), SCENARIOS[record["source_test"]][0]))
        by_scenario[record["source_test"]].append(RawMessage(value, json.dumps(key) if key else None))
    assert set(by_scenario) == set(SCENARIOS)
    for name, messages in by_scenario.items():
        land_messages(project.spark, f"{schema}_raw", "ydb", messages, partition=SCENARIOS[name][0])
    docs = [RawMessage(line) for line in (DATA / "docs_examples.jsonl").read_text().splitlines()]
    land_messages(project.spark, f"{schema}_raw", "ydb", docs, partition=DOCS_PARTITION)


def expected_state(record: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for row in record["final_table_state"]:
        if record["source_test"] in KEYS_ONLY_STREAMS or record["source_test"] == "VirtualTimestamps":
            row = {**row, "value": None}
        if isinstance(row.get("value"), str):  # NaN / +Infinity / -Infinity
            row = {**row, "value": float(row["value"].replace("Infinity", "inf"))}
        rows.append(row)
    return sorted(rows, key=lambda r: str(r["key"]))


def same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(actual, float) and math.isnan(actual)
    if isinstance(expected, float) and actual is not None:
        return bool(actual == pytest.approx(expected, rel=1e-6))
    return bool(actual == expected)


def test_corpus_scenarios_reach_their_final_tables_and_rerun_changes_nothing(
    project: DbtProject, schema: str
) -> None:
    land_corpus(project, schema)
    conformance = ("--vars", spark_cdc_vars(source_table="/Root/Table", conformance=True))
    project.dbt(*BUILD, *conformance)

    # Every scenario of expected.jsonl (the final table its test's SQL leaves).
    for record in jsonl("expected.jsonl"):
        model = SCENARIOS[record["source_test"]][1]
        actual = sorted(table(project, schema, model), key=lambda r: str(r["key"]))
        expected = expected_state(record)
        assert [sorted(r) for r in actual] == [sorted(r) for r in expected], model
        for got, want in zip(actual, expected, strict=True):
            assert all(same(got[c], want[c]) for c in want), (model, got, want)

    assert_supported_types_decoded(project, schema)

    # Debezium-compatible mode: c -> insert; u -> update with a before image, else upsert.
    ops = project.rows(
        f"select raw_ref.partition as p, op, count(*) as n from `{schema}`.cdc_changes group by 1, 2"
    )
    counts = {(r["p"], r["op"]): r["n"] for r in ops}
    assert counts[("10", "insert")] == 3 and counts[("10", "update")] == 3 and counts[("10", "delete")] == 1
    assert counts[("12", "upsert")] == 6 and counts[("0", "upsert")] == 3 and counts[("3", "update")] == 3

    # UPDATES mode is partial: present_columns = the written columns plus the key.
    partial = project.rows(
        f"select present_columns, changed_columns from `{schema}`.cdc_changes"
        " where raw_ref.partition = '7' order by raw_ref.order"
    )
    assert partial == [
        {"present_columns": ["key", "value"], "changed_columns": ["value"]},
        {"present_columns": ["extra", "key", "value"], "changed_columns": ["extra", "value"]},
    ]

    # Virtual timestamps are the sequence (and the commit time: step is coordinator time in ms).
    vt = project.rows(
        f"select seq, tx_id, commit_ts from `{schema}`.cdc_changes where raw_ref.partition = '4'"
        " order by raw_ref.order"
    )
    assert [(int(r["seq"]["s1"]), int(r["seq"]["s2"]), r["seq"]["s3"]) for r in vt] == [
        (1_700_000_000_000 + n, synthetic_tx(4, n), None) for n in range(3)
    ]
    assert vt[0]["tx_id"] == str(synthetic_tx(4, 0))
    assert vt[0]["commit_ts"] == dt.datetime(2023, 11, 14, 22, 13, 20)
    # Without them, only the raw order within the partition is known.
    no_vt = project.rows(f"select seq from `{schema}`.cdc_changes where raw_ref.partition = '0'")
    assert all(r["seq"]["s1"] is None and r["seq"]["s3"] is not None for r in no_vt)
    # ConsistentWrite: ts 13 arrives after 21, still ordered by ts.
    consistent = project.rows(
        f"select seq.s1 as step from `{schema}`.cdc_changes where raw_ref.partition = '14' order by seq"
    )
    assert [int(r["step"]) for r in consistent] == [1, 2, 3, 11, 12, 13, 21, 22, 23]

    # The docs examples: composite keys of other tables do not fit /Root/Table's one-column key.
    assert reasons(project, schema, "cdc_quarantine") == Counter({"missing_key": 3})
    assert reasons(project, schema, "cdc_skipped") == Counter({"resolved": 3})
    detail = project.rows(
        f"select reason_detail from `{schema}`.cdc_quarantine order by raw_ref.order limit 1"
    )[0]["reason_detail"]
    assert detail == "key has 2 components; primary_key of /Root/Table declares 1"
    staged = project.rows(f"select count(*) as n from `{schema}`.stg_cdc__ydb")[0]["n"]
    assert staged == 57 + 42 + 5

    # Re-running with no new raw rows changes nothing.
    before = {
        m: (props(project, schema, m), table(project, schema, m, bookkeeping=True))
        for _, m in SCENARIOS.values()
    }
    result = project.dbt(*BUILD, *conformance)
    # Every raw record of the corpus is accounted for.
    assert_records_accounted(project, schema, result, ("ydb",))
    after = {
        m: (props(project, schema, m), table(project, schema, m, bookkeeping=True))
        for _, m in SCENARIOS.values()
    }
    for model, (old_props, old_rows) in before.items():
        new_props, new_rows = after[model]
        assert new_props["spark_cdc.consumed_through"] == old_props["spark_cdc.consumed_through"], model
        assert new_props["spark_cdc.version"] == old_props["spark_cdc.version"], model
        assert repr(new_rows) == repr(old_rows), model
    assert project.rows(f"select count(*) as n from `{schema}`.stg_cdc__ydb")[0]["n"] == staged


def assert_supported_types_decoded(project: DbtProject, schema: str) -> None:
    """table_writer_ut SupportedTypes: one record per YDB type, each decoded to its declared type."""
    rows = table(project, schema, "ydb_cf_supported_types")
    assert [r["key"] for r in rows] == list(range(1, 32))
    values = {r["key"]: {c: v for c, v in r.items() if c != "key" and v is not None} for r in rows}
    expected: dict[int, dict[str, Any]] = {
        1: {"int32_value": -100500},
        2: {"uint32_value": 100500},
        3: {"int64_value": -200500},
        4: {"uint64_value": Decimal(200500)},
        5: {"uint8_value": 255},
        6: {"bool_value": True},
        7: {"double_value": 1.1234},
        9: {"date_value": dt.date(2020, 8, 12)},
        10: {"datetime_value": dt.datetime(2020, 8, 12, 12, 34, 56)},
        11: {"timestamp_value": dt.datetime(2020, 8, 12, 12, 34, 56, 123456)},
        12: {"interval_value": -300500},
        13: {"decimal_value": Decimal("3.321000000")},
        14: {"dynumber_value": Decimal("3.3210")},
        15: {"string_value": bytearray(b"lorem ipsum")},
        16: {"utf8_value": "lorem ipsum"},
        17: {"json_value": '{"key":"value"}'},
        18: {"jsondoc_value": '{"key":"value"}'},
        19: {"uuid_value": "65df1ec1-a97d-47b2-ae56-3c023da6ee8c"},
        20: {"date32_value": dt.date(2020, 8, 12)},
        21: {"datetime64_value": dt.datetime(2020, 8, 12, 12, 34, 56)},
        22: {"timestamp64_value": dt.datetime(2020, 8, 12, 12, 34, 56, 123456)},
        23: {"interval64_value": -300500},
        24: {"pgint2_value": -42},
        25: {"pgint4_value": -420},
        26: {"pgint8_value": -4200},
        28: {"pgfloat8_value": 2.718},
        29: {"pgbytea_value": bytearray(b'lorem "ipsum"')},
        30: {"pgtext_value": 'lorem "ipsum"'},
        31: {"decimal35_value": Decimal("355555555555555.3210000000")},
    }
    for key, want in expected.items():
        assert values[key] == want, key
    assert values[8]["float_value"] == pytest.approx(-1.123, rel=1e-6)
    assert values[27]["pgfloat4_value"] == pytest.approx(3.1415, rel=1e-6)


def orders_json(key: list[Any], ts: tuple[int, int] | None = None, **fields: Any) -> str:
    message: dict[str, Any] = {"key": key, **fields}
    if ts:
        message["ts"] = list(ts)
    return json.dumps(message)


def orders(project: DbtProject, schema: str) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["shop"], int(r["order_id"])): r for r in table(project, schema, "ydb_orders")}


BIG = 18446744073709551615  # Uint64 max


def test_json_mode_positional_composite_key_partial_updates_and_order(
    project: DbtProject, schema: str
) -> None:
    first = [
        orders_json(
            ["s1", BIG],
            (1_700_000_000_000, 10),
            update={
                "status": "new",
                "amount": "10.50",
                "created": "2024-01-02T03:04:05.123456Z",
                "paid_at": None,
                "ship_day": 19725,
                "note": "bG9yZW0gaXBzdW0=",
                "attrs": {"gift": True, "tags": ["a"]},
            },
        ),
        # Uint64 sent as a string: the same key as the number.
        orders_json(["s2", "7"], (1_700_000_000_050, 3), update={"status": "new"}),
        # A later change landed before an earlier one: virtual timestamps decide.
        orders_json(["s3", 1], (1_700_000_000_300, 20), update={"status": "shipped"}),
        orders_json(["s3", 1], (1_700_000_000_250, 19), update={"status": "new", "amount": "1"}),
        # REPLACE (reset) is a full image: columns it does not carry become null.
        orders_json(["s4", 2], (1_700_000_000_400, 30), update={"status": "x", "amount": "5"}),
        orders_json(["s4", 2], (1_700_000_000_500, 31), reset={"status": "replaced"}),
        # NEW_AND_OLD_IMAGES: full images; the key columns are not in them.
        orders_json(
            ["s5", 3],
            (1_700_000_000_600, 40),
            update={},
            newImage={"status": "img", "amount": "2.5", "created": "garbage", "ship_day": 99999999},
            oldImage={"status": "old"},
        ),
    ]
    land_messages(project.spark, f"{schema}_raw", "ydb", first, partition=0)
    project.dbt(*BUILD)
    second = [
        # Partial update: only status and paid_at are written; the rest keeps its value.
        orders_json(["s1", BIG], (1_700_000_000_100, 11), update={"status": "paid", "paid_at": 1704164645}),
        orders_json(["s2", 7], (1_700_000_000_200, 4), erase={}),
        # Older than the applied ts of s3/1: stale, ignored.
        orders_json(["s3", 1], (1_700_000_000_280, 5), update={"status": "stale"}),
    ]
    land_messages(project.spark, f"{schema}_raw", "ydb", second, partition=1)
    project.dbt(*BUILD)

    state = orders(project, schema)
    # s5's image carries values its columns cannot hold ("garbage" as a timestamp, day 99999999):
    # the change is quarantined (type_mismatch, naming each column) instead of storing nulls.
    assert set(state) == {("s1", BIG), ("s3", 1), ("s4", 2)}
    assert state[("s1", BIG)] == {
        "shop": "s1",
        "order_id": Decimal(BIG),
        "status": "paid",
        "amount": Decimal("10.500000000"),
        "created": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
        "paid_at": dt.datetime(2024, 1, 2, 3, 4, 5),
        "ship_day": dt.date(2024, 1, 3),
        "note": "lorem ipsum",
        "attrs": '{"gift":true,"tags":["a"]}',
    }
    assert (state[("s3", 1)]["status"], state[("s3", 1)]["amount"]) == ("shipped", Decimal(1))
    assert (state[("s4", 2)]["status"], state[("s4", 2)]["amount"]) == ("replaced", None)
    rejected = project.rows(f"select reason_code, reason_detail from `{schema}`.cdc_quarantine")
    assert sorted(r["reason_code"] for r in rejected) == ["type_mismatch", "type_mismatch"]
    assert sorted(r["reason_detail"].split(":")[1].strip() for r in rejected) == [
        "column created (timestamp)",
        "column ship_day (date)",
    ]

    changes = project.rows(
        f"select key, op, op_raw, present_columns, changed_columns, before, tx_id from `{schema}`.cdc_changes"
        " where tx_id in ('11', '31', '40', '4')"
        " order by tx_id"
    )
    by_tx = {r["tx_id"]: r for r in changes}
    assert by_tx["11"]["key"] == json.dumps({"order_id": str(BIG), "shop": "s1"}, separators=(",", ":"))
    assert by_tx["11"]["op"] == "upsert"
    assert by_tx["11"]["present_columns"] == ["order_id", "paid_at", "shop", "status"]
    assert by_tx["11"]["changed_columns"] == ["paid_at", "status"]
    assert (by_tx["31"]["op_raw"], by_tx["31"]["present_columns"]) == ("reset", None)
    assert (by_tx["40"]["op"], by_tx["40"]["changed_columns"]) == ("update", None)
    # Images keep each value's JSON type, key components included (the canonical key spells them as text).
    assert json.loads(by_tx["40"]["before"]) == {"shop": "s5", "order_id": 3, "status": "old"}
    assert (by_tx["4"]["op"], json.loads(by_tx["4"]["before"])) == ("delete", {"shop": "s2", "order_id": 7})


def debezium(op: str, step: int, after: dict[str, Any] | None = None, **extra: Any) -> str:
    payload: dict[str, Any] = {
        "op": op,
        "source": {
            "connector": "ydb",
            "version": "1.0.0",
            "step": step,
            "txId": 1,
            "ts_ms": step,
            "snapshot": extra.pop("snapshot", False),
        },
    }
    if after is not None:
        payload["after"] = after
    payload.update(extra)
    return json.dumps({"payload": payload})


def test_debezium_mode_keys_from_message_key_snapshot_and_keys_only(project: DbtProject, schema: str) -> None:
    key = json.dumps({"payload": {"shop": "d1", "order_id": 5}})
    messages = [
        RawMessage(
            debezium("r", 100, {"shop": "d1", "order_id": 5, "status": "scanned"}, snapshot=True), key
        ),
        # KEYS_ONLY / OLD_IMAGE updates carry no new values: the row exists, its values are kept.
        RawMessage(debezium("u", 200), key),
        RawMessage(debezium("u", 300, before={"shop": "d1", "order_id": 5, "status": "scanned"}), key),
        RawMessage(debezium("c", 400, {"shop": "d2", "order_id": 6, "status": "new"})),
        RawMessage(debezium("d", 500), json.dumps({"payload": {"shop": "d2", "order_id": 6}})),
    ]
    land_messages(project.spark, f"{schema}_raw", "ydb", messages)
    project.dbt(*BUILD)

    assert {k: r["status"] for k, r in orders(project, schema).items()} == {("d1", 5): "scanned"}
    changes = project.rows(
        f"select op, is_snapshot, present_columns, commit_ts from `{schema}`.cdc_changes"
        " order by raw_ref.order"
    )
    assert [(r["op"], r["is_snapshot"]) for r in changes] == [
        ("snapshot", True),
        ("upsert", False),
        ("update", False),
        ("insert", False),
        ("delete", False),
    ]
    assert changes[1]["present_columns"] == ["order_id", "shop"]
    assert changes[0]["present_columns"] is None
    assert changes[0]["commit_ts"] == dt.datetime(1970, 1, 1, 0, 0, 0, 100000)
    assert reasons(project, schema, "cdc_quarantine") == Counter()


def test_bad_records_are_quarantined_or_skipped_and_the_run_goes_on(project: DbtProject, schema: str) -> None:
    good = orders_json(["ok", 1], (10, 1), update={"status": "fine"})
    bad: list[RawMessage | str | None] = [
        '{"key":["s1",1],"update":{"status"',  # truncated
        None,  # no value
        orders_json(["s1", 1], update={"note": "x" * 600}),  # over max_payload_bytes (512 here)
        orders_json(["s1", 1], update={}, erase={}),  # two operation flags
        orders_json(["s1", 1]),  # no operation flag
        json.dumps({"payload": {"op": "x", "source": {"step": 1, "txId": 1}}}),
        json.dumps({"key": "s1", "update": {}}),  # key is not an array
        orders_json(["s1", 1], (10, 1), update={}).replace("[10, 1]", "[10]"),  # ts is not [step, txId]
        orders_json(["s1"], update={}),  # one key component, two declared
        orders_json(["s1", None], update={}),  # null key component
        json.dumps({"payload": {"op": "u", "source": {"step": 1, "txId": 1}}}),  # no key anywhere
        json.dumps({"resolved": [20, 0]}),
    ]
    land_messages(project.spark, f"{schema}_raw", "ydb", [good, *bad])
    # A raw row without an order value and without a virtual timestamp cannot be ordered.
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

    unordered = project.spark.createDataFrame(
        [(0, None, None, orders_json(["s9", 9], update={"status": "?"}), dt.datetime(2024, 1, 1))],
        StructType(
            [
                StructField("partition", IntegerType()),
                StructField("offset", LongType()),
                StructField("key", StringType()),
                StructField("value", StringType()),
                StructField("ingested_at", TimestampType()),
            ]
        ),
    )
    unordered.write.insertInto(f"`{schema}_raw`.`ydb`")
    vars_ = ("--vars", spark_cdc_vars(max_payload_bytes=512))
    project.dbt(*BUILD, *vars_)

    assert {k: r["status"] for k, r in orders(project, schema).items()} == {("ok", 1): "fine"}
    assert reasons(project, schema, "cdc_quarantine") == Counter(
        {
            "malformed_json": 2,
            "payload_too_large": 1,
            "invalid_envelope": 3,
            "unknown_op": 2,
            "missing_key": 3,
            "missing_sequence": 1,
        }
    )
    assert reasons(project, schema, "cdc_skipped") == Counter({"resolved": 1})
    staged = project.rows(f"select count(*) as n from `{schema}`.stg_cdc__ydb")[0]["n"]
    assert staged == 1 + len(bad) + 1
    quarantined = project.rows(
        f"select reason_code, reason_detail, raw_value, source_table from `{schema}`.cdc_quarantine"
    )
    assert all(q["source_table"] == "/Root/shop/orders" for q in quarantined)
    details = {q["reason_detail"] for q in quarantined}
    assert "more than one of update, reset, erase" in details
    assert "ts, step or txId is not a number pair" in details
    assert "key has 1 components; primary_key of /Root/shop/orders declares 2" in details
    assert all(q["raw_value"] for q in quarantined if q["reason_code"] != "malformed_json")

    # Re-running stages nothing new (the unordered row is recognised by its content).
    project.dbt(*BUILD, *vars_)
    assert project.rows(f"select count(*) as n from `{schema}`.stg_cdc__ydb")[0]["n"] == staged


def test_missing_source_table_is_a_compile_error_naming_the_fix(project: DbtProject, schema: str) -> None:
    result = project.dbt(
        "compile", "--select", "stg_cdc__ydb", "--vars", spark_cdc_vars(source_table=""), expect_success=False
    )
    outcome = result.result
    nodes = getattr(outcome, "results", None) or []
    message = " ".join([str(result.exception), *(str(r.message) for r in nodes)])
    assert "formats.ydb.source_table is not set" in message
    assert "stg_cdc__ydb" in message
    assert "primary_key" in message
