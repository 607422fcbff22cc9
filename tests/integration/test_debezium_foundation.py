"""Debezium end to end through `dbt build`: the flink corpus, redelivery, bad records, SCD1 rules."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from tests.helpers.corpora.debezium import CORPUS, corpus
from tests.helpers.corpora.debezium import envelope as _envelope
from tests.helpers.landing import DbtProject, RawMessage, land_messages
from tests.helpers.results import assert_records_accounted

pytestmark = pytest.mark.integration

EXPECTED = sorted(
    (json.loads(line) for line in (CORPUS / "expected.jsonl").read_text().splitlines() if line.strip()),
    key=lambda r: r["id"],
)
# The SCD2 targets have their own modules (test_debezium_scd2.py, test_apply_reference_formats.py);
# orders and debezium_all_types (other source tables: empty here) theirs (test_contracts_targets.py,
# test_debezium_types.py). Eager test selection: excluding a model excludes its tests (the buildable
# default of conftest.py would still run the SCD2 targets' reconciliation tests, whose parent
# products is built).
BUILD = (
    "build",
    "--indirect-selection",
    "eager",
    "--exclude",
    "udf_smoke_sql",
    "udf_smoke_python",
    "products_history",
    "products_weight_history",
    "orders",
    "debezium_all_types",
)


def products(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    return project.rows(f"select id, name, description, weight from `{schema}`.products order by id")


def reasons(project: DbtProject, schema: str, model: str) -> Counter[str]:
    rows = project.rows(f"select reason_code from `{schema}`.{model}")
    return Counter(r["reason_code"] for r in rows)


def props(project: DbtProject, schema: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.products")}


def envelope(op: str, lsn: int, after: dict[str, Any] | None, before: dict[str, Any] | None = None) -> str:
    """A change of inventory.products at LSN `lsn`, all committed at the same instant."""
    return _envelope(op, lsn, after, before, ts_ms=1596010999000)


def test_flink_corpus_with_schema_block_gives_expected_state(project: DbtProject, schema: str) -> None:
    landed = land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    assert landed == 16
    project.dbt(*BUILD)

    assert products(project, schema) == EXPECTED
    assert all(r["id"] != 111 for r in products(project, schema))
    assert reasons(project, schema, "cdc_quarantine") == Counter()
    assert reasons(project, schema, "cdc_skipped") == Counter()
    changes = project.rows(f"select op, is_snapshot, seq, type_hints from `{schema}`.cdc_changes")
    assert Counter(r["op"] for r in changes) == Counter(
        {"snapshot": 9, "update": 4, "insert": 2, "delete": 1}
    )
    assert all(r["is_snapshot"] == (r["op"] == "snapshot") for r in changes)
    assert {int(r["seq"]["s2"]) for r in changes} >= {34078720, 34133800}
    hints = changes[0]["type_hints"]
    assert json.loads(hints["weight"])["type"] == "double"
    assert set(hints) == {"id", "name", "description", "weight"}
    # The target's input view kept the plan Spark analysed (its later statements do not resolve the
    # view chain again), and the setting that did it is back to the session's own value.
    view = project.spark._jsparkSession.sessionState().catalog().getRawTempView("products__cdc_input")
    assert view.isDefined() and view.get().plan().isDefined()
    assert project.spark.conf.get("spark.sql.legacy.storeAnalyzedPlanForView") == "false"


# In `make test` the randomized reference suite (test_apply_reference_formats.py) delivers every
# format's histories shuffled and redelivered, and checks that a re-run rewrites nothing.
@pytest.mark.long
def test_shuffled_duplicated_batches_converge_and_rerun_is_a_no_op(project: DbtProject, schema: str) -> None:
    messages = corpus("schema-exclude") * 2
    random.Random(20261122).shuffle(messages)
    for batch in (messages[:11], messages[11:22], messages[22:]):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        project.dbt(*BUILD)
    assert products(project, schema) == EXPECTED
    assert reasons(project, schema, "cdc_quarantine") == Counter()

    before = props(project, schema)
    result = project.dbt(*BUILD)
    # Every raw message of the shuffled, duplicated batches is accounted for.
    assert_records_accounted(project, schema, result, ("debezium",))
    after = props(project, schema)
    assert after["spark_cdc.version"] == before["spark_cdc.version"]
    assert after["spark_cdc.consumed_through"] == before["spark_cdc.consumed_through"]
    assert products(project, schema) == EXPECTED
    staged = project.rows(f"select count(*) as n from `{schema}`.stg_cdc__debezium")[0]["n"]
    assert staged == 32


def test_bad_records_are_quarantined_or_counted_and_the_run_goes_on(project: DbtProject, schema: str) -> None:
    bad: list[RawMessage | str | None] = [
        '{"before": null, "after": {"id": 1',  # truncated JSON
        envelope("x", 34200000, {"id": 101, "name": "scooter", "description": "x", "weight": 1.0}),
        None,  # Kafka tombstone after a delete
        # A logical decoding message (pg_logical_emit_message): not a row change.
        json.dumps(
            {
                "op": "m",
                "ts_ms": 1596010999200,
                "source": {"connector": "postgresql", "lsn": 34200100, "ts_ms": 1596010999100},
                "message": {"prefix": "audit", "content": "aGVsbG8="},
            }
        ),
    ]
    land_messages(project.spark, f"{schema}_raw", "debezium", [*corpus("schema-include"), *bad])
    project.dbt(*BUILD)

    assert products(project, schema) == EXPECTED
    assert reasons(project, schema, "cdc_quarantine") == Counter({"malformed_json": 1, "unknown_op": 1})
    assert reasons(project, schema, "cdc_skipped") == Counter({"tombstone": 1, "logical_message": 1})
    quarantined = project.rows(f"select * from `{schema}`.cdc_quarantine order by reason_code")
    assert quarantined[0]["raw_value"].startswith('{"before": null')
    assert quarantined[1]["reason_detail"] == "op=x"
    assert all(q["raw_ref"]["order"] is not None for q in quarantined)


def test_delete_without_images_takes_key_from_message_key(project: DbtProject, schema: str) -> None:
    messages = corpus("replica-identity")
    *rest, final_delete = messages
    land_messages(project.spark, f"{schema}_raw", "debezium", rest)
    # REPLICA IDENTITY DEFAULT: before and after are null; the key exists only in the Kafka key.
    land_messages(project.spark, f"{schema}_raw", "debezium", [final_delete])
    project.dbt(*BUILD)
    assert reasons(project, schema, "cdc_quarantine") == Counter({"missing_key": 1})
    assert {r["id"]: r["weight"] for r in products(project, schema)}[111] == pytest.approx(5.17)

    key = json.dumps(
        {"schema": {"type": "struct", "fields": [{"type": "int32", "field": "id"}]}, "payload": {"id": 111}}
    )
    redelivered = RawMessage(value=final_delete, key=key)
    land_messages(project.spark, f"{schema}_raw", "debezium", [redelivered])
    project.dbt(*BUILD)
    assert products(project, schema) == EXPECTED


def test_scd1_ignores_older_changes_and_keeps_deletes_durable(project: DbtProject, schema: str) -> None:
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    project.dbt(*BUILD)
    late = [
        # An update of 106 older than its last applied change (lsn 34131104): ignored.
        envelope("u", 34100000, {"id": 106, "name": "hammer", "description": "stale", "weight": 9.9}),
        # 111 was deleted at lsn 34133800; an older insert must not resurrect it.
        envelope("c", 34133000, {"id": 111, "name": "ghost", "description": "stale", "weight": 1.0}),
        # A newer update of 101 applies; a present null becomes null.
        envelope("u", 34300000, {"id": 101, "name": "scooter", "description": None, "weight": 3.5}),
    ]
    land_messages(project.spark, f"{schema}_raw", "debezium", late)
    project.dbt(*BUILD)

    state = {r["id"]: r for r in products(project, schema)}
    assert state[106]["description"] == "18oz carpenter hammer"
    assert 111 not in state
    assert state[101] == {"id": 101, "name": "scooter", "description": None, "weight": 3.5}
    assert len(state) == 10


def test_unchanged_toast_column_keeps_its_value(project: DbtProject, schema: str) -> None:
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    toast = envelope(
        "u",
        34300000,
        {"id": 104, "name": "mallet", "description": "__debezium_unavailable_value", "weight": 0.7},
    )
    land_messages(project.spark, f"{schema}_raw", "debezium", [toast])
    project.dbt(*BUILD)
    state = {r["id"]: r for r in products(project, schema)}
    assert state[104] == {
        "id": 104,
        "name": "mallet",
        "description": "12oz carpenter's hammer",
        "weight": 0.7,
    }


def test_truncate_removes_older_rows_and_later_changes_apply(project: DbtProject, schema: str) -> None:
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    project.dbt(*BUILD)
    truncate = json.dumps(
        {
            "source": {
                "version": "1.2.1.Final",
                "connector": "postgresql",
                "ts_ms": 1596011000000,
                "schema": "inventory",
                "table": "products",
                "txId": 800,
                "lsn": 34400000,
            },
            "op": "t",
            "ts_ms": 1596011000001,
        }
    )
    after = envelope(
        "c", 34500000, {"id": 200, "name": "new", "description": "after truncate", "weight": 2.0}
    )
    older = envelope(
        "c", 34350000, {"id": 201, "name": "old", "description": "before truncate", "weight": 2.0}
    )
    land_messages(project.spark, f"{schema}_raw", "debezium", [after, truncate])
    project.dbt(*BUILD)
    assert [r["id"] for r in products(project, schema)] == [200]
    # An insert older than the truncate, delivered late, never appears.
    land_messages(project.spark, f"{schema}_raw", "debezium", [older])
    project.dbt(*BUILD)
    assert [r["id"] for r in products(project, schema)] == [200]


def test_full_refresh_rebuilds_the_same_table(project: DbtProject, schema: str) -> None:
    messages = corpus("schema-include")
    land_messages(project.spark, f"{schema}_raw", "debezium", messages[:8])
    project.dbt(*BUILD)
    land_messages(project.spark, f"{schema}_raw", "debezium", messages[8:])
    project.dbt(*BUILD)
    incremental = products(project, schema)
    project.dbt(*BUILD, "--full-refresh")
    assert products(project, schema) == incremental == EXPECTED
    assert reasons(project, schema, "cdc_quarantine") == Counter()


def test_sql_and_python_models_call_registered_udfs(project: DbtProject, schema: str) -> None:
    project.dbt("build", "--select", "udf_smoke_sql", "udf_smoke_python")
    rows = project.rows(
        f"select * from `{schema}`.udf_smoke_sql"
        f" union all select * from `{schema}`.udf_smoke_python order by caller"
    )
    assert rows == [
        {"caller": "python", "crc32c_check": 3808858755, "decimal_check": "25.50"},
        {"caller": "sql", "crc32c_check": 3808858755, "decimal_check": "1200.00"},
    ]


def test_incremental_staging_reads_past_the_watermark_of_every_partition(
    project: DbtProject, schema: str
) -> None:
    """The row-group skip bound (the lowest watermark of any partition) must never hide a message:
    a partition new to the raw table starts at offset 0, below the other partition's watermark."""

    def message(i: int) -> str:
        return envelope("c", 5000 + i, {"id": 900 + i, "name": f"n{i}", "description": "d", "weight": 1.0})

    raw = f"{schema}_raw"
    land_messages(project.spark, raw, "debezium", [message(i) for i in range(6)], partition=0)
    project.dbt("run", "--select", "stg_cdc__debezium")
    land_messages(project.spark, raw, "debezium", [message(i) for i in range(6, 8)], partition=1)
    land_messages(project.spark, raw, "debezium", [message(i) for i in range(8, 10)], partition=0)
    result = project.dbt("run", "--select", "stg_cdc__debezium")
    [node] = [r.node for r in result.result.results if r.node.name == "stg_cdc__debezium"]
    # The bound is written (so the parquet reader can skip old row groups): the lowest of partition
    # 0's watermark (5) and the lowest offset of partition 1, new to staging (0). Only numbers are
    # read back into the SQL text, never a partition's value (data).
    assert "r.`offset` >= 0 or r.`offset` is null" in node.compiled_code, node.compiled_code
    assert "cast('1' as int)" not in node.compiled_code, node.compiled_code

    def staged() -> list[tuple[str, int]]:
        rows = project.rows(
            f"select raw_ref.partition as p, raw_ref.order as o from `{schema}`.stg_cdc__debezium"
        )
        return sorted((r["p"], int(r["o"])) for r in rows)

    expected = sorted([("0", o) for o in range(8)] + [("1", 0), ("1", 1)])
    assert staged() == expected
    project.dbt("run", "--select", "stg_cdc__debezium")
    assert staged() == expected
