"""Aurora DSQL end to end through `dbt build`: the AWS corpus, every type, chunk reassembly across
runs, every DSQL reason code, idempotent re-runs."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps

from tests.helpers.corpora.aurora_dsql import TS_NS, big_order, corpus, record
from tests.helpers.landing import DbtProject, build_only, land_messages, qualified
from tests.helpers.results import assert_records_accounted, count

pytestmark = pytest.mark.integration

BUILD = ("build", "--exclude", "udf_smoke_sql", "udf_smoke_python")
# A test that reads one target leaves the other out (build_only); the reason-code test builds both.
TARGETS = ("dsql_types", "order_items")
ORDER_ITEMS_ONLY = build_only(BUILD, TARGETS, "order_items")


def land(
    project: DbtProject, schema: str, messages: list[str], ingested_at: dt.datetime | None = None
) -> None:
    if ingested_at is None:
        land_messages(project.spark, f"{schema}_raw", "aurora_dsql", messages)
        return
    # Landed long ago (a chunk that has waited past incomplete_chunk_max_age_hours).
    name = qualified(f"{schema}_raw", "aurora_dsql")
    last = project.spark.sql(f"select max(`offset`) from {name}").first()[0]
    start = 0 if last is None else int(last) + 1
    rows = [(0, start + i, None, m, ingested_at) for i, m in enumerate(messages)]
    ddl = "`partition` int, `offset` bigint, `key` string, `value` string, `ingested_at` timestamp"
    project.spark.createDataFrame(rows, ddl).write.insertInto(name)


def order_items(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    return project.rows(
        f"select order_id, item_id, quantity, cast(price as string) as price, note"
        f" from `{schema}`.order_items order by order_id, item_id"
    )


def reasons(project: DbtProject, schema: str, model: str) -> Counter[str]:
    return Counter(r["reason_code"] for r in project.rows(f"select reason_code from `{schema}`.{model}"))


def props(project: DbtProject, schema: str, table: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{table}")}


def test_aws_corpus_state_after_each_record_and_rerun_is_a_no_op(project: DbtProject, schema: str) -> None:
    examples = corpus("aws_docs_examples.jsonl")
    expected = [json.loads(line) for line in corpus("expected_intermediate.jsonl")]
    # The setup example (another table) and the chunked skeleton (placeholder ids, never complete)
    # arrive with the first record.
    extra = corpus("aws_docs_setup_example.jsonl") + corpus("aws_docs_chunked_skeleton.jsonl")
    for i, message in enumerate(examples):
        land(project, schema, [message, *(extra if i == 0 else [])])
        project.dbt(*ORDER_ITEMS_ONLY)
        want = [{**row, "note": None} for row in expected[i]["order_items"]]
        assert order_items(project, schema) == want, f"after record {i + 1}"
    final = [json.loads(line) for line in corpus("expected.jsonl")]
    assert order_items(project, schema) == final == []

    changes = project.rows(
        f"select source_table, op, op_raw, key, tx_id, seq, commit_ts, emitted_at"
        f" from `{schema}`.cdc_changes order by seq.s1, source_table"
    )
    assert [(c["source_table"], c["op"], c["op_raw"]) for c in changes] == [
        ("public.order_items", "upsert", "c"),
        ("public.test_cdc", "upsert", "c"),
        ("public.order_items", "update", "u"),
        ("public.order_items", "delete", "d"),
    ]
    assert changes[0]["key"] == '{"item_id":"42","order_id":"1001"}' == changes[3]["key"]
    assert changes[1]["key"] == '{"id":"1"}'
    assert changes[0]["seq"] == {"s1": Decimal(TS_NS), "s2": Decimal(1705318200125483291), "s3": None}
    assert changes[2]["tx_id"] == "qvtiesgmd55cvlfukm3dfuotji"
    assert changes[0]["commit_ts"] < changes[0]["emitted_at"]
    assert reasons(project, schema, "stg_cdc__aurora_dsql") == Counter(
        {None: 4, "chunked_buffered": 1, "fragment_buffered": 1}
    )
    pending = project.rows(
        f"select chunk_id, main_record_received, fragments_received, total_fragments"
        f" from `{schema}`.stg_cdc__aurora_dsql_pending_chunks"
    )
    assert pending == [
        {
            "chunk_id": "{{chunk-id}}",
            "main_record_received": True,
            "fragments_received": 1,
            "total_fragments": 3,
        }
    ]

    staged = count(project, schema, "stg_cdc__aurora_dsql")
    consumed = props(project, schema, "order_items")["spark_cdc.consumed_through"]
    project.dbt(*ORDER_ITEMS_ONLY)
    assert count(project, schema, "stg_cdc__aurora_dsql") == staged == 6
    assert count(project, schema, "stg_cdc__aurora_dsql_reassembled") == 0
    assert props(project, schema, "order_items")["spark_cdc.consumed_through"] == consumed
    assert order_items(project, schema) == []


TYPE_RECORDS = [
    # The examples of the DSQL type-serialisation tables, one column per table row.
    {
        "id": 1,
        "c_smallint": 42,
        "c_integer": 1001,
        "c_bigint": 9223372036854775807,
        "c_oid": 16384,
        "c_real": 3.14159,
        "c_double": 3.141592653589793,
        "c_numeric": "123.45",
        "c_numeric_text": "123.45",
        "c_numeric_double": "123.45",
        "c_boolean": True,
        "c_varchar": "Hello, world!",
        "c_bpchar": "ABC",
        "c_name": "pg_class",
        "c_char": "A",
        "c_bytea": "SGVsbG8gV29ybGQh",
        "c_date": 19797,
        "c_time": 52200123456,
        "c_timetz": 52200123456,
        "c_timestamp": 1710510600123456,
        "c_timestamptz": 1710510600123456,
        "c_interval": 2802603000000,
        "c_interval_us": 2802603000000,
        "c_uuid": "550e8400-e29b-41d4-a716-446655440000",
        "c_oidvector": [],
        "c_json": '{"key": "value"}',
    },
    # Special values: NaN/±Infinity strings, ±infinity sentinels, interval overflow (null), extremes.
    {
        "id": 2,
        "c_smallint": -32768,
        "c_integer": -2147483648,
        "c_bigint": -9223372036854775808,
        "c_oid": 4294967295,
        "c_real": "NaN",
        "c_double": "-Infinity",
        "c_numeric": None,  # "NaN": no Spark decimal (REJECTED below)
        "c_numeric_text": "Infinity",
        "c_numeric_double": "Infinity",
        "c_boolean": False,
        "c_varchar": "Grüße, 世界",
        "c_bpchar": "",
        "c_name": "pg_type",
        "c_char": "z",
        "c_bytea": "",
        "c_date": None,
        "c_time": 0,
        "c_timetz": 86399999999,
        "c_timestamp": None,
        "c_timestamptz": None,
        "c_interval": None,
        "c_interval_us": -2629800000000,
        "c_uuid": "00000000-0000-0000-0000-000000000000",
        "c_oidvector": [],
        "c_json": "[1, 2.5, null]",
    },
    # JSON null in every column but one.
    {"id": 3, "c_real": "Infinity"},
]
#: Values with no Spark value of the column's type: ±infinity date and timestamp sentinels and
#: numeric NaN. Each change is quarantined type_mismatch naming the column, never stored as null.
REJECTED = {
    4: ("c_date", 2147494604),
    5: ("c_timestamp", 9223372036825200000),
    6: ("c_timestamptz", -9223372036832400000),
    7: ("c_numeric", "NaN"),
    8: ("c_date", -2147472691),
    9: ("c_timestamp", -9223372036832400000),
}


def test_every_type_table_row_decodes_to_its_spark_value(project: DbtProject, schema: str) -> None:
    rejected = [{"id": k, column: value} for k, (column, value) in REJECTED.items()]
    records = [*TYPE_RECORDS, *rejected]
    messages = dumps([record("c", "dsql_types", TS_NS + i, after) for i, after in enumerate(records)])
    land(project, schema, messages)
    project.dbt(*build_only(BUILD, TARGETS, "dsql_types"))
    quarantined = project.rows(
        f"select key, reason_code, reason_detail from `{schema}`.dsql_types__cdc_rejected order by key"
    )
    assert [(r["key"], r["reason_code"]) for r in quarantined] == [
        (f'{{"id":"{k}"}}', "type_mismatch") for k in sorted(REJECTED)
    ]
    for r, (column, _) in zip(quarantined, (REJECTED[k] for k in sorted(REJECTED)), strict=True):
        assert f"column {column} (" in r["reason_detail"], r
    rows = project.rows(
        f"select *, unix_micros(c_timestamptz) as tstz_us, cast(c_timestamp as string) as ts_text"
        f" from `{schema}`.dsql_types order by id"
    )
    assert len(rows) == 3
    # The target's own bookkeeping columns (_cdc_seq, _cdc_op, ...) are not decoded values.
    first, special, nulls = ({k: v for k, v in r.items() if not k.startswith("_cdc")} for r in rows)
    assert {k: v for k, v in first.items() if k not in ("c_timestamp", "c_timestamptz")} == {
        "id": 1,
        "c_smallint": 42,
        "c_integer": 1001,
        "c_bigint": 9223372036854775807,
        "c_oid": 16384,
        "c_real": pytest.approx(3.14159, rel=1e-6),
        "c_double": 3.141592653589793,
        "c_numeric": Decimal("123.45"),
        "c_numeric_text": "123.45",
        "c_numeric_double": 123.45,
        "c_boolean": True,
        "c_varchar": "Hello, world!",
        "c_bpchar": "ABC",
        "c_name": "pg_class",
        "c_char": "A",
        "c_bytea": bytearray(b"Hello World!"),
        "c_date": dt.date(2024, 3, 15),
        "c_time": 52200123456,
        "c_timetz": 52200123456,
        "c_interval": dt.timedelta(microseconds=2802603000000),
        "c_interval_us": 2802603000000,
        "c_uuid": "550e8400-e29b-41d4-a716-446655440000",
        "c_oidvector": [],
        "c_json": '{"key": "value"}',
        "tstz_us": 1710510600123456,
        "ts_text": "2024-03-15 13:50:00.123456",
    }
    assert math.isnan(special["c_real"])
    assert special["c_double"] == -math.inf and special["c_numeric_double"] == math.inf
    assert special["c_numeric"] is None and special["c_numeric_text"] == "Infinity"
    assert (special["c_smallint"], special["c_integer"], special["c_bigint"]) == (
        -32768,
        -2147483648,
        -9223372036854775808,
    )
    assert special["c_oid"] == 4294967295 and special["c_boolean"] is False
    assert (special["c_varchar"], special["c_bpchar"], special["c_bytea"]) == ("Grüße, 世界", "", bytearray())
    # The interval overflow null is null; extremes of time are kept.
    assert special["c_interval"] is None and special["c_interval_us"] == -2629800000000
    assert (special["c_time"], special["c_timetz"]) == (0, 86399999999)
    assert special["c_json"] == "[1, 2.5, null]" and special["c_oidvector"] == []
    assert nulls["c_real"] == math.inf
    assert all(v is None for k, v in nulls.items() if k not in ("id", "c_real"))


def test_chunk_over_three_runs_out_of_order_with_redelivery_yields_one_change(
    project: DbtProject, schema: str
) -> None:
    note = "Ünïcødé 😀 " * 40
    main, frags = chunk_record(big_order(TS_NS + 10, 3, note), {"after": "chunk-a"})
    main_text, f0, f1, f2 = dumps([main, *frags])
    # A full record of the same row, older: the reassembled record must win.
    older = dumps([big_order(TS_NS, 1, "small")])[0]

    land(project, schema, [f2, older])
    project.dbt(*ORDER_ITEMS_ONLY)
    assert order_items(project, schema)[0]["quantity"] == 1
    land(project, schema, [f0, main_text, f2])  # fragment 2 redelivered, same data
    project.dbt(*ORDER_ITEMS_ONLY)
    assert order_items(project, schema)[0]["quantity"] == 1
    assert count(project, schema, "stg_cdc__aurora_dsql_reassembled") == 0
    pending = project.rows(f"select * from `{schema}`.stg_cdc__aurora_dsql_pending_chunks")
    assert [(p["chunk_id"], p["fragments_received"], p["total_fragments"]) for p in pending] == [
        ("chunk-a", 2, 3)
    ]
    land(project, schema, [f1])
    project.dbt(*ORDER_ITEMS_ONLY)

    assert order_items(project, schema) == [
        {"order_id": 7, "item_id": 1, "quantity": 3, "price": "10.50", "note": note}
    ]
    emitted = project.rows(f"select * from `{schema}`.stg_cdc__aurora_dsql_reassembled")
    assert len(emitted) == 1
    change = emitted[0]
    assert (change["record_status"], change["op"], change["key"]) == (
        "change",
        "upsert",
        '{"item_id":"1","order_id":"7"}',
    )
    assert change["raw_ref"]["fragment_count"] == 4  # three distinct fragments + the main record
    assert json.loads(change["after"])["note"] == note
    assert count(project, schema, "stg_cdc__aurora_dsql_pending_chunks") == 0
    assert reasons(project, schema, "cdc_skipped") == Counter({"fragment_buffered": 4, "chunked_buffered": 1})
    assert count(project, schema, "cdc_changes") == 2

    staged = count(project, schema, "stg_cdc__aurora_dsql")
    consumed = props(project, schema, "order_items")["spark_cdc.consumed_through"]
    project.dbt(*ORDER_ITEMS_ONLY)
    assert count(project, schema, "stg_cdc__aurora_dsql") == staged == 6
    assert count(project, schema, "stg_cdc__aurora_dsql_reassembled") == 1
    assert props(project, schema, "order_items")["spark_cdc.consumed_through"] == consumed
    assert order_items(project, schema)[0]["quantity"] == 3


def test_every_dsql_reason_code_is_produced_and_good_records_still_apply(
    project: DbtProject, schema: str
) -> None:
    good_main, good_frags = chunk_record(
        record("d", "order_items", TS_NS + 50, None, {"order_id": 8, "item_id": 2}),
        {"before": "chunk-del"},
        fragments=2,
    )
    bad_crc_main, bad_crc_frags = chunk_record(big_order(TS_NS + 20, 5, "x" * 300), {"after": "chunk-crc"})
    bad_crc_main["chunked"]["after"]["crc32c"] = "12345"
    conflict_main, conflict_frags = chunk_record(
        big_order(TS_NS + 30, 6, "y" * 300), {"after": "chunk-conflict"}
    )
    conflicting = {**conflict_frags[1], "data": conflict_frags[1]["data"].upper()}
    late_main, late_frags = chunk_record(big_order(TS_NS + 40, 9, "z" * 300), {"after": "chunk-late"})
    orphan = {"type": "fragment", "chunk_id": "chunk-orphan", "index": 0, "data": "{"}
    fresh = [
        *dumps(
            [
                record(
                    "c", "order_items", TS_NS, {"order_id": 8, "item_id": 2, "quantity": 1, "price": "1.00"}
                ),
                record(
                    "x",
                    "order_items",
                    TS_NS + 1,
                    {"order_id": 9, "item_id": 3, "quantity": 2, "price": "2.00"},
                ),
                good_main,
                *good_frags,
                bad_crc_main,
                *bad_crc_frags,
                conflict_main,
                *conflict_frags,
                conflicting,
                record("c", "order_items", TS_NS + 2, {"order_id": 9, "quantity": 1}),  # no item_id
                record("c", "dsql_types", TS_NS + 3, {"id": 1}, source={"ts_ms": 1}),  # no table, no ts_ns
                record("d", "dsql_types", TS_NS + 4, None, None),  # delete without a before image
                {
                    **record("c", "order_items", TS_NS + 5, {"order_id": 1}),
                    "source": {"table": "order_items"},
                },
                {"type": "fragment", "chunk_id": "c", "index": -1, "data": "x"},
                {"type": "mystery"},
            ]
        ),
        '{"type": "full", "op": "c", "after": {"order_id": 1',  # truncated
        "x" * (16 * 1024 * 1024 + 1),  # over max_payload_bytes
    ]
    land(project, schema, fresh)
    # Incomplete for two days: one fragment of three; a lone fragment no record references.
    land(project, schema, dumps([late_main, late_frags[0], orphan]), dt.datetime(2020, 1, 1))
    project.dbt(*BUILD)

    assert order_items(project, schema) == [
        {"order_id": 9, "item_id": 3, "quantity": 2, "price": "2.00", "note": None}
    ]  # 8/2 inserted then deleted by the reassembled chunked delete; x is an upsert
    assert reasons(project, schema, "cdc_quarantine") == Counter(
        {
            "crc_mismatch": 1,
            "fragment_conflict": 1,
            "incomplete_chunk": 2,
            "missing_key": 2,
            "missing_source_table": 1,
            "missing_sequence": 1,
            "invalid_envelope": 2,
            "malformed_json": 1,
            "payload_too_large": 1,
        }
    )
    assert reasons(project, schema, "cdc_skipped") == Counter(
        {"fragment_buffered": 11, "chunked_buffered": 4}
    )
    details = {
        r["reason_code"]: r
        for r in project.rows(
            f"select * from `{schema}`.cdc_quarantine where reason_code in"
            " ('crc_mismatch', 'fragment_conflict', 'missing_sequence')"
        )
    }
    assert "crc32c 12345" not in details["crc_mismatch"]["reason_detail"]
    assert details["crc_mismatch"]["reason_detail"].endswith("!= declared 12345")
    assert "chunk-conflict: index 1" in details["fragment_conflict"]["reason_detail"]
    assert count(project, schema, "stg_cdc__aurora_dsql") == 25
    assert count(project, schema, "stg_cdc__aurora_dsql_pending_chunks") == 0

    # Re-running quarantines nothing twice and changes nothing.
    result = project.dbt(*BUILD)
    assert sum(reasons(project, schema, "cdc_quarantine").values()) == 12
    assert count(project, schema, "stg_cdc__aurora_dsql_reassembled") == 5
    # Every raw row (fragments, main records, orphans, conflicts) is accounted for in the ledger.
    assert_records_accounted(project, schema, result, ("aurora_dsql",))


def test_columns_added_dropped_and_renamed_mid_stream_do_not_break_the_parse(
    project: DbtProject, schema: str
) -> None:
    key = {"order_id": 5, "item_id": 1}
    land(
        project,
        schema,
        dumps(
            [
                record("c", "order_items", TS_NS, {**key, "quantity": 2, "price": "1.00"}),  # before `note`
                record("u", "order_items", TS_NS + 1, {**key, "quantity": 3, "price": "1.00", "note": "x"}),
            ]
        ),
    )
    project.dbt(*ORDER_ITEMS_ONLY)
    assert order_items(project, schema) == [{**key, "quantity": 3, "price": "1.00", "note": "x"}]

    # `quantity` renamed to `qty` and `price` dropped: full images, so the target's columns the
    # image no longer carries become null; the new name is in the change stream.
    land(project, schema, dumps([record("u", "order_items", TS_NS + 2, {**key, "qty": 4, "note": "gift"})]))
    project.dbt(*ORDER_ITEMS_ONLY)
    assert order_items(project, schema) == [{**key, "quantity": None, "price": None, "note": "gift"}]
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    afters = [json.loads(r["after"]) for r in project.rows(f"select after from `{schema}`.cdc_changes")]
    assert {"order_id": 5, "item_id": 1, "qty": 4, "note": "gift"} in afters
