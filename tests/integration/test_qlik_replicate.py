"""Qlik Replicate (Kafka target, JSON) end to end through `dbt build`.

Expected outcomes are derived by hand from the messages (the corpus states none): masks decoded per
the Qlik spec (hex, little-endian, bit 0 = ordinal 1), ordinals from each metadata message.
Messages built in code with dbt_spark_cdc.qlik_replicate are hand-made and say so.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from dbt_spark_cdc.qlik_replicate import QlikColumn, data_message, decode_mask, encode_mask, metadata_message

from tests.helpers.corpora.qlik_replicate import corpus, named_corpus
from tests.helpers.landing import DbtProject, build_only, land_messages
from tests.helpers.results import assert_records_accounted

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BUILD = ("build", "--exclude", "udf_smoke_sql", "udf_smoke_python")
# A test builds the targets it reads (build_only); the corpus and reason-code tests build them all.
TARGETS = ("qlik_types", "salaries", "salaries_history")
FMT = "qlik_replicate"

SALARIES = [
    QlikColumn("emp_no", "INT4", 1),
    QlikColumn("salary", "INT4"),
    QlikColumn("from_date", "DATE", 2),
    QlikColumn("to_date", "DATE"),
]


@pytest.fixture(autouse=True)
def only_qlik(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build this format's models only (integration_tests/macros/spark_cdc_overrides.sql)."""
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", FMT)


def vars_with(**qlik_options: Any) -> str:
    """--vars for the integration project with options of the qlik_replicate format replaced."""
    project = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())
    spark_cdc = project["vars"]["spark_cdc"]
    top = {k: qlik_options.pop(k) for k in list(qlik_options) if k == "max_payload_bytes"}
    spark_cdc.update(top)
    spark_cdc["formats"][FMT].update(qlik_options)
    return json.dumps({"spark_cdc": spark_cdc})


def staged(project: DbtProject, schema: str, model: str = "stg_cdc__qlik_replicate") -> list[dict[str, Any]]:
    return project.rows(f"select * from `{schema}`.{model} order by raw_ref.partition, raw_ref.order")


def reasons(project: DbtProject, schema: str, model: str) -> Counter[str]:
    return Counter(r["reason_code"] for r in project.rows(f"select reason_code from `{schema}`.{model}"))


def salaries(project: DbtProject, schema: str) -> list[tuple[Any, ...]]:
    rows = project.rows(f"select * from `{schema}`.salaries order by emp_no, from_date")
    return [(r["emp_no"], r["salary"], str(r["from_date"]), str(r["to_date"])) for r in rows]


