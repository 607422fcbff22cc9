"""Partitioned parquet targets (partition_by): a run rewrites only the partitions its batch touches.

Side by side in a throwaway project: cdc_scd1 / cdc_scd2 models partitioned by `name` and the same
models without partition_by (the versioned rewrite). Over the MERGE tests' Debezium history (several
names, a key moving between names, a primary-key change, deletes, a truncate) the views must hold the
same rows after every batch, and exactly the touched partitions get new directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dbt_spark_cdc.testing import FORMATS, DbtProject, land_messages
from test_debezium_merge import batches, physical, props, version_table, view

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = [("id", "int"), ("name", "string"), ("description", "string"), ("weight", "double")]
MARKER = "#truncate"
# partitioned model -> (same model without partition_by, is SCD1)
PAIRS = {"parts_scd1": ("flat_scd1", True), "parts_scd2": ("flat_scd2", False)}


def model_sql(schema: str, materialized: str, partitioned: bool) -> str:
    part = ", partition_by='name'" if partitioned else ""
    return (
        f"{{{{ config(materialized='{materialized}', unique_key='id', source_table='inventory.products', "
        f"cdc_format='debezium', file_format='parquet'{part}) }}}}\n"
        f"select * from `{schema}`.cdc_changes\n"
    )


def partitions_project(project: DbtProject, path: Path, schema: str) -> DbtProject:
    """A throwaway project over `{schema}`.cdc_changes that dispatches to its own macros first (the
    simulated crash of integration_tests/macros/crash_points.sql)."""
    (path / "models").mkdir()
    (path / "macros").mkdir()
    (path / "macros" / "crash_points.sql").write_text(
        (ROOT / "integration_tests" / "macros" / "crash_points.sql").read_text()
    )
    (path / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (path / "dbt_project.yml").write_text(
        "name: spark_cdc_partitions_it\nversion: '0.1.0'\nconfig-version: 2\n"
        "profile: spark_cdc_integration_tests\n"
        "dispatch:\n  - macro_namespace: spark_cdc\n    search_order: [spark_cdc_partitions_it, spark_cdc]\n"
        "vars: {spark_cdc: {formats: {"
        + ", ".join(f"{f}: {{enabled: {str(f == 'debezium').lower()}, relation: raw.{f}}}" for f in FORMATS)
        + "}}}\n"
    )
    models = {
        "parts_scd1": model_sql(schema, "cdc_scd1", True),
        "flat_scd1": model_sql(schema, "cdc_scd1", False),
        "parts_scd2": model_sql(schema, "cdc_scd2", True),
        "flat_scd2": model_sql(schema, "cdc_scd2", False),
    }
    columns = "".join(f"      - {{name: {c}, data_type: {t}}}\n" for c, t in COLUMNS)
    for name, text in models.items():
        (path / "models" / f"{name}.sql").write_text(text)
    (path / "models" / "models.yml").write_text(
        "version: 2\nmodels:\n" + "".join(f"  - name: {m}\n    columns:\n{columns}" for m in models)
    )
    side = DbtProject(str(path), profiles_dir=project.profiles_dir)
    side.dbt("deps", "--quiet")
    return side


def directories(project: DbtProject, schema: str, model: str) -> dict[str | None, str]:
    """Partition value -> the directory its files are in."""
    rows = project.rows(
        f"select distinct name, regexp_replace(_metadata.file_path, '/[^/]*$', '') as d "
        f"from `{schema}`.{model}__cdc_parts"
    )
    assert len({r["name"] for r in rows}) == len(rows)  # one directory per partition
    return {r["name"]: r["d"] for r in rows}


def stored(project: DbtProject, schema: str, model: str) -> list[dict[str, Any]]:
    return project.rows(f"select * from `{schema}`.{model}__cdc_parts")


def expected_touched(
    before: list[dict[str, Any]], after: list[dict[str, Any]], keys: set[str], truncate: bool
) -> set[str | None]:
    """Partitions of the stored rows of the batch's keys, before and after (all of them after a
    truncate), plus the truncate marker's when the marker row changed."""
    rows = [*before, *after]
    touched = {r["name"] for r in rows if r["_cdc_key"] != MARKER and (truncate or r["_cdc_key"] in keys)}
    marker = [
        sorted(json.dumps(r, sort_keys=True, default=str) for r in rows if r["_cdc_key"] == MARKER)
        for rows in (before, after)
    ]
    if marker[0] != marker[1]:
        touched |= {r["name"] for r in after if r["_cdc_key"] == MARKER}
    return touched


def assert_same_as_flat(side: DbtProject, schema: str) -> None:
    for parts, (flat, scd1) in PAIRS.items():
        assert view(side, schema, parts, scd1) == view(side, schema, flat, scd1), parts
        # Hidden bookkeeping too (tombstones, truncate marker, stored changes).
        assert physical(side, f"`{schema}`.{parts}__cdc_parts", scd1) == physical(
            side, version_table(side, schema, flat), scd1
        ), parts
        got, want = props(side, schema, parts), props(side, schema, flat)
        counted = ("spark_cdc.current_rows", "spark_cdc.tombstones", "spark_cdc.versions")
        for key in ("spark_cdc.consumed_through", *counted):
            assert got.get(key) == want.get(key), (parts, key)


