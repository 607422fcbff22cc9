"""Data contracts of the change stream: cdc_valid_change_stream, cdc_records_accounted (with the
cdc_accounting ledger) and cdc_quarantine_empty, on a real Debezium + Aurora DSQL stream, checked by
the exact failing-row counts and statuses dbt reports."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps

from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages
from tests.helpers.results import assert_records_accounted, dbt_test_results

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FLINK = ROOT / "integration_tests" / "data" / "debezium_postgres" / "flink"
FORMATS = ("debezium", "aurora_dsql")
BUILD = ("build", "--select", "package:spark_cdc", "path:models/contracts/stream")
TEST_ACCOUNTED = ("test", "--select", "cdc_accounting", "--store-failures")
TS_NS = 1705318200000000000


@pytest.fixture(autouse=True)
def stream_formats(only_module_format: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Contract fixtures on, and only the two formats this module lands (keeps the builds short)."""
    monkeypatch.setenv("SPARK_CDC_IT_CONTRACTS", "1")
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", " ".join(FORMATS))


def spark_cdc_vars(**contracts: Any) -> str:
    """--vars replacing var('spark_cdc'): the project's value with `contracts` options set."""
    project_vars = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]
    cfg = copy.deepcopy(project_vars["spark_cdc"])
    cfg["contracts"] = contracts
    return json.dumps({"spark_cdc": cfg})


def dsql_record(commit_ns: int, order_id: int, note: str) -> dict[str, Any]:
    return {
        "type": "full",
        "op": "c",
        "before": None,
        "after": {"order_id": order_id, "item_id": 1, "quantity": 2, "price": "1.50", "note": note},
        "source": {
            "version": "1.0",
            "ts_ns": commit_ns,
            "txId": f"tx{commit_ns}",
            "schema": "public",
            "table": "order_items",
        },
        "ts_ns": commit_ns + 125,
    }


def land_stream(project: DbtProject, schema: str) -> None:
    """Debezium: the Flink corpus (partition 0) and two messages on partition 1. DSQL: a full record,
    a chunked record complete in 3 fragments (one redelivered), a chunked record still waiting for
    one of its 2 fragments."""
    debezium = read_jsonl_messages(str(FLINK / "debezium-postgres-data-schema-exclude.txt"))
    land_messages(project.spark, f"{schema}_raw", "debezium", debezium)
    land_messages(project.spark, f"{schema}_raw", "debezium", debezium[:2], partition=1)
    main, frags = chunk_record(dsql_record(TS_NS + 10, 7, "x" * 300), {"after": "chunk-a"})
    waiting, waiting_frags = chunk_record(
        dsql_record(TS_NS + 20, 8, "y" * 300), {"after": "chunk-b"}, fragments=2
    )
    full = dsql_record(TS_NS, 6, "small")
    messages = dumps([full, frags[2], main, frags[0], frags[1], frags[2], waiting, waiting_frags[0]])
    land_messages(project.spark, f"{schema}_raw", "aurora_dsql", messages)


def remove_staged_rows(project: DbtProject, schema: str, model: str, where: str) -> int:
    """Delete the rows of staging table `model` matching `where` by hand (a parquet table: rewritten
    through a temporary copy, since Spark cannot overwrite a table it reads); returns how many."""
    spark, table, copy_ = project.spark, f"`{schema}`.{model}", f"`{schema}`.{model}__copy"
    removed = int(project.rows(f"select count(*) as n from {table} where {where}")[0]["n"])
    spark.sql(f"drop table if exists {copy_}")
    spark.sql(f"create table {copy_} using parquet as select * from {table}")
    spark.sql(f"insert overwrite table {table} select * from {copy_} where not ({where})")
    spark.sql(f"drop table {copy_}")
    return removed


def unaccounted(
    project: DbtProject, expect_success: bool = False, *extra: str
) -> tuple[tuple[str, int], list[Any]]:
    """Run cdc_accounting's test; returns its (status, failures) and the stored failing rows."""
    result = project.dbt(*TEST_ACCOUNTED, *extra, expect_success=expect_success)
    [(status, failures, relation)] = dbt_test_results(result, "cdc_records_accounted")
    rows = project.rows(
        f"select cdc_format, raw_partition, raw_order, raw_excerpt, lost_at from {relation}"
        " order by cdc_format, raw_partition, raw_order"
    )
    return (status, failures), [
        (r["cdc_format"], r["raw_partition"], int(r["raw_order"]), r["lost_at"]) for r in rows
    ]