def test_corpus_metadata_refresh_and_masks_with_late_metadata(project: DbtProject, schema: str) -> None:
    raw = f"{schema}_raw"
    # Real messages 3-5 come from three unknown tables; the per-table topic is stood in for by the
    # message-level table name. They land before their metadata (hand-made, named_corpus).
    named, hand_made_md = named_corpus()
    land_messages(project.spark, raw, FMT, named)
    project.dbt(*BUILD)

    rows = staged(project, schema)
    assert [(r["record_status"], r["reason_code"]) for r in rows] == [
        ("skipped", "metadata"),
        ("change", None),
        ("quarantined", "missing_metadata"),
        ("quarantined", "missing_metadata"),
        ("quarantined", "missing_metadata"),
    ]
    assert reasons(project, schema, "cdc_quarantine") == Counter({"missing_metadata": 3})
    registry = project.rows(f"select * from `{schema}`.stg_cdc__qlik_replicate_metadata")
    assert len(registry) == 1
    assert registry[0]["source_table"] == "employees.salaries"
    assert registry[0]["table_version"] == 1
    assert registry[0]["schema_id"] == "94345778F0A920B9F6634C541177EBB2"
    assert [
        (c["ordinal"], c["name"], c["type"], c["primary_key_position"]) for c in registry[0]["columns"]
    ] == [
        (1, "emp_no", "INT4", 1),
        (2, "salary", "INT4", 0),
        (3, "from_date", "DATE", 2),
        (4, "to_date", "DATE", 0),
    ]
    assert registry[0]["primary_key"] == ["emp_no", "from_date"]
    assert json.loads(registry[0]["data_schema"])["name"] == "DataRecord"

    snap = rows[1]
    assert snap["source_table"] == "employees.salaries"
    assert (snap["op"], snap["op_raw"], snap["is_snapshot"]) == ("snapshot", "REFRESH", True)
    assert snap["key"] == '{"emp_no":"14472","from_date":"1993-11-25"}'
    assert json.loads(snap["after"]) == {
        "emp_no": 14472,
        "salary": 49592,
        "from_date": "1993-11-25",
        "to_date": "1994-11-25",
    }
    assert snap["present_columns"] is None and snap["changed_columns"] is None
    assert snap["seq"] == {"s1": 0, "s2": 0, "s3": 1}
    assert snap["tx_id"] is None and snap["commit_ts"] is None
    assert json.loads(snap["type_hints"]["from_date"])["type"] == "DATE"
    assert salaries(project, schema) == [(14472, 49592, "1993-11-25", "1994-11-25")]

    # The metadata arrives a run later: the quarantined records are emitted as changes, once.
    land_messages(project.spark, raw, FMT, hand_made_md)
    project.dbt(*BUILD)
    retried = {r["source_table"]: r for r in staged(project, schema, "stg_cdc__qlik_replicate_retried")}
    assert set(retried) == {"KAFKA.KIT", "SALES.CUSTOMER", "ISERIES.ITEM"}
    assert all(r["record_status"] == "change" and r["op"] == "update" for r in retried.values())
    # Resolved: out of the quarantine, into the change stream (the staging model keeps its record).
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    assert {
        c["source_table"] for c in project.rows(f"select source_table from `{schema}`.cdc_changes")
    } >= set(retried)

    kit_change = retried["KAFKA.KIT"]  # changeMask 02 -> ordinal 2; columnMask 07 -> all three columns
    assert kit_change["key"] == '{"ID":"2"}'
    assert kit_change["changed_columns"] == ["NAME"]
    assert kit_change["present_columns"] is None
    assert json.loads(kit_change["before"])["NAME"] == "ok"
    assert kit_change["seq"] == {"s1": Decimal("20230911032325000000000000000000005"), "s2": 1, "s3": None}
    assert kit_change["tx_id"] == "00000000000000000000000000060008"
    assert str(kit_change["commit_ts"]) == "2023-09-11 03:23:25"

    customer_change = retried["SALES.CUSTOMER"]  # changeMask 00; columnMask 05 -> ordinals 1 and 3
    assert customer_change["changed_columns"] == []
    assert customer_change["present_columns"] == ["CUSTOMER_ID", "LAST_NAME"]

    item_change = retried["ISERIES.ITEM"]  # changeMask 008080 -> ordinals 8, 16; columnMask 00FFFF -> 1..16
    assert item_change["changed_columns"] == ["item_desc", "load_date_time"]
    assert item_change["present_columns"] is None
    assert item_change["key"] == '{"item_no":"AAL614"}'

    # Re-running with nothing new changes nothing.
    counts = {
        m: len(staged(project, schema, m))
        for m in ("stg_cdc__qlik_replicate", "stg_cdc__qlik_replicate_retried")
    }
    result = project.dbt(*BUILD)
    # Every raw message is accounted for, the late-metadata ones through the retried model.
    assert_records_accounted(project, schema, result, ("qlik_replicate",))
    assert (
        {m: len(staged(project, schema, m)) for m in counts}
        == counts
        == {
            "stg_cdc__qlik_replicate": 8,
            "stg_cdc__qlik_replicate_retried": 3,
        }
    )
    assert len(project.rows(f"select * from `{schema}`.stg_cdc__qlik_replicate_metadata")) == 4


