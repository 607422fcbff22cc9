"""Hostile input: mutated messages of every format never stop a run, never vanish, and never
disturb the good records landed with them.

Valid messages of each format (from the conformance corpora) are mutated two ways
(fuzz_messages.py): systematically, on each format's first two messages (every field dropped, and
set to a value of every JSON type and to edge numbers), and at random over all of them (hypothesis:
truncation, garbage, invalid UTF-8, deep nesting, a value exactly max_payload_bytes long and one
byte longer, extra fields, replaced keys, two messages in one value), plus format-specific damage:
DSQL chunks with a wrong CRC32C, fragment indexes out of range and conflicting duplicate fragments;
Qlik change and column masks longer and shorter than their table's column count, each with the
outcome it must have (qlik_mask_cases). The good messages and the hostile ones land in the same raw
tables and batch (good in Kafka partition 0, hostile in partition 1) and one `dbt build` runs (the
package's models, four targets and their contract tests).

Invariants: the build succeeds, data-contract tests included; the accounting ledger gives every
landed record exactly one outcome; every record that is not UTF-8 JSON object text is quarantined
with a reason code, and every record over max_payload_bytes as payload_too_large; every good record
is staged exactly as in a build of the good records alone, and the Debezium and DSQL targets (whose
hostile copies name another table) equal that build's. That build must stage changes in every
format, quarantine none of the good records, and leave every target non-empty.

Size: SPARK_CDC_FUZZ_CASES random cases per format (default 40; `make test-long` sets 400).
SPARK_CDC_FUZZ_DUMP: a file to write each case's format, offset, mutation and outcome to (to compare
two runs, e.g. on two Spark lines).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps
from fuzz_messages import MATCHED, Case, hostile_values, random_case, systematic
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.helpers.corpora.aurora_dsql import TS_NS, big_order
from tests.helpers.corpora.aurora_dsql import corpus as dsql_corpus
from tests.helpers.corpora.cockroachdb import corpus as crdb_corpus
from tests.helpers.corpora.cockroachdb import message as crdb_message
from tests.helpers.corpora.debezium import corpus as debezium_corpus
from tests.helpers.corpora.qlik_replicate import named_corpus
from tests.helpers.corpora.ydb import SCENARIOS, jsonl, unwildcard
from tests.helpers.landing import FORMATS, DbtProject, RawMessage, fresh_landing, land_messages, qualified
from tests.helpers.results import assert_records_accounted, count, star_except

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RANDOM_CASES = int(os.environ.get("SPARK_CDC_FUZZ_CASES", "40"))
MAX_PAYLOAD_BYTES = 200_000
# No target of the integration project reads /Root/Table, the good YDB messages' table, outside
# its conformance scenarios: YDB records are checked in staging and the change stream.
TARGETS = ("products", "order_items", "salaries", "crdb_foo")
BUILD = ("build", "--select", "package:spark_cdc", *TARGETS)
GOOD, HOSTILE = 0, 1  # Kafka partitions
TOMBSTONE_FORMATS = ("debezium", "cockroachdb")


def good_messages() -> dict[str, list[RawMessage]]:
    named, hand_made_md = named_corpus()
    ydb = []
    for record in jsonl("changefeed_ut.jsonl"):
        if record["source_test"] in ("VirtualTimestamps", "NewAndOldImagesLogDebezium"):
            n, part = int(record["seq"]), SCENARIOS[record["source_test"]][0]
            key = record.get("kafka_key_meta__key")
            ydb.append(
                RawMessage(json.dumps(unwildcard(record["message"], n, part)), key and json.dumps(key))
            )
    return {
        "debezium": [
            RawMessage(m)
            for m in debezium_corpus("schema-exclude")[:8] + debezium_corpus("schema-include")[:3]
        ],
        # The AWS examples insert, update and delete one row (1001, 42); a row of another key stays.
        "aurora_dsql": [RawMessage(m) for m in dsql_corpus("aws_docs_examples.jsonl")]
        + [RawMessage(m) for m in dumps([big_order(TS_NS, 2, "good, kept")])],
        # The corpus's three data messages of tables it has no metadata for, named and given their
        # metadata (as in test_qlik_replicate.py), so that they stage as changes and their hostile
        # copies (masks above all) are read against the tables' columns.
        "qlik_replicate": [RawMessage(m) for m in [*named[:2], *hand_made_md, *named[2:]]],
        "ydb": ydb,
        "cockroachdb": [crdb_message(r) for r in crdb_corpus("TestChangefeedBasics")],
    }


def renamed(text: str, table: str) -> str:
    """Debezium / DSQL: the hostile copy names another table, so it cannot touch the good target."""
    doc = json.loads(text)
    for source in (doc.get("source"), (doc.get("payload") or {}).get("source")):
        if isinstance(source, dict) and source.get("table") == table:
            source["table"] = f"fuzz_{table}"
    return json.dumps(doc)


def dsql_chunk_cases() -> list[Case]:
    """Damaged chunked records, each with its own chunk id."""
    cases: list[Case] = []

    def chunk(n: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        record = big_order(TS_NS + 1000 + n, n, "é" * 400)
        record["source"]["table"] = "fuzz_order_items"
        return chunk_record(record, {"after": f"fuzz-chunk-{n}"})

    def add(messages: list[dict[str, Any]], label: str) -> None:
        cases.extend(Case(text.encode(), None, label) for text in dumps(messages))

    main, frags = chunk(1)
    main["chunked"]["after"]["crc32c"] = str((int(main["chunked"]["after"]["crc32c"]) + 1) % 2**32)
    add([main, *frags], "chunk crc mismatch")
    for n, index in ((2, len(chunk(2)[1])), (3, -1), (4, 2**40), (5, "0")):
        main, frags = chunk(n)
        frags[-1]["index"] = index
        add([main, *frags], f"fragment index {index!r}")
    main, frags = chunk(6)
    add([main, *frags, {**frags[0], "data": frags[0]["data"][::-1]}], "duplicate fragment, different data")
    main, frags = chunk(7)
    add([main, *frags, frags[0]], "duplicate fragment, same data")
    main, frags = chunk(8)
    main["chunked"]["after"]["total_fragments"] = -3
    add([main, *frags], "negative fragment count")
    return cases


def qlik_mask_cases(messages: list[RawMessage]) -> list[Case]:
    """The good data messages (their tables' metadata among the good messages, so masks are read
    against a real column count), each with its change or column mask replaced, and the outcome each
    must have. A table version qualifies for a message only if it has every ordinal its masks set,
    so a mask with a bit past the last column waits for metadata of a wider version
    (missing_metadata, retried when that arrives); longer masks without such a bit (leading zeros),
    shorter ones (fewer hex digits than the columns need, where a table has more than four), no bit
    and empty are read against the table; text that is not hex, or more digits than
    max_mask_hex_digits, is an invalid envelope."""
    cases = []
    for message in messages:
        if not message.value:
            continue
        doc = json.loads(message.value)
        headers = doc["message"].get("headers")
        if not isinstance(headers, dict) or "changeMask" not in headers:
            continue
        columns = len(doc["message"]["data"])
        digits = (columns + 3) // 4  # what the table's columns need
        every = f"{(1 << columns) - 1:0{digits}X}"
        masks = {
            "0000" + every: ("longer, leading zeros", MATCHED),
            "F" * (digits - 1): ("shorter" if digits > 1 else "empty", MATCHED),
            "0": ("no bit", MATCHED),
            "1" + "0" * digits: ("longer, a bit past the last column", "missing_metadata"),
            "F" * (digits + 4): ("longer, every bit set", "missing_metadata"),
            "zz": ("not hex", "invalid_envelope"),
            "7" * 5000: ("over max_mask_hex_digits", "invalid_envelope"),
        }
        for field in ("changeMask", "columnMask"):
            for mask, (what, expect) in masks.items():
                headers_copy = {**headers, field: mask}
                mutated = {**doc, "message": {**doc["message"], "headers": headers_copy}}
                label = f"mask {field}={mask[:12]!r} ({what}; {columns} columns)"
                cases.append(Case(json.dumps(mutated).encode(), None, label, expect))
    return cases


def hostile_cases(good: dict[str, list[RawMessage]]) -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for fmt, messages in good.items():
        table = {"debezium": "products", "aurora_dsql": "order_items"}.get(fmt)
        bases = [(renamed(m.value, table) if table else m.value, m.key) for m in messages if m.value]
        # Systematic: every field of two messages (a change and, where there is one, another kind).
        found = [c for text, key in bases[:2] for c in systematic(text, key)]
        # The attacker's values (issue 47's classes) on the first message: every place they fit.
        found += [c for text, key in bases[:1] for c in hostile_values(text, key)]

        drawn = draw_random(bases)
        cases[fmt] = found + drawn
    cases["aurora_dsql"] += dsql_chunk_cases()
    cases["qlik_replicate"] += qlik_mask_cases(good["qlik_replicate"])
    return cases


def draw_random(bases: list[tuple[str, str | None]]) -> list[Case]:
    """RANDOM_CASES random mutations of `bases`, the same ones on every run (derandomized)."""
    drawn: list[Case] = []

    @settings(
        max_examples=RANDOM_CASES,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        text, key = data.draw(st.sampled_from(bases))
        drawn.append(data.draw(random_case(text, key, MAX_PAYLOAD_BYTES)))

    draw()
    return drawn


def land_cases(spark: Any, schema: str, fmt: str, cases: list[Case]) -> None:
    """Land raw bytes (not necessarily UTF-8) as the string value a Kafka sink writes."""
    name = qualified(schema, fmt)
    last = spark.sql(f"select max(`offset`) from {name} where `partition` = {HOSTILE}").first()[0]
    start = 0 if last is None else int(last) + 1
    rows = [(HOSTILE, start + i, c.key, c.value) for i, c in enumerate(cases)]
    df = spark.createDataFrame(rows, "`partition` int, `offset` bigint, `key` binary, `value` binary")
    df.selectExpr(
        "`partition`", "`offset`", "cast(`key` as string)", "cast(`value` as string)", "current_timestamp()"
    ).write.insertInto(name)


def build_vars() -> str:
    """--vars: the project's spark_cdc var with a small max_payload_bytes (huge values stay cheap),
    the settings the good YDB and CockroachDB messages need (as in their conformance tests), and
    primary keys for the hostile copies' tables."""
    cfg = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]["spark_cdc"]
    cfg["max_payload_bytes"] = MAX_PAYLOAD_BYTES
    # The YDB scenarios are changefeeds of /Root/Table (key [key]); the project's default table has a
    # two-column key, so their keys would not match and every one would be quarantined missing_key.
    cfg["formats"]["ydb"]["source_table"] = "/Root/Table"
    # TestChangefeedBasics has no `updated` option: the raw (Kafka) order is the order, not the HLC
    # (the default for the wrapped envelope would quarantine every message missing_sequence).
    cfg["formats"]["cockroachdb"]["order_by"] = "raw_order"
    # The hostile copies' tables have primary keys too, so their mutations reach past the key check.
    cfg["tables"]["inventory.fuzz_products"] = {"primary_key": ["id"]}
    cfg["tables"]["public.fuzz_order_items"] = {"primary_key": ["order_id", "item_id"]}
    return json.dumps({"spark_cdc": cfg})


