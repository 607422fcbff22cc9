"""Freshness contracts end to end: cdc_lag and its cdc_lag_within test (pass, warn, error, a format
without processing time), and cdc_pending_chunks_age on Aurora DSQL chunk reassembly (waiting too
long, quarantine overdue because reassembly did not run)."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps

from tests.helpers.landing import DbtProject, land_messages, qualified

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COMMIT_MS = 1_596_000_000_000
HOUR_MS = 3_600_000
#: Tests run only when all their parents are selected (the reason-code tests need the seed).
BUILD = ("build", "--indirect-selection", "cautious", "-s")


@pytest.fixture(autouse=True)
def contracts_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_CONTRACTS", "1")


def spark_cdc_vars(**contracts: Any) -> str:
    """--vars: the project's spark_cdc var with contract options set (CLI vars replace a whole
    top-level var, so the project's value is the starting point)."""
    project_vars = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]
    cfg = copy.deepcopy(project_vars["spark_cdc"])
    cfg["contracts"] = contracts
    return json.dumps({"spark_cdc": cfg})


def results_of(result: Any, test: str, model: str) -> list[Any]:
    """Results of generic test ``test`` attached to ``model`` (long test names are hashed)."""
    return [
        r
        for r in result.result.results
        if r.node.resource_type == "test"
        and r.node.test_metadata.name == test
        and str(r.node.attached_node).endswith(f".{model}")
    ]


def outcome(result: Any, test: str, model: str) -> tuple[str, int]:
    """(status, failures) of that test."""
    [found] = results_of(result, test, model)
    return str(found.status), int(found.failures)


def failing_rows(project: DbtProject, result: Any, test: str, model: str) -> list[dict[str, Any]]:
    """The failing rows of that test, from its compiled SQL."""
    [found] = results_of(result, test, model)
    return project.rows(found.node.compiled_code)


def land_at(
    project: DbtProject, schema: str, fmt: str, messages: list[str], ingested_at: dt.datetime
) -> None:
    """Land ``messages`` as landed at ``ingested_at`` (land_messages stamps the current time)."""
    name = qualified(f"{schema}_raw", fmt)
    last = project.spark.sql(f"select max(`offset`) from {name} where `partition` = 0").first()[0]
    start = 0 if last is None else int(last) + 1
    rows = [(0, start + i, None, m, ingested_at) for i, m in enumerate(messages)]
    ddl = "`partition` int, `offset` bigint, `key` string, `value` string, `ingested_at` timestamp"
    project.spark.createDataFrame(rows, ddl).write.insertInto(name)


def debezium(table: str, lsn: int, lag_ms: int) -> str:
    """A Debezium insert committed at a time derived from ``lsn``, emitted ``lag_ms`` later."""
    commit = COMMIT_MS + lsn
    schema_name, table_name = table.split(".")
    return json.dumps(
        {
            "before": None,
            "after": {"id": lsn, "name": f"item {lsn}"},
            "source": {
                "connector": "postgresql",
                "ts_ms": commit,
                "db": "postgres",
                "schema": schema_name,
                "table": table_name,
                "txId": lsn,
                "lsn": lsn,
                "snapshot": "false",
            },
            "op": "c",
            "ts_ms": commit + lag_ms,
        }
    )


def ydb(order_id: int, step: int) -> str:
    """A YDB JSON-mode change of /Root/shop/orders (virtual timestamp step in ms, no processing time)."""
    return json.dumps({"key": ["s1", order_id], "update": {"status": "new"}, "ts": [step, 1000 + order_id]})


