"""The benchmark workloads are valid input: every format's generated log (out of order, redelivered,
DSQL records chunked) stages without quarantine and builds SCD1 targets equal to the source table the
event model says it describes, in two batches. If a benchmark measures spark_cdc on data it rejects
or misapplies, its numbers mean nothing; this test is what makes them mean something.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import land
from benchmarks.workload import Workload, columns, expected_current_rows
from tests.helpers.landing import FORMATS, DbtProject

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

# Small, but every knob is exercised: four changes per key, deletes and re-inserts, a fifth of the
# change pairs swapped across the batch boundary, a tenth redelivered, a fifth of DSQL records chunked.
WORKLOAD = Workload(
    events=600,
    keys=150,
    delete_fraction=0.25,
    out_of_order_fraction=0.2,
    duplicate_fraction=0.1,
    redelivery_lag=40,
    chunked_fraction=0.2,
)


@pytest.fixture
def bench(project: DbtProject, schema: str) -> DbtProject:
    side = DbtProject(str(ROOT / "benchmarks" / "project"))
    side._spark = project.spark
    side.dbt("deps", "--quiet")
    return side


def state(project: DbtProject, schema: str, fmt: str) -> dict[int, dict[str, Any]]:
    names = ", ".join(f"`{c.name}`" for c in columns(WORKLOAD))
    rows = project.rows(f"select {names} from `{schema}`.items_scd1_{fmt}")
    return {r["id"]: r for r in rows}


def partitioned_state(project: DbtProject, schema: str) -> dict[int, dict[str, Any]]:
    names = ", ".join(f"`{c.name}`" for c in columns(WORKLOAD))
    return {r["id"]: r for r in project.rows(f"select {names} from `{schema}`.items_scd1_partitioned")}


def test_every_format_log_builds_the_source_table_in_two_batches(
    project: DbtProject, bench: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPARK_CDC_BENCH_FORMATS", raising=False)
    first = replace(WORKLOAD, events=WORKLOAD.events // 2)
    second = replace(first, first_event=first.events)
    landed = {fmt: land(project.spark, fmt, first, f"{schema}_raw") for fmt in FORMATS}
    # Every SCD1 target; items_scd1_partitioned's batch two rewrites 100 partitions (a switch plan
    # longer than a metastore property holds). The SCD2 target is the apply suite's concern.
    build = ("run", "--exclude", "items_scd2")
    bench.dbt(*build)
    half = expected_current_rows(WORKLOAD, first.events)
    for fmt in FORMATS:
        assert state(project, schema, fmt) == half, fmt

    for fmt in FORMATS:
        landed[fmt] += land(project.spark, fmt, second, f"{schema}_raw")
    bench.dbt(*build)
    expected = expected_current_rows(WORKLOAD, WORKLOAD.events)
    assert len(expected) > WORKLOAD.keys // 2
    for fmt in FORMATS:
        assert state(project, schema, fmt) == expected, fmt
    assert partitioned_state(project, schema) == expected

    quarantined = project.rows(f"select cdc_format, reason_code from `{schema}`.cdc_quarantine")
    assert quarantined == []
    changes = {
        r["cdc_format"]: r["n"]
        for r in project.rows(f"select cdc_format, count(*) as n from `{schema}`.cdc_changes group by 1")
    }
    for fmt in FORMATS:
        # One staged row per raw record (DSQL fragments and Qlik metadata as counted skips), and at
        # least one change per event (redeliveries are changes that apply as no-ops).
        staged = project.rows(f"select count(*) as n from `{schema}`.stg_cdc__{fmt}")[0]["n"]
        assert staged == landed[fmt], fmt
        assert changes[fmt] >= WORKLOAD.events, fmt