def staged_good(project: DbtProject, schema: str, fmt: str) -> list[dict[str, Any]]:
    rows = project.rows(
        f"select raw_ref.order as o, record_status, reason_code, op, key, seq, after, before "
        f"from `{schema}`.stg_cdc__{fmt} where raw_ref.partition = '{GOOD}'"
    )
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def fresh_schema(project: DbtProject, name: str) -> None:
    fresh_landing(project.spark, name)


def test_hostile_messages_are_quarantined_and_good_ones_still_apply(
    project: DbtProject,
    schema: str,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    good = good_messages()
    cases = hostile_cases(good)
    variables = build_vars()

    # The good records alone.
    for fmt, messages in good.items():
        land_messages(project.spark, f"{schema}_raw", fmt, messages, partition=GOOD)
    project.dbt(*BUILD, "--vars", variables)
    reference = {fmt: staged_good(project, schema, fmt) for fmt in FORMATS}

    def without_apply_time(relation: str) -> list[dict[str, Any]]:
        return project.rows(f"select {star_except(project, relation, '_cdc_applied_at')} from {relation}")

    targets = {t: without_apply_time(f"`{schema}`.{t}") for t in TARGETS[:2]}
    # The good records are changes in every format, and the compared targets hold rows; otherwise the
    # comparisons below would compare quarantined records and empty tables (the state of this test
    # until 2026-11-27 for YDB, CockroachDB and the DSQL target), and most mutations of those
    # formats' messages would have stopped at the key or sequence check.
    for fmt, rows in reference.items():
        statuses = Counter((r["record_status"], r["reason_code"]) for r in rows)
        assert statuses[("change", None)], (fmt, statuses)
        assert not any(status == "quarantined" for status, _ in statuses), (fmt, statuses)
    applied = {t: count(project, schema, t) for t in TARGETS}
    assert all(applied.values()), applied

    # The same good records with the hostile ones, interleaved in one batch.
    hostile = f"{schema[:40]}_fz"
    fresh_schema(project, hostile)
    monkeypatch.setenv("SPARK_CDC_SCHEMA", hostile)
    for fmt, messages in good.items():
        land_messages(project.spark, f"{hostile}_raw", fmt, messages, partition=GOOD)
        land_cases(project.spark, f"{hostile}_raw", fmt, cases[fmt])
    result = project.dbt(*BUILD, "--vars", variables)

    assert_records_accounted(project, hostile, result, FORMATS)
    for fmt in FORMATS:
        assert staged_good(project, hostile, fmt) == reference[fmt], fmt
    for t, rows in targets.items():
        got = without_apply_time(f"`{hostile}`.{t}")
        key = lambda r: json.dumps(r, sort_keys=True, default=str)  # noqa: E731
        assert sorted(got, key=key) == sorted(rows, key=key), t

    outcomes: Counter[tuple[str, str]] = Counter()
    masks: Counter[str] = Counter()  # the Qlik mask cases' outcomes
    dumped: list[list[Any]] = []
    for fmt in FORMATS:
        quarantined = {
            int(r["o"]): r["reason_code"]
            for r in project.rows(
                f"select raw_ref.order as o, reason_code from `{hostile}`.cdc_quarantine "
                f"where cdc_format = '{fmt}' and raw_ref.partition = '{HOSTILE}'"
            )
        }
        skipped = {
            int(r["o"]): r["reason_code"]
            for r in project.rows(
                f"select raw_ref.order as o, reason_code from `{hostile}`.cdc_skipped "
                f"where cdc_format = '{fmt}' and raw_ref.partition = '{HOSTILE}'"
            )
        }
        assert all(quarantined.values()), fmt  # every quarantined record has a reason
        for offset, case in enumerate(cases[fmt]):
            outcome = quarantined.get(offset) or (
                f"skipped:{skipped[offset]}" if offset in skipped else "staged"
            )
            outcomes[(fmt, outcome)] += 1
            dumped.append([fmt, offset, case.mutation, outcome])
            if not case.value and fmt in TOMBSTONE_FORMATS:
                # An empty value is a Kafka tombstone where the format has them: counted, skipped.
                assert skipped.get(offset) == "tombstone", (fmt, case.mutation)
            elif len(case.value or b"") > MAX_PAYLOAD_BYTES:
                # Over the bound: quarantined before any parsing, whatever the text holds.
                assert quarantined.get(offset) == "payload_too_large", (fmt, case.mutation)
            elif len(case.value or b"") == MAX_PAYLOAD_BYTES:
                # At the bound: parsed (it may fail later checks, never the size one).
                assert quarantined.get(offset) != "payload_too_large", (fmt, case.mutation)
            elif not case.is_json_object_text:
                assert offset in quarantined, (fmt, case.mutation, case.value and case.value[:200])
            elif case.expect is not None:
                got = quarantined.get(offset)
                if case.expect == MATCHED:
                    assert got not in ("missing_metadata", "invalid_envelope"), (fmt, case.mutation, got)
                else:
                    assert got == case.expect, (fmt, case.mutation, got)
                masks[outcome] += 1
    total = sum(len(c) for c in cases.values())
    print(f"\nfuzz: {total} hostile messages, outcomes: {sorted(outcomes.items())}; Qlik masks: {masks}")
    if os.environ.get("SPARK_CDC_FUZZ_DUMP"):  # each case's mutation and outcome, to compare two runs
        Path(os.environ["SPARK_CDC_FUZZ_DUMP"]).write_text(json.dumps(dumped, indent=1, default=str))
    # Masks of other lengths than the column count, read against the table, stage as changes.
    assert masks["staged"], masks
    per_format = ", ".join(f"{fmt} {len(c)}" for fmt, c in sorted(cases.items()))
    record_property(
        "reliability",
        f"fuzz: {total} hostile messages ({per_format}; {RANDOM_CASES} random per format),"
        f" {sum(n for (_, outcome), n in outcomes.items() if outcome != 'staged')} quarantined or skipped",
    )
    assert total >= 5 * RANDOM_CASES