def salary_change(
    op: str,
    seq: int,
    row: dict[str, Any] | None,
    *,
    before: dict[str, Any] | None = None,
    changed: list[int] | None = None,
    present: list[int] | None = None,
    counter: int = 1,
) -> str:
    """A hand-made employees.salaries data message (table from the configured source_table)."""
    return data_message(
        op,
        row,
        before=before,
        change_sequence=f"2024010100000000000000000{seq:010d}",
        event_counter=counter,
        change_mask=encode_mask(changed if changed is not None else [1, 2, 3, 4]),
        column_mask=encode_mask(present if present is not None else [1, 2, 3, 4]),
    )


def row(emp_no: int, salary: int | None, from_date: str, to_date: str | None) -> dict[str, Any]:
    return {"emp_no": emp_no, "salary": salary, "from_date": from_date, "to_date": to_date}


def test_refresh_then_changes_in_any_order_and_rerun_is_a_no_op(project: DbtProject, schema: str) -> None:
    md, refresh = corpus()[:2]
    raw = f"{schema}_raw"
    changes = [
        # Hand-made. 14472 gets a raise; a second update of the same transaction raises again.
        salary_change(
            "UPDATE",
            10,
            row(14472, 50000, "1993-11-25", "1994-11-25"),
            changed=[2],
            before=row(14472, 49592, "1993-11-25", "1994-11-25"),
        ),
        salary_change("UPDATE", 10, row(14472, 51000, "1993-11-25", "1994-11-25"), changed=[2], counter=2),
        # A partial image: columnMask lacks to_date (ordinal 4), so its null is "not present".
        salary_change("UPDATE", 11, row(14472, 52000, "1993-11-25", None), changed=[2], present=[1, 2, 3]),
        salary_change("INSERT", 12, row(20001, 60000, "2000-01-01", "9999-01-01")),
        salary_change("INSERT", 13, row(20002, 61000, "2000-01-01", "9999-01-01")),
        salary_change("INSERT", 14, row(20003, 62000, "2000-01-01", "9999-01-01")),
        # DELETE with the row in data (beforeData null) and with the row in beforeData (data null).
        salary_change("DELETE", 15, row(20001, 60000, "2000-01-01", "9999-01-01"), changed=[1, 3]),
        salary_change(
            "DELETE", 16, None, before=row(20002, 61000, "2000-01-01", "9999-01-01"), changed=[1, 3]
        ),
    ]
    random.Random(2002).shuffle(changes)
    # Full load first (metadata, then the REFRESH row), then the changes in two shuffled batches; a
    # REFRESH row of 20003 delivered late never overrides its change (full load precedes every change).
    late_refresh = data_message("REFRESH", row(20003, 1, "2000-01-01", "2000-01-02"))
    land_messages(project.spark, raw, FMT, [md, refresh, *changes[:4]])
    project.dbt(*build_only(BUILD, TARGETS, "salaries"))
    land_messages(project.spark, raw, FMT, [*changes[4:], late_refresh])
    project.dbt(*build_only(BUILD, TARGETS, "salaries"))

    assert salaries(project, schema) == [
        (14472, 52000, "1993-11-25", "1994-11-25"),
        (20003, 62000, "2000-01-01", "9999-01-01"),
    ]
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    assert reasons(project, schema, "cdc_skipped") == Counter({"metadata": 1})
    by_seq = {
        (int(r["seq"]["s1"]), int(r["seq"]["s2"])): r
        for r in project.rows(f"select * from `{schema}`.cdc_changes where op != 'snapshot'")
    }
    partial = by_seq[(20240101000000000000000000000000011, 1)]
    assert partial["present_columns"] == ["emp_no", "from_date", "salary"]
    assert partial["changed_columns"] == ["salary"]
    assert json.loads(by_seq[(20240101000000000000000000000000010, 1)]["before"])["salary"] == 49592
    deletes = [r for r in by_seq.values() if r["op"] == "delete"]
    assert sorted(r["key"] for r in deletes) == [
        '{"emp_no":"20001","from_date":"2000-01-01"}',
        '{"emp_no":"20002","from_date":"2000-01-01"}',
    ]
    assert all(r["after"] is None and r["changed_columns"] is None for r in deletes)

    props = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.salaries")}
    project.dbt(*build_only(BUILD, TARGETS, "salaries"))
    again = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.salaries")}
    assert again["spark_cdc.consumed_through"] == props["spark_cdc.consumed_through"]
    assert again["spark_cdc.version"] == props["spark_cdc.version"]
    assert len(staged(project, schema)) == 11
    assert salaries(project, schema)[0] == (14472, 52000, "1993-11-25", "1994-11-25")