def batch_keys(side: DbtProject, schema: str, watermark: str | None) -> tuple[set[str], bool]:
    where = f"where cdc_loaded_at > timestamp'{watermark}'" if watermark else ""
    rows = side.rows(f"select distinct key, op from `{schema}`.cdc_changes {where}")
    return {r["key"] for r in rows if r["key"] is not None}, any(r["op"] == "truncate" for r in rows)


RUN = ("run", "--select", *PAIRS, *(flat for flat, _ in PAIRS.values()))


def test_partitioned_targets_rewrite_only_touched_partitions_and_survive_a_crash(
    project: DbtProject, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = partitions_project(project, tmp_path, schema)
    monkeypatch.delenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH", raising=False)
    for i, batch in enumerate(batches()):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        project.dbt("run", "--select", "+cdc_changes")
        if i == 0:
            side.dbt(*RUN)
            assert_same_as_flat(side, schema)
            for parts in PAIRS:
                assert not project.spark.catalog.tableExists(f"{schema}.{parts}__cdc_v1")
                assert int(props(side, schema, parts)["spark_cdc.last_rewritten_partitions"]) == len(
                    directories(side, schema, parts)
                )
            continue
        before = {
            p: (stored(side, schema, p), directories(side, schema, p), props(side, schema, p)) for p in PAIRS
        }
        keys, truncate = batch_keys(side, schema, before["parts_scd1"][2]["spark_cdc.consumed_through"])
        if i in (3, 4):
            # Killed after the first partition switch: plan committed, watermark not advanced.
            monkeypatch.setenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH", "1")
            side.dbt("run", "--select", *PAIRS, expect_success=False)
            monkeypatch.delenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH")
            for parts in PAIRS:
                assert project.spark.catalog.tableExists(f"{schema}.{parts}__cdc_stage")
                assert props(side, schema, parts) == before[parts][2]
                # Half switched: the first partition has its new directory, not every one.
                switched = directories(side, schema, parts)
                changed = {n for n, d in switched.items() if before[parts][1].get(n) != d}
                assert changed and changed != set(switched) | set(before[parts][1]), (i, parts)
        side.dbt(*RUN)
        assert_same_as_flat(side, schema)
        for parts in PAIRS:
            assert not project.spark.catalog.tableExists(f"{schema}.{parts}__cdc_stage")
            after_rows, after_dirs = stored(side, schema, parts), directories(side, schema, parts)
            rewritten = int(props(side, schema, parts)["spark_cdc.last_rewritten_partitions"])
            if i in (3, 4):
                continue  # the re-run rewrote what the roll-forward had already switched
            touched = expected_touched(before[parts][0], after_rows, keys, truncate)
            assert rewritten == len(touched), (i, parts, touched)
            old_dirs = before[parts][1]
            for name, d in after_dirs.items():
                assert (d != old_dirs.get(name)) == (name in touched), (i, parts, name)
            if not truncate:
                assert rewritten < len(after_dirs), (i, parts)

    # No new changes: nothing is rewritten, not even the view.
    snapshot = {p: (directories(side, schema, p), props(side, schema, p)) for p in PAIRS}
    side.dbt(*RUN)
    assert {p: (directories(side, schema, p), props(side, schema, p)) for p in PAIRS} == snapshot


def test_adding_or_removing_partition_by_asks_for_a_full_refresh(
    project: DbtProject, schema: str, tmp_path: Path
) -> None:
    side = partitions_project(project, tmp_path, schema)
    land_messages(project.spark, f"{schema}_raw", "debezium", batches()[0])
    project.dbt("run", "--select", "+cdc_changes")
    side.dbt("run", "--select", "parts_scd1", "flat_scd1")
    models = tmp_path / "models"
    for name, partitioned in (("parts_scd1", False), ("flat_scd1", True)):
        (models / f"{name}.sql").write_text(model_sql(schema, "cdc_scd1", partitioned))
    land_messages(project.spark, f"{schema}_raw", "debezium", batches()[1])
    project.dbt("run", "--select", "+cdc_changes")
    result = side.dbt("run", "--select", "parts_scd1", "flat_scd1", expect_success=False)
    for r in result.result.results:
        if r.node.resource_type != "model":
            continue  # the package's on-run-end hook (run summary)
        assert "partition_by" in r.message and "--full-refresh" in r.message, r.message
    side.dbt("run", "--select", "parts_scd1", "flat_scd1", "--full-refresh")
    assert view(side, schema, "parts_scd1", True) == view(side, schema, "flat_scd1", True)
    assert project.spark.catalog.tableExists(f"{schema}.flat_scd1__cdc_parts")
    assert not project.spark.catalog.tableExists(f"{schema}.parts_scd1__cdc_parts")
