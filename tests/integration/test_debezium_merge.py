"""The MERGE strategy of cdc_scd1 / cdc_scd2 (file_format delta, iceberg, hudi): the generated CREATE /
MERGE / view statements are handed to Spark's SQL parser, which needs no catalog, and the MERGE plans
are checked clause by clause. The strategy itself runs on real Delta Lake and Apache Iceberg in the
lakehouse lanes (test_lakehouse_merge.py), batch by batch over the Debezium history below
(batches()), against the same targets built by the parquet rewrite."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.landing import DbtProject, read_jsonl_messages

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[2] / "integration_tests" / "data" / "debezium_postgres" / "flink"
# Physical columns: _cdc_key, id, name, weight, then 7 (SCD1, per-column orders included) or 11 (SCD2)
# bookkeeping columns.
SCD1_STATE_COLUMNS = 11
SCD2_STATE_COLUMNS = 15


def scala_list(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]


def simple_name(obj: Any) -> str:
    return str(obj.getClass().getSimpleName())


def test_generated_statements_parse_and_merge_has_the_expected_clauses(
    project: DbtProject, schema: str
) -> None:
    project.dbt("run-operation", "render_merge_statements")
    statements = {
        r["name"]: r["sql"] for r in project.rows(f"select name, sql from `{schema}`.merge_statements")
    }
    parser = project.spark._jsparkSession.sessionState().sqlParser()
    # The parser does reject what is not SQL, so a parse below is evidence.
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        parser.parsePlan("merge into t using s on t.k = s.k when matched then")

    plans = {name: parser.parsePlan(sql) for name, sql in statements.items()}
    assert simple_name(plans["scd1_create_delta"]) == "ReplaceTableAsSelect"
    assert "using delta" in statements["scd1_create_delta"]
    assert "partitioned by (`name`)" in statements["scd1_create_delta"]
    assert simple_name(plans["scd2_create_iceberg"]) == "ReplaceTableAsSelect"
    assert simple_name(plans["scd2_create_hudi"]) == "CreateTableAsSelect"
    for kind in ("scd1", "scd2"):
        assert simple_name(plans[f"{kind}_view"]) == "CreateView"
        assert "'spark_cdc.consumed_through' = '2024-01-02 00:00:00'" in statements[f"{kind}_view"]
        assert "View" in simple_name(plans[f"{kind}_touched"])  # a temporary view

    for kind, n_columns in (("scd1", SCD1_STATE_COLUMNS), ("scd2", SCD2_STATE_COLUMNS)):
        plan = plans[f"{kind}_merge"]
        assert simple_name(plan) == "MergeIntoTable", kind
        condition = plan.mergeCondition().toString()
        assert "_cdc_key" in condition
        if kind == "scd2":
            assert "<=>" in condition and "_cdc_valid_from_ord" in condition
        matched = scala_list(plan.matchedActions())
        assert [simple_name(a) for a in matched] == ["DeleteAction", "UpdateAction"], kind
        assert "_cdc_merge_remove" in matched[0].condition().get().toString()
        assert matched[1].condition().isEmpty()
        assert len(scala_list(matched[1].assignments())) == n_columns
        not_matched = scala_list(plan.notMatchedActions())
        assert [simple_name(a) for a in not_matched] == ["InsertAction"], kind
        assert "_cdc_merge_remove" in not_matched[0].condition().get().toString()
        assert len(scala_list(not_matched[0].assignments())) == n_columns
        assert scala_list(plan.notMatchedBySourceActions()) == []


# --- the Debezium history and comparisons of test_debezium_storage.py (and the reliability tests) ---


def corpus(name: str) -> list[str]:
    return read_jsonl_messages(str(CORPUS / f"debezium-postgres-data-{name}.txt"))


def envelope(op: str, lsn: int, after: dict[str, Any] | None, before: dict[str, Any] | None = None) -> str:
    return json.dumps(
        {
            "before": before,
            "after": after,
            "source": {
                "version": "1.2.1.Final",
                "connector": "postgresql",
                "name": "fullfillment",
                "ts_ms": 1596000000000 + lsn,
                "snapshot": "false",
                "db": "postgres",
                "schema": "inventory",
                "table": "products",
                "txId": 700,
                "lsn": lsn,
            },
            "op": op,
            "ts_ms": 1596000000100 + lsn,
        }
    )


def truncate(lsn: int) -> str:
    return json.dumps(
        {
            "source": {
                "version": "1.2.1.Final",
                "connector": "postgresql",
                "ts_ms": 1596000000000 + lsn,
                "schema": "inventory",
                "table": "products",
                "txId": 800,
                "lsn": lsn,
            },
            "op": "t",
            "ts_ms": 1596000000001 + lsn,
        }
    )


def product(pid: int, name: str, description: str | None, weight: float) -> dict[str, Any]:
    return {"id": pid, "name": name, "description": description, "weight": weight}


def batches() -> list[list[str]]:
    shuffled = corpus("schema-exclude") * 2
    random.Random(20261124).shuffle(shuffled)
    scooter = product(101, "scooter", "Small 2-wheel scooter", 3.14)
    kite = product(300, "kite", "red kite", 0.3)
    return [
        shuffled[:11],
        shuffled[11:22],
        [*shuffled[22:], envelope("d", 34300000, None, kite)],
        [
            # Older than 106's applied update: splits its snapshot version (SCD2), stale (SCD1).
            envelope("u", 34100000, product(106, "hammer", "17oz carpenter hammer", 1.0)),
            # Older than 300's delete: history gains the insert, the key stays deleted.
            envelope("c", 34200000, kite),
            # Unchanged TOAST column keeps its value.
            envelope("u", 34300000, product(104, "mallet", "__debezium_unavailable_value", 0.7)),
            # A primary-key update 101 -> 401.
            envelope("d", 34310000, None, scooter),
            envelope("c", 34310000, {**scooter, "id": 401}),
            # A redelivery of an applied change.
            corpus("schema-include")[10],
            # Older than 107's applied update, with its values: 107's update no longer opens a
            # version (SCD2: that stored version is removed, the new one absorbs it).
            envelope("u", 34132000, product(107, "rocks", "box of assorted rocks", 5.1)),
        ],
        [
            truncate(34400000),
            envelope("c", 34500000, product(200, "bike", "after truncate", 9.0)),
            envelope("c", 34350000, product(201, "sled", "before truncate", 4.0)),
        ],
        [
            envelope("u", 34600000, product(200, "bike", "blue bike", 9.5)),
            envelope("c", 34390000, product(202, "ski", "older than the truncate", 2.0)),
        ],
    ]


RUN = ("run", "--select", "+products", "products_history")
# The same, with the MERGE targets (enabled in a lakehouse lane: SPARK_CDC_TABLE_FORMAT=delta|iceberg).
MERGE_RUN = (*RUN, "products_merge", "products_history_merge")


def physical(project: DbtProject, relation: str, scd1: bool) -> list[dict[str, Any]]:
    rows = project.rows(f"select * from {relation}")
    if scd1:  # apply time differs between two tables built by separate statements
        for r in rows:
            r.pop("_cdc_applied_at")
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def view(project: DbtProject, schema: str, model: str, scd1: bool) -> list[dict[str, Any]]:
    return physical(project, f"`{schema}`.{model}", scd1)


def props(project: DbtProject, schema: str, model: str) -> dict[str, str]:
    rows = project.rows(f"show tblproperties `{schema}`.{model}")
    return {r["key"]: r["value"] for r in rows if r["key"].startswith("spark_cdc.")}


def version_table(project: DbtProject, schema: str, model: str) -> str:
    return f"`{schema}`.{model}__cdc_v{props(project, schema, model)['spark_cdc.version']}"


def assert_same_targets(project: DbtProject, schema: str, hidden: bool = True) -> None:
    targets = (("products", "products_merge", True), ("products_history", "products_history_merge", False))
    for rewrite, merge, scd1 in targets:
        assert view(project, schema, merge, scd1) == view(project, schema, rewrite, scd1), merge
        if not hidden:
            continue
        # Hidden bookkeeping too: tombstones, truncate marker, stored changes.
        assert physical(project, f"`{schema}`.{merge}__cdc_state", scd1) == physical(
            project, version_table(project, schema, rewrite), scd1
        ), merge
        got, want = props(project, schema, merge), props(project, schema, rewrite)
        assert got.keys() == want.keys()
        for key in set(want) - {"spark_cdc.version", "spark_cdc.last_invocation_id"}:
            assert got[key] == want[key], (merge, key)