def test_primary_key_update_deletes_the_old_key_whatever_the_arrival_order(
    project: DbtProject, schema: str
) -> None:
    """Hand-made. An UPDATE whose beforeData holds another key changed the primary key: the old key
    is deleted at the update's sequence (SCD1: gone; SCD2: a deleted version closes it), even when the
    update arrives in an earlier run than the old key's insert."""
    md = corpus()[0]
    raw = f"{schema}_raw"
    old, new = row(30001, 100, "2001-01-01", None), row(30002, 100, "2001-01-01", None)
    key_change = salary_change("UPDATE", 20, new, changed=[1], before=old)
    land_messages(project.spark, raw, FMT, [md, key_change])
    project.dbt(*build_only(BUILD, TARGETS, "salaries", "salaries_history"))
    assert salaries(project, schema) == [(30002, 100, "2001-01-01", "None")]
    land_messages(
        project.spark,
        raw,
        FMT,
        [salary_change("INSERT", 10, old), salary_change("INSERT", 11, row(30003, 5, "2001-01-01", None))],
    )
    project.dbt(*build_only(BUILD, TARGETS, "salaries", "salaries_history"))

    assert salaries(project, schema) == [(30002, 100, "2001-01-01", "None"), (30003, 5, "2001-01-01", "None")]
    history = project.rows(
        "select emp_no, _cdc_op, _cdc_is_deleted, _cdc_is_current,"
        " cast(_cdc_valid_from_seq.s1 % 100 as int) as seq"
        f" from `{schema}`.salaries_history where emp_no in (30001, 30002)"
        " order by emp_no, _cdc_valid_from_seq"
    )
    assert [
        (r["emp_no"], r["_cdc_op"], r["_cdc_is_deleted"], r["_cdc_is_current"], r["seq"]) for r in history
    ] == [
        (30001, "insert", False, False, 10),
        (30001, "delete", True, True, 20),
        (30002, "update", False, True, 20),
    ]
    deletes = project.rows(
        f"select key, op_raw, before, after from `{schema}`.cdc_changes where op = 'delete'"
    )
    assert [(r["key"], r["op_raw"], r["after"]) for r in deletes] == [
        ('{"emp_no":"30001","from_date":"2001-01-01"}', "UPDATE", None)
    ]
    assert json.loads(deletes[0]["before"])["emp_no"] == 30001
    assert reasons(project, schema, "cdc_quarantine") == Counter()


