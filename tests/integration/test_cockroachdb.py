"""CockroachDB changefeeds end to end through `dbt build`: the upstream changefeed tests' messages give
their tables' final state, HLCs order exactly as (wall, logical), every reason code is produced,
values decode by type, and a re-run changes nothing."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import random
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.corpora.cockroachdb import corpus, message, records
from tests.helpers.landing import DbtProject, RawMessage, build_only, land_messages
from tests.helpers.results import assert_records_accounted

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BUILD = ("build", "--exclude", "udf_smoke_sql", "udf_smoke_python")
FMT = "cockroachdb"


EXPECTED = {r["source_test"].split(" ")[0]: r["final_table_state"] for r in records("expected.jsonl")}
TARGETS = ("crdb_bar", "crdb_composite", "crdb_foo", "crdb_kv", "crdb_types")
# The targets a single-table feed's changes reach: a build leaves out the others (build_only). A
# multi-table feed (source_table None) builds all. keys_only reaches none: crdb_foo is built to
# show that it stays empty.
TARGETS_OF = {
    "foo": ("crdb_foo",),
    "keys_only": ("crdb_foo",),
    "bar": ("crdb_bar",),
    "kv": ("crdb_kv",),
    "composite": ("crdb_composite",),
    "crdb_types": ("crdb_types",),
}


@pytest.fixture(autouse=True)
def only_cockroachdb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", FMT)


def build(
    project: DbtProject,
    *,
    envelope: str = "wrapped",
    order_by: str = "auto",
    source_table: str | None = "foo",
    max_payload_bytes: int | None = None,
    command: tuple[str, ...] = BUILD,
    expect_success: bool = True,
) -> Any:
    """`dbt build` with the cockroachdb options of the changefeed being replayed (CLI vars replace the
    whole spark_cdc var, so the project's value is the starting point). The default build leaves
    out the targets a single-table feed does not reach (TARGETS_OF)."""
    project_vars = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]
    cfg = copy.deepcopy(project_vars["spark_cdc"])
    cfg["formats"][FMT].update(envelope=envelope, order_by=order_by, source_table=source_table)
    if max_payload_bytes is not None:
        cfg["max_payload_bytes"] = max_payload_bytes
    if command == BUILD and source_table is not None:
        command = build_only(BUILD, TARGETS, *TARGETS_OF.get(source_table, ()))
    return project.dbt(*command, "--vars", json.dumps({"spark_cdc": cfg}), expect_success=expect_success)


def land(project: DbtProject, schema: str, messages: list[RawMessage | str | None]) -> int:
    return land_messages(project.spark, f"{schema}_raw", FMT, messages)


def state(project: DbtProject, schema: str, model: str, columns: str = "a, b") -> list[dict[str, Any]]:
    return project.rows(f"select {columns} from `{schema}`.{model} order by 1, 2")


def reasons(project: DbtProject, schema: str, model: str) -> Counter[str]:
    return Counter(r["reason_code"] for r in project.rows(f"select reason_code from `{schema}`.{model}"))


def changes(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    return project.rows(f"select * from `{schema}`.cdc_changes order by raw_ref.order")


def staged_count(project: DbtProject, schema: str) -> int:
    return int(project.rows(f"select count(*) as n from `{schema}`.stg_cdc__cockroachdb")[0]["n"])


def props(project: DbtProject, schema: str, model: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{model}")}


def hlc(wall: int, logical: int = 0) -> str:
    """An HLC spelled as CockroachDB writes `updated`/`resolved`."""
    return f"{wall}.{logical:010d}"


def test_basics_wrapped_gives_expected_state_and_rerun_is_a_no_op(project: DbtProject, schema: str) -> None:
    # CREATE CHANGEFEED FOR foo: no `updated` option, so the raw (Kafka) order is the order.
    land(project, schema, [message(r) for r in corpus("TestChangefeedBasics")])
    build(project, order_by="raw_order")
    assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedBasics"]
    assert Counter(c["op"] for c in changes(project, schema)) == Counter({"upsert": 5, "delete": 1})
    assert all(c["source_table"] == "foo" and c["seq"]["s2"] is None for c in changes(project, schema))

    before = props(project, schema, "crdb_foo")
    build(project, order_by="raw_order")
    after = props(project, schema, "crdb_foo")
    assert after["spark_cdc.consumed_through"] == before["spark_cdc.consumed_through"]
    assert after["spark_cdc.version"] == before["spark_cdc.version"]
    assert staged_count(project, schema) == 6
    assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedBasics"]


def test_diff_gives_insert_update_delete_and_changed_columns(project: DbtProject, schema: str) -> None:
    land(project, schema, [message(r) for r in corpus("TestChangefeedDiff")])
    build(project, order_by="raw_order")
    assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedDiff"]
    rows = changes(project, schema)
    assert [c["op"] for c in rows] == ["insert", "insert", "insert", "update", "insert", "delete", "insert"]
    update = rows[3]
    assert update["changed_columns"] == ["b"]
    assert json.loads(update["before"]) == {"a": 2, "b": "b"}  # images keep JSON types
    delete = rows[5]
    assert delete["after"] is None and json.loads(delete["before"]) == {"a": 1, "b": "a"}
    assert delete["key"] == '{"a":"1"}'


def test_cdc_query_bare_rows_use_event_op_and_cdc_prev(project: DbtProject, schema: str) -> None:
    land(project, schema, [message(r) for r in corpus("TestChangefeedBasicQuery")])
    build(project, envelope="bare", order_by="raw_order")
    assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedBasicQuery"]
    rows = changes(project, schema)
    assert [c["op"] for c in rows] == ["insert", "insert", "insert", "update", "insert", "delete"]
    assert [c["op_raw"] for c in rows][-1] == "delete"
    # The query's own op and cdc_prev columns are envelope, not row data.
    assert all(c["present_columns"] == ["a", "b"] for c in rows if c["op"] != "delete")
    assert json.loads(rows[3]["before"]) == {"a": 2, "b": "b"}
    assert rows[3]["changed_columns"] == ["b"]


@pytest.mark.parametrize(
    ("envelope", "notes"),
    [("row", ("row", "deprecated_row")), ("wrapped", ("wrapped", "wrapped,key_in_value"))],
)
def test_envelope_variants_give_the_same_row(
    project: DbtProject, schema: str, envelope: str, notes: tuple[str, ...]
) -> None:
    land(project, schema, [message(r) for n in notes for r in corpus("TestChangefeedEnvelope", n)])
    build(project, envelope=envelope)  # auto order: raw order for row, updated (absent!) for wrapped
    if envelope == "row":
        assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedEnvelope"]
        assert reasons(project, schema, "cdc_quarantine") == Counter()
    else:
        # Without WITH updated a wrapped feed has no order of its own: refused, not guessed.
        assert state(project, schema, "crdb_foo") == []
        assert reasons(project, schema, "cdc_quarantine") == Counter({"missing_sequence": 2})
        build(
            project,
            envelope=envelope,
            order_by="raw_order",
            command=("build", "--full-refresh", "--select", "+crdb_foo"),
        )
        assert state(project, schema, "crdb_foo") == EXPECTED["TestChangefeedEnvelope"]


def test_multi_table_feed_routes_rows_by_topic(project: DbtProject, schema: str) -> None:
    land(project, schema, [message(r, topic=r["topic"]) for r in corpus("TestChangefeedMultiTable")])
    build(project, order_by="raw_order", source_table=None)
    expected = EXPECTED["TestChangefeedMultiTable"]
    assert state(project, schema, "crdb_foo") == expected["foo"]
    assert state(project, schema, "crdb_bar") == expected["bar"]


@pytest.mark.parametrize("envelope", ["wrapped", "row", "key_only"])
def test_encoder_matrix(project: DbtProject, schema: str, envelope: str) -> None:
    matrix = [
        r for r in records("encoder_matrix.jsonl") if r["options"].split(",")[1] == f"envelope={envelope}"
    ]
    assert len(matrix) == 12
    extra: list[RawMessage] = []
    if envelope == "key_only":
        # The spec's sinkless key_only row; the key array is positional in declared order (city, id).
        sinkless = {
            "key": '["seattle", "fff726cc-13b3-475f-ad92-a21cafee5d3f"]',
            "table": "users",
            "value": "",
        }
        extra = [message(r) for r in corpus("TestChangefeedEnvelope", "key_only")] + [
            RawMessage(json.dumps(sinkless))
        ]
    land(project, schema, [message(r) for r in matrix] + extra)
    # key_only changes name no target (apply refuses them); the others replay table foo.
    build(project, envelope=envelope, source_table="keys_only" if envelope == "key_only" else "foo")

    assert reasons(project, schema, "cdc_skipped") == Counter({"resolved": 4})
    watermark = project.rows(f"select * from `{schema}`.cdc_cockroachdb_resolved")
    assert len(watermark) == 1
    assert watermark[0]["resolved_hlc"] == "1.0000000002"
    assert (watermark[0]["resolved_wall"], watermark[0]["resolved_logical"]) == (Decimal(1), Decimal(2))
    assert watermark[0]["resolved_messages"] == 4
    rows = changes(project, schema)
    if envelope == "wrapped":
        # updated order: the two option sets without `updated` have no HLC. The encoder test stamps
        # its insert and its delete of key 1 with one HLC (1.0000000002), which no real changefeed
        # does: two changes of different effect at one sequence are a conflict, and none applies.
        assert reasons(project, schema, "cdc_quarantine") == Counter(
            {"missing_sequence": 4, "sequence_conflict": 4}
        )
        assert rows == []
        conflicting = project.rows(
            f"select op, seq, distinct_changes from `{schema}`.cdc_sequence_conflicts"
            " where row_kind = 'conflict'"
        )
        assert Counter(c["op"] for c in conflicting) == Counter({"upsert": 1, "insert": 1, "delete": 2})
        assert {(c["seq"]["s1"], c["seq"]["s2"]) for c in conflicting} == {(Decimal(1), Decimal(2))}
        # upsert and insert of one image are one effect; the deletes (with and without diff) another.
        assert {c["distinct_changes"] for c in conflicting} == {2}
        assert state(project, schema, "crdb_foo") == []
        return
    elif envelope == "row":
        assert reasons(project, schema, "cdc_quarantine") == Counter()
        assert Counter(c["op"] for c in rows) == Counter({"upsert": 4, "delete": 4})
    else:
        assert reasons(project, schema, "cdc_quarantine") == Counter()
        assert Counter(c["op"] for c in rows) == Counter({"key_only": 10})
        assert {c["key"] for c in rows} == {
            '{"a":"1"}',
            '{"city":"seattle","id":"fff726cc-13b3-475f-ad92-a21cafee5d3f"}',
        }
        assert {c["source_table"] for c in rows} == {"keys_only", "users"}
        assert all(c["after"] is None for c in rows)
        # A target that reads a key_only feed fails before writing, naming the model and the fix.
        result = build(
            project,
            envelope="key_only",
            source_table="foo",
            command=("build", "--full-refresh", "--select", "stg_cdc__cockroachdb+", "--exclude", "crdb_bar"),
            expect_success=False,
        )
        text = " ".join(str(r.message) for r in result.result.results)
        assert "model 'crdb_foo' received key_only changes for source table 'foo'" in text
        assert "envelope=wrapped" in text
        assert project.rows(f"select count(*) as n from `{schema}`.crdb_foo")[0]["n"] == 0
        return
    assert state(project, schema, "crdb_foo") == EXPECTED["TestEncoders"]


def validator_ts() -> dict[str, str]:
    # ts[0..5]: ts[1..3] share one wall time (logical ticks 2 < 10 < 11; as text "…2" > "…10"),
    # ts[4] and ts[5] differ from ts[3] by 1 ns (equal as doubles).
    wall = 1701102296662969433
    return {
        "ts[0]": hlc(wall - 10**9),
        "ts[1]": hlc(wall, 2),
        "ts[2]": hlc(wall, 10),
        "ts[3]": hlc(wall, 11),
        "ts[4]": hlc(wall + 1),
        "ts[5]": hlc(wall + 2),
    }


def validator_messages(source_test_prefix: str) -> list[RawMessage]:
    ts = validator_ts()
    out: list[RawMessage] = []
    for r in records("validator_sequences.jsonl"):
        if not r["source_test"].startswith(source_test_prefix):
            continue
        if r["kind"] == "resolved":
            out.append(RawMessage(json.dumps({"resolved": ts[r["resolved_ref"]]})))
        else:
            value = {**json.loads(r["value_raw"]), "updated": ts[r["updated_ref"]]}
            out.append(RawMessage(json.dumps(value), json.dumps(r["key"])))
    return out


def test_validator_sequences_with_duplicates_and_unsorted_rows_converge(
    project: DbtProject, schema: str
) -> None:
    expected = EXPECTED["cdctest"]
    land(project, schema, validator_messages("TestFingerprintValidator/rows unsorted"))
    build(project, source_table="kv")
    assert state(project, schema, "crdb_kv", "k, v") == expected

    later = validator_messages("TestFingerprintValidator/all resolved") + validator_messages(
        "TestBeforeAfterValidator"
    )
    random.Random(20261122).shuffle(later)
    land(project, schema, later)
    result = build(project, source_table="kv")
    assert state(project, schema, "crdb_kv", "k, v") == expected
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    # Every raw message (duplicates and resolved timestamps included) is accounted for.
    assert_records_accounted(project, schema, result, ("cockroachdb",))
    assert reasons(project, schema, "cdc_skipped") == Counter({"resolved": 7})
    assert staged_count(project, schema) == 27
    watermark = project.rows(f"select resolved_hlc from `{schema}`.cdc_cockroachdb_resolved")
    assert watermark == [{"resolved_hlc": validator_ts()["ts[5]"]}]


def test_hlc_orders_by_wall_then_logical_never_as_float(project: DbtProject, schema: str) -> None:
    wall = 1701102296662969433  # wall and wall + 1 are the same double
    assert float(wall) == float(wall + 1)

    def change(k: int, v: int, updated: str) -> RawMessage:
        return RawMessage(json.dumps({"after": {"k": k, "v": v}, "updated": updated}), json.dumps([k]))

    newest_first = [
        change(1, 4, hlc(wall + 1)),  # newest: next nanosecond
        change(1, 3, hlc(wall, 10)),
        change(2, 20, hlc(wall, 10)),  # logical 10 > 9, though "…10" < "…9" as text without padding
        change(3, 1000, hlc(10**18)),  # 19-digit wall beats an 18-digit one with a high logical part
    ]
    older = [
        change(1, 2, hlc(wall, 1)),
        change(1, 1, hlc(wall)),
        change(2, 9, f"{wall}.9"),
        change(3, 999, hlc(10**18 - 1, 99)),
        change(1, 4, hlc(wall + 1)),  # redelivery
    ]
    land(project, schema, newest_first[1:])
    build(project, source_table="kv")
    land(project, schema, [newest_first[0], *older])
    build(project, source_table="kv")

    assert state(project, schema, "crdb_kv", "k, v") == [
        {"k": 1, "v": 4},
        {"k": 2, "v": 20},
        {"k": 3, "v": 1000},
    ]
    seqs = {(c["seq"]["s1"], c["seq"]["s2"]) for c in changes(project, schema)}
    assert (Decimal(wall + 1), Decimal(0)) in seqs
    assert (Decimal(wall), Decimal(10)) in seqs and (Decimal(wall), Decimal(9)) in seqs
    commit_ts = project.rows(
        f"select cast(commit_ts as string) as t from `{schema}`.cdc_changes where seq.s1 = {wall + 1}"
    )
    assert {r["t"] for r in commit_ts} == {"2023-11-27 16:24:56.662969"}  # wall ns -> us, session zone UTC


def test_bad_records_get_reason_codes_and_the_run_goes_on(project: DbtProject, schema: str) -> None:
    def v(obj: dict[str, Any]) -> str:
        return json.dumps(obj)

    good = {"after": {"a": 1, "b": "ok"}, "topic": "foo", "updated": hlc(8)}
    messages: list[RawMessage | str | None] = [
        RawMessage(v(good), "[1]"),
        '{"after": {"a": 1',  # truncated
        "[1]",  # JSON, not an object
        v({"after": {"a": 9, "b": "x" * 70_000}, "topic": "foo", "updated": hlc(9)}),  # > 2048 bytes
        RawMessage(v({"a": 1, "b": "a"}), "[1]"),  # a row-envelope message in a wrapped feed
        RawMessage(v({"after": "x", "topic": "foo", "updated": hlc(5)}), "[1]"),
        RawMessage(v({"after": {"a": 1, "b": "x"}, "topic": "foo", "updated": "1.5e3"}), "[1]"),
        v({"resolved": "soon"}),
        RawMessage(v({"after": {"a": 2, "b": "y"}, "topic": "foo"}), "[2]"),  # feed without updated
        v({"after": {"b": "z"}, "topic": "foo", "updated": hlc(6)}),  # no key anywhere
        RawMessage(v({"after": {"a": 3, "b": "q"}, "op": "x", "topic": "foo", "updated": hlc(7)}), "[3]"),
        RawMessage(v({"after": {"a": 4, "b": "t"}, "updated": hlc(7)}), "[4]"),  # no topic, no default
        "",  # tombstones
        None,
        v({"resolved": hlc(9)}),
    ]
    land(project, schema, messages)
    log = Path(os.environ["DBT_LOG_PATH"], "dbt.log")
    logged = log.stat().st_size if log.exists() else 0
    build(project, source_table=None, max_payload_bytes=2048)

    assert state(project, schema, "crdb_foo") == [{"a": 1, "b": "ok"}]
    # The run summary (the package's on-run-end hook) counts this run's quarantined records by
    # reason: under the target of their source table, and those of no known table on a line of their own.
    with log.open("rb") as f:
        f.seek(logged)
        summary = f.read().decode(errors="replace")
    quarantined = "invalid_envelope=1, invalid_sequence=1, missing_key=1, missing_sequence=1, unknown_op=1"
    assert re.search(rf"crdb_foo +scd1 +1 +1  {quarantined} +- +-", summary), summary[-3000:]
    unknown = "invalid_envelope=2, malformed_json=2, missing_source_table=1, payload_too_large=1"
    assert re.search(rf"\(unknown table\) +- +- +-  {unknown} +- +-", summary), summary[-3000:]
    assert reasons(project, schema, "cdc_quarantine") == Counter(
        {
            "malformed_json": 2,
            "payload_too_large": 1,
            "invalid_envelope": 3,
            "invalid_sequence": 1,
            "missing_sequence": 1,
            "missing_key": 1,
            "unknown_op": 1,
            "missing_source_table": 1,
        }
    )
    assert reasons(project, schema, "cdc_skipped") == Counter({"tombstone": 2, "resolved": 1})
    assert staged_count(project, schema) == len(messages)
    details = {
        r["reason_detail"]
        for r in project.rows(
            f"select reason_detail from `{schema}`.cdc_quarantine where reason_code = 'invalid_envelope'"
        )
    }
    assert details == {
        "unexpected field(s) for the wrapped envelope: a,b",
        "after/before is not a JSON object or null",
        "resolved is not an HLC: soon",
    }
    invalid = project.rows(
        f"select reason_detail from `{schema}`.cdc_quarantine where reason_code = 'invalid_sequence'"
    )
    assert [r["reason_detail"] for r in invalid] == [
        "updated is not an HLC (<wall ns>.<logical>, a 64-bit wall time and a 32-bit logical counter): 1.5e3"
    ]
    quarantined = project.rows(f"select raw_value, raw_ref from `{schema}`.cdc_quarantine")
    assert all(q["raw_value"] is not None and q["raw_ref"]["order"] is not None for q in quarantined)
    # An oversized message's quarantine row keeps its head only (the raw relation keeps the whole).
    (too_large,) = project.rows(
        f"select raw_value, reason_detail from `{schema}`.cdc_quarantine"
        " where reason_code = 'payload_too_large'"
    )
    assert too_large["raw_value"] == messages[3][:65536]
    assert too_large["reason_detail"].endswith(
        "raw_value keeps its first 65536 characters, the raw relation the whole value"
    )


def test_invalid_option_fails_at_compile_time_naming_setting_and_fix(
    project: DbtProject, schema: str
) -> None:
    result = build(
        project,
        envelope="avro",
        command=("compile", "--select", "stg_cdc__cockroachdb"),
        expect_success=False,
    )
    text = str(result.exception or [r.message for r in result.result.results])
    assert "stg_cdc__cockroachdb" in text
    assert (
        "formats.cockroachdb.envelope" in text
        and "wrapped (default), enriched, bare, row or key_only" in text
    )


def test_composite_key_array_maps_to_declared_order(project: DbtProject, schema: str) -> None:
    # primary_key [region, id]: the key array ["eu", 7] is positional, whatever the sorted order.
    rows = [
        RawMessage(
            json.dumps({"after": {"id": 7, "region": "eu", "v": "x"}, "updated": hlc(1)}), '["eu", 7]'
        ),
        RawMessage(json.dumps({"after": None, "updated": hlc(2)}), '["eu", 7]'),
        RawMessage(
            json.dumps({"after": {"id": 8, "region": "us", "v": "y"}, "updated": hlc(3)}), '["us", 8]'
        ),
    ]
    land(project, schema, rows)
    build(project, source_table="composite")
    assert state(project, schema, "crdb_composite", "region, id, v") == [{"region": "us", "id": 8, "v": "y"}]
    assert {c["key"] for c in changes(project, schema)} == {
        '{"id":"7","region":"eu"}',
        '{"id":"8","region":"us"}',
    }


TYPES_AFTER = (
    '{"id": 1, "i_num": 42, "i_str": "9007199254740993", "dec": 12345678901234567890.1234567891,'
    ' "dec_str": "26.30", "dec_text": 26.30, "dec_nan": null, "f": 1.5, "f_inf": "Infinity", "flag": true,'
    ' "d": "2019-01-02", "ts": "2019-01-02T03:04:05.123456", "tstz": "2019-01-02T03:04:05.123456+02:00",'
    ' "tm": "03:04:05.123456", "b_hex": "\\\\x6869", "b_b64": "aGk=", "j": {"color": "red", "n": [1, 2.50]},'
    ' "j_null": {"__crdb_json_null__": true}, "j_var": {"a": 1}, "arr": [1, 2, 3], "arr_s": ["x", "y"],'
    ' "iv": "1 day 02:03:04.5", "iv_text": "1 year 2 mons", "u": "68ee1f95-3137-48e2-8ce3-34ac2d18c7c8",'
    ' "big": 9223372036854775807}'
)


def test_types_decode_into_declared_spark_types(project: DbtProject, schema: str) -> None:
    # DECIMAL 'NaN' has no Spark decimal: that change is quarantined naming the column (issue 47),
    # never stored as null.
    nan = TYPES_AFTER.replace('"id": 1,', '"id": 2,').replace('"dec_nan": null', '"dec_nan": "NaN"')
    land(
        project,
        schema,
        [
            RawMessage('{"after": ' + TYPES_AFTER + ', "updated": "1.0000000001"}', "[1]"),
            RawMessage('{"after": ' + nan + ', "updated": "1.0000000002"}', "[2]"),
        ],
    )
    build(project, source_table="crdb_types")
    [rejected] = project.rows(
        f"select key, reason_code, reason_detail from `{schema}`.crdb_types__cdc_rejected"
    )
    assert (rejected["key"], rejected["reason_code"]) == ('{"id":"2"}', "type_mismatch")
    assert 'column dec_nan (decimal(10,2)): value "NaN" does not fit the type' in rejected["reason_detail"]
    # Spark 3.5 (SPARK_CDC_VARIANT_TYPE=string): j_var is a string holding the JSON text.
    j_var_json = "j_var" if project.spark.version.startswith("3.") else "to_json(j_var)"
    [row] = project.rows(
        f"select *, cast(tstz as string) as tstz_utc, {j_var_json} as j_var_json from `{schema}`.crdb_types"
    )
    assert (
        row["i_num"] == 42 and row["i_str"] == 9007199254740993 and row["big"] == Decimal(9223372036854775807)
    )
    assert row["dec"] == Decimal("12345678901234567890.1234567891")  # beyond double precision, exact
    assert row["dec_str"] == Decimal("26.30") and row["dec_nan"] is None
    assert row["dec_text"] == "26.3"  # exact value; trailing zeros of the scale are not kept
    assert row["f"] == 1.5 and row["f_inf"] == float("inf") and row["flag"] is True
    assert row["d"] == dt.date(2019, 1, 2)
    assert row["ts"] == dt.datetime(2019, 1, 2, 3, 4, 5, 123456)
    assert row["tstz_utc"] == "2019-01-02 01:04:05.123456"
    assert row["tm"] == "03:04:05.123456"
    assert bytes(row["b_hex"]) == b"hi" and bytes(row["b_b64"]) == b"hi"
    assert json.loads(row["j"]) == {"color": "red", "n": [1, 2.5]}
    assert row["j_null"] == "null" and row["j_var_json"] == '{"a":1}'
    assert row["arr"] == [1, 2, 3] and row["arr_s"] == ["x", "y"]
    assert row["iv"] == dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    assert row["iv_text"] == "1 year 2 mons"
    assert row["u"] == "68ee1f95-3137-48e2-8ce3-34ac2d18c7c8"


def test_enriched_and_diff_doc_examples_stage_as_changes(project: DbtProject, schema: str) -> None:
    docs = records("docs_envelope_examples.jsonl")
    land(project, schema, [json.dumps({k: v for k, v in d.items() if k != "_example"}) for d in docs])
    build(project, envelope="enriched", order_by="raw_order", source_table="products")
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    rows = changes(project, schema)
    assert [c["op"] for c in rows] == ["update", "insert", "insert", "insert", "insert"]
    assert [c["op_raw"] for c in rows] == [None, None, "c", "c", "c"]
    assert {c["source_table"] for c in rows} == {"products"}
    assert rows[0]["changed_columns"] == ["price"]
    assert json.loads(rows[0]["after"], parse_float=Decimal)["price"] == Decimal(
        "26.3"
    )  # a JSON number still
    assert rows[4]["key"] == '{"id":"58390d92-2472-43e1-86bc-1642395e8dad"}'
    emitted = project.rows(
        f"select cast(emitted_at as string) as t from `{schema}`.cdc_changes where op_raw = 'c'"
    )
    assert {r["t"] for r in emitted} == {
        "2025-04-04 18:46:34.409866",  # ts_ns 1743792394409866000
        "2025-04-22 20:17:28.801146",
        "2025-04-24 20:44:04.910044",
    }
    assert json.loads(rows[3]["type_hints"]["price"]) == {
        "type": "float64",
        "name": "decimal",
        "optional": False,
        "parameters": {"precision": "10", "scale": "2"},
    }