def test_clean_stream_passes_and_lost_staged_rows_are_caught(project: DbtProject, schema: str) -> None:
    land_stream(project, schema)
    result = project.dbt(*BUILD)

    assert [r[:2] for r in dbt_test_results(result, "cdc_valid_change_stream_cdc_changes")] == [("pass", 0)]
    assert [r[:2] for r in dbt_test_results(result, "cdc_quarantine_empty")] == [("pass", 0)]
    # The broken fixture: every violation found (severity warn keeps the build going).
    assert [r[:2] for r in dbt_test_results(result, "cdc_valid_change_stream_stream_invalid")] == [
        ("warn", 8)
    ]
    assert_records_accounted(project, schema, result, FORMATS)
    ledger = {
        (r["cdc_format"], r["outcome"], r["reason_code"]): r["records"]
        for r in project.rows(f"select * from `{schema}`.cdc_accounting")
    }
    assert {k: v for k, v in ledger.items() if k[0] == "aurora_dsql"} == {
        ("aurora_dsql", "change", None): 2,  # the full record and the reassembled chunk-a
        ("aurora_dsql", "consumed", "fragment_buffered"): 4,  # chunk-a's 3 fragments + 1 redelivery
        ("aurora_dsql", "pending", "chunked_buffered"): 1,
        ("aurora_dsql", "pending", "fragment_buffered"): 1,
    }
    assert ledger[("debezium", "change", None)] >= 10

    # Rows lost by hand, in one go: a middle row of partition 0 (lost by staging), the highest row
    # of partition 1 (the watermark drops below its raw record: unstaged, a failure after a build
    # unless allowed) and the reassembled chunk-a record (its main record and 4 fragment rows).
    lost = (
        "(raw_ref.partition = '0' and raw_ref.order = 3) or (raw_ref.partition = '1' and raw_ref.order = 1)"
    )
    assert remove_staged_rows(project, schema, "stg_cdc__debezium", lost) == 2
    assert (
        remove_staged_rows(project, schema, "stg_cdc__aurora_dsql_reassembled", "record_status = 'change'")
        == 1
    )
    lost_chunk = [("aurora_dsql", "0", n, "reassembly") for n in (1, 2, 3, 4, 5)]
    status, rows = unaccounted(project)
    assert status == ("fail", 7)
    assert rows == [*lost_chunk, ("debezium", "0", 3, "staging"), ("debezium", "1", 1, "watermark")]

    status, rows = unaccounted(project, False, "--vars", spark_cdc_vars(completeness_allow_unstaged=True))
    assert status == ("fail", 6)
    assert rows == [*lost_chunk, ("debezium", "0", 3, "staging")]
    ledger = {
        (r["cdc_format"], r["outcome"], r["reason_code"]): r["records"]
        for r in project.rows(
            f"select * from `{schema}`.cdc_accounting where outcome in ('unstaged', 'unaccounted')"
        )
    }
    assert ledger == {
        ("aurora_dsql", "unaccounted", "reassembly"): 5,
        ("debezium", "unaccounted", "staging"): 1,
        ("debezium", "unstaged", "watermark"): 1,
    }


def test_quarantine_severity_is_warn_by_default_and_error_when_configured(
    project: DbtProject, schema: str
) -> None:
    good = dsql_record(TS_NS, 6, "ok")
    no_table = {**dsql_record(TS_NS + 1, 7, "no table"), "source": {"ts_ns": TS_NS + 1}}
    land_messages(
        project.spark, f"{schema}_raw", "aurora_dsql", [*dumps([good, no_table]), "{not json", "[1"]
    )
    result = project.dbt(*BUILD)
    # Two reason codes (missing_source_table; malformed_json twice): one failing row each, a warning.
    assert [r[:2] for r in dbt_test_results(result, "cdc_quarantine_empty")] == [("warn", 2)]
    assert_records_accounted(project, schema, result, FORMATS)

    strict = spark_cdc_vars(quarantine_severity="error")
    result = project.dbt("test", "--select", "cdc_quarantine", "--vars", strict, expect_success=False)
    assert [r[:2] for r in dbt_test_results(result, "cdc_quarantine_empty")] == [("fail", 2)]

    result = project.dbt(
        "test",
        "--select",
        "cdc_quarantine",
        "--vars",
        spark_cdc_vars(quarantine_severity="fatal"),
        expect_success=False,
    )
    assert "quarantine_severity must be 'warn' or 'error'" in str(result.exception)