def test_masks_wider_than_64_columns(project: DbtProject, schema: str) -> None:
    names = [f"c{i:03d}" for i in range(1, 131)]  # 130 columns: masks of 33 hex digits and more
    columns = [QlikColumn(n, "INT4", 1 if n == "c001" else 0) for n in names]
    full = {n: i for i, n in enumerate(names, start=1)}
    updated = {**full, "c066": -66, "c129": -129, "c130": None}
    present = [o for o in range(1, 131) if o != 65]  # c065 could not be captured (columnMask bit 64 clear)
    # Hand-made, bare (no Replicate envelope) messages of test.wide, named at message level. The
    # metadata message spells one letter of `tableStructure` as a JSON escape (same key once parsed):
    # staging looks for metadata only among messages whose text names tableStructure or has an escape.
    metadata = metadata_message("test", "wide", columns, envelope=False)
    assert metadata.count('"tableStructure"') == 1
    messages = [
        metadata.replace('"tableStructure"', '"tableStructur\\u0065"'),
        data_message(
            "INSERT",
            full,
            change_sequence=1,
            change_mask=encode_mask(range(1, 131)),
            column_mask=encode_mask(range(1, 131)),
            table=("test", "wide"),
            envelope=False,
        ),
        data_message(
            "UPDATE",
            {**updated, "c065": None},
            change_sequence=2,
            change_mask=encode_mask([66, 129, 130]),
            column_mask=encode_mask(present),
            table=("test", "wide"),
            envelope=False,
        ),
    ]
    rng = random.Random(64)
    random_masks = [sorted(rng.sample(range(1, 131), 40)) for _ in range(3)]
    for seq, ordinals in enumerate(random_masks, start=3):
        assert decode_mask(encode_mask(ordinals, width=130)) == ordinals
        messages.append(
            data_message(
                "UPDATE",
                full,
                change_sequence=seq,
                change_mask=encode_mask(ordinals, width=130),
                column_mask=encode_mask(range(1, 131)),
                table=("test", "wide"),
                envelope=False,
            )
        )
    land_messages(project.spark, f"{schema}_raw", FMT, messages)
    project.dbt(*build_only(BUILD, TARGETS))

    rows = staged(project, schema)
    assert [r["record_status"] for r in rows] == ["skipped"] + ["change"] * 5
    insert, update = rows[1], rows[2]
    assert insert["present_columns"] is None
    assert insert["changed_columns"] == names
    assert update["changed_columns"] == ["c066", "c129", "c130"]
    assert update["present_columns"] == [n for n in names if n != "c065"]
    assert update["key"] == '{"c001":"1"}'
    # The SQL decoding (in the model) agrees with the Python statement of the rule on random masks.
    for got, ordinals in zip(rows[3:], random_masks, strict=True):
        assert got["changed_columns"] == [names[o - 1] for o in ordinals]


def test_every_qlik_reason_code_and_the_run_goes_on(project: DbtProject, schema: str) -> None:
    t_table = ("test", "t")
    no_pk = [QlikColumn("a"), QlikColumn("b")]
    messages: list[str | None] = [
        # Hand-made except the corpus metadata message.
        corpus()[0],  # metadata (lineage employees.salaries)
        metadata_message("test", "t", no_pk),  # metadata without primaryKeyPosition
        data_message(
            "INSERT",
            {"a": "1", "b": "x"},
            change_sequence=1,
            change_mask="03",
            column_mask="03",
            table=t_table,
        ),
        '{"magic": "atMSG", "type": "DT", "message": {"data": {"a": 1',  # truncated
        None,  # empty value
        json.dumps({"magic": "atMSG", "type": "DT", "message": {"data": {"a": "1"}, "headers": "INSERT"}}),
        data_message("INSERT", {"a": "1", "b": "x"}, change_sequence=2, change_mask="zz", table=t_table),
        json.dumps({"magic": "atMSG", "type": "XX", "message": {}}),
        data_message("MERGE", {"a": "1", "b": "x"}, change_sequence=3, table=t_table),
        data_message("UPDATE", {"a": "1", "b": "y"}, change_sequence=None, table=t_table),
        data_message(
            "UPDATE",
            {"a": "1", "b": "y"},
            change_sequence="12345678901234567890123456789012345678901",
            table=t_table,
        ),
        data_message("INSERT", {"a": "1", "b": "x"}, change_sequence=4),  # names no table
        data_message(
            "INSERT", {"q": "1"}, change_sequence=5, change_mask="01", column_mask="01", table=("test", "u")
        ),
        json.dumps({"magic": "atMSG", "type": "DT", "message": {"data": {"a": "x" * 7000}, "headers": {}}}),
    ]
    land_messages(project.spark, f"{schema}_raw", FMT, messages)
    project.dbt(*BUILD, "--vars", vars_with(source_table=None, max_payload_bytes=6000))

    rows = staged(project, schema)
    assert len(rows) == len(messages)
    assert [r["reason_code"] for r in rows] == [
        "metadata",
        "metadata",
        "missing_key",
        "malformed_json",
        "malformed_json",
        "invalid_envelope",
        "invalid_envelope",
        "invalid_envelope",
        "unknown_op",
        "missing_sequence",
        "invalid_sequence",
        "missing_source_table",
        "missing_metadata",
        "payload_too_large",
    ]
    assert reasons(project, schema, "cdc_skipped") == Counter({"metadata": 2})
    assert sum(reasons(project, schema, "cdc_quarantine").values()) == 12
    details = {r["reason_code"]: r["reason_detail"] for r in rows}
    assert details["unknown_op"] == "operation=MERGE"
    assert "source_table" in details["missing_source_table"]
    quarantined = [r for r in rows if r["record_status"] == "quarantined"]
    assert all(r["raw_ref"]["order"] is not None for r in quarantined)
    assert all(r["raw_value"] is not None for r in quarantined if r["reason_code"] != "malformed_json")