def test_cdc_lag_within_passes_warns_and_errors_by_level(
    project: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium ydb")
    raw = f"{schema}_raw"
    land_messages(project.spark, raw, "debezium", [debezium("inventory.products", n, 100) for n in (1, 2, 3)])
    land_messages(project.spark, raw, "debezium", [debezium("reference.items", 10, 250)])
    land_messages(project.spark, raw, "ydb", [ydb(1, 1_700_000_000_000), ydb(2, 1_700_000_000_500)])
    result = project.dbt(*BUILD, "+cdc_lag")
    # Debezium lags 100 and 250 ms; YDB has no processing time, so by default it is not checked.
    assert outcome(result, "cdc_lag_within", "cdc_lag") == ("pass", 0)
    lag = {r["source_table"]: r for r in project.rows(f"select * from `{schema}`.cdc_lag")}
    assert set(lag) == {"inventory.products", "reference.items", "/Root/shop/orders"}
    products = lag["inventory.products"]
    assert (products["changes"], products["processing_lag_ms_p50"], products["processing_lag_ms_max"]) == (
        3,
        100,
        100,
    )
    assert lag["reference.items"]["processing_lag_ms_p95"] == 250
    orders = lag["/Root/shop/orders"]
    assert orders["processing_lag_ms_max"] is None
    assert orders["first_commit_ts"] == dt.datetime(2023, 11, 14, 22, 13, 20)
    assert orders["landing_lag_ms_max"] > 365 * 24 * HOUR_MS  # a 2023 changefeed replayed now

    # The same YDB source checked with landing lag as the fallback: over error_after (30 days).
    fallback = project.dbt("build", "-s", "freshness_lag_fallback", expect_success=False)
    assert outcome(fallback, "cdc_lag_within", "freshness_lag_fallback") == ("fail", 1)
    [row] = failing_rows(project, fallback, "cdc_lag_within", "freshness_lag_fallback")
    assert (row["source_table"], row["measure"], row["lag_level"], row["threshold"]) == (
        "/Root/shop/orders",
        "landing",
        "error",
        "error_after 30 day",
    )

    # A second run: one products change emitted 2 h after its commit, an items change 3 h after.
    land_messages(
        project.spark,
        raw,
        "debezium",
        [debezium("inventory.products", 4, 100), debezium("inventory.products", 5, 2 * HOUR_MS)],
    )
    land_messages(project.spark, raw, "debezium", [debezium("reference.items", 11, 3 * HOUR_MS)])
    result = project.dbt(*BUILD, "+cdc_lag")
    assert outcome(result, "cdc_lag_within", "cdc_lag") == ("warn", 2)  # default: warn_after 1 hour

    # error_after 150 minutes: items (3 h) is an error, products (2 h) still a warning.
    both = spark_cdc_vars(lag_error_after={"count": 150, "period": "minute"})
    result = project.dbt("test", "-s", "cdc_lag", "--vars", both, expect_success=False)
    assert outcome(result, "cdc_lag_within", "cdc_lag") == ("fail", 2)
    rows = {r["source_table"]: r for r in failing_rows(project, result, "cdc_lag_within", "cdc_lag")}
    assert {t: (r["lag_level"], r["lag_ms"], r["threshold_ms"], r["measure"]) for t, r in rows.items()} == {
        "inventory.products": ("warn", 2 * HOUR_MS, HOUR_MS, "processing"),
        "reference.items": ("error", 3 * HOUR_MS, 150 * 60_000, "processing"),
    }

    # Misuse is a compile error (raised while dbt parses the test) naming the test, the model, the
    # argument and the fix.
    bad = spark_cdc_vars(lag_warn_after={"count": 1, "period": "fortnight"})
    message = str(project.dbt("test", "-s", "cdc_lag", "--vars", bad, expect_success=False).exception)
    assert "test cdc_lag_within on model 'cdc_lag': warn_after must be none or {count" in message
    assert "Fix:" in message


def dsql_order(order_id: int, commit_ns: int) -> dict[str, Any]:
    """A DSQL insert into public.orders whose after image is large enough to chunk."""
    return {
        "type": "full",
        "op": "c",
        "before": None,
        "after": {"order_id": order_id, "note": "n" * 300},
        "source": {
            "version": "1.0",
            "ts_ms": commit_ns // 1_000_000,
            "ts_ns": commit_ns,
            "txId": f"tx{commit_ns}",
            "schema": "public",
            "table": "orders",
            "db": "postgres",
            "cluster": "kmabugltfmjdaj2siqr2qbxgju",
        },
        "ts_ms": commit_ns // 1_000_000 + 125,
        "ts_ns": commit_ns + 125_483_291,
    }


def incomplete(order_id: int, chunk_id: str) -> list[str]:
    """A chunked record with the first two of its three fragments."""
    main, fragments = chunk_record(
        dsql_order(order_id, 1_705_318_200_000_000_000 + order_id), {"after": chunk_id}
    )
    return dumps([main, *fragments[:2]])


def orphan(chunk_id: str) -> str:
    return json.dumps({"type": "fragment", "chunk_id": chunk_id, "index": 0, "data": "{"})


def test_cdc_pending_chunks_age_flags_long_waits_and_overdue_quarantine(
    project: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "aurora_dsql")
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    pending = "stg_cdc__aurora_dsql_pending_chunks"
    # Waiting since now, and for 2 hours: both within the default (incomplete_chunk_max_age_hours,
    # 24); the second is over a 1-hour max_age.
    land_messages(
        project.spark, f"{schema}_raw", "aurora_dsql", [*incomplete(1, "chunk-now"), orphan("orphan-now")]
    )
    land_at(project, schema, "aurora_dsql", incomplete(2, "chunk-2h"), now - dt.timedelta(hours=2))
    result = project.dbt(*BUILD, f"+{pending}")
    assert outcome(result, "cdc_pending_chunks_age", pending) == ("pass", 0)
    assert len(project.rows(f"select * from `{schema}`.{pending}")) == 3
    one_hour = spark_cdc_vars(pending_chunk_max_age={"count": 1, "period": "hour"})
    result = project.dbt("test", "-s", pending, "--vars", one_hour, expect_success=False)
    assert outcome(result, "cdc_pending_chunks_age", pending) == ("fail", 1)
    [row] = failing_rows(project, result, "cdc_pending_chunks_age", pending)
    assert (row["chunk_id"], row["failure"], row["fragments_received"], row["total_fragments"]) == (
        "chunk-2h",
        "waiting_too_long",
        2,
        3,
    )
    assert 2 * 3600 <= row["waiting_seconds"] < 3 * 3600

    # Two days old, and only staging runs: the view leaves them out (due for quarantine), but
    # reassembly never quarantined them.
    land_at(
        project,
        schema,
        "aurora_dsql",
        [*incomplete(3, "chunk-2d"), orphan("orphan-2d")],
        now - dt.timedelta(days=2),
    )
    project.dbt("run", "-s", "stg_cdc__aurora_dsql")
    assert len(project.rows(f"select * from `{schema}`.{pending}")) == 3
    result = project.dbt("test", "-s", pending, expect_success=False)
    assert outcome(result, "cdc_pending_chunks_age", pending) == ("fail", 2)
    rows = {r["chunk_id"]: r for r in failing_rows(project, result, "cdc_pending_chunks_age", pending)}
    assert {c: (r["failure"], r["main_record_received"]) for c, r in rows.items()} == {
        "chunk-2d": ("quarantine_overdue", True),
        "orphan-2d": ("quarantine_overdue", False),
    }
    assert all("reassembly/quarantine did not run" in r["failure_detail"] for r in rows.values())

    # Reassembly runs, quarantines both as incomplete_chunk, and the test passes again.
    result = project.dbt(*BUILD, f"+{pending}")
    assert outcome(result, "cdc_pending_chunks_age", pending) == ("pass", 0)
    quarantined = project.rows(
        f"select count(*) as n from `{schema}`.stg_cdc__aurora_dsql_reassembled"
        " where reason_code = 'incomplete_chunk'"
    )
    assert quarantined[0]["n"] == 2