def test_decoder_types_from_metadata(project: DbtProject, schema: str) -> None:
    columns = [
        QlikColumn("id", "NUMERIC", 1, precision=10),
        QlikColumn("amount", "NUMERIC", precision=10, scale=2),
        QlikColumn("ratio", "REAL8"),
        QlikColumn("flag", "BOOLEAN"),
        QlikColumn("small", "INT2"),
        QlikColumn("born", "DATE"),
        QlikColumn("updated_at", "DATETIME"),
        QlikColumn("payload", "BYTES"),
        QlikColumn("note", "WSTRING"),
        QlikColumn("big", "INT8"),
    ]
    good = {
        "id": "14",
        "amount": "1234.50",
        "ratio": 0.25,
        "flag": "1",
        "small": "7.0",
        "born": "1993-11-25",
        "updated_at": "2023-03-21 14:34:21.123456",
        "payload": "DEADBEEF",
        "note": "  grüße ",
        "big": 9007199254740993,
    }
    bad = {
        "id": "15",
        "amount": "12345678901.5",
        "ratio": "n/a",
        "flag": "maybe",
        "small": "70000",
        "born": "1993-13-45",
        "updated_at": "yesterday",
        "payload": "not hex!",
        "note": None,
        "big": "1e400",
    }
    messages = [
        metadata_message("test", "types", columns),
        data_message("INSERT", good, change_sequence=1, table=("test", "types")),
        data_message("INSERT", bad, change_sequence=2, table=("test", "types")),
    ]
    land_messages(project.spark, f"{schema}_raw", FMT, messages)
    project.dbt(*build_only(BUILD, TARGETS, "qlik_types"))
    names = ", ".join(c.name for c in columns)
    got = project.rows(f"select {names} from `{schema}`.qlik_types order by id")
    assert got[0] == {
        "id": 14,
        "amount": Decimal("1234.50"),
        "ratio": 0.25,
        "flag": True,
        "small": 7,
        "born": dt.date(1993, 11, 25),
        "updated_at": dt.datetime(2023, 3, 21, 14, 34, 21, 123456),
        "payload": bytearray(b"\xde\xad\xbe\xef"),
        "note": "  grüße ",
        "big": 9007199254740993,
    }
    # Every value of the bad row that does not fit its column: the change is quarantined, each column
    # named, instead of a row of nulls.
    assert len(got) == 1
    rejected = project.rows(f"select reason_code, reason_detail from `{schema}`.cdc_quarantine")
    assert {r["reason_code"] for r in rejected} == {"type_mismatch"}
    assert sorted(r["reason_detail"].split(":")[1].strip().split(" ")[1] for r in rejected) == sorted(
        ["amount", "ratio", "flag", "small", "born", "updated_at", "payload", "big"]
    )
