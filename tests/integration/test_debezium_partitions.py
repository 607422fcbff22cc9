"""Partitioned parquet targets (partition_by): changing the layout of an existing target asks for a
full refresh.

The models are in a throwaway project over the integration project's change stream; the same
project serves test_debezium_storage.py, where partitioned targets are built beside the versioned
rewrite and the MERGE strategy over one Debezium history (only the touched partitions are
rewritten; a run killed after a partition switch is rolled forward)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from test_debezium_merge import batches, view

from tests.helpers.landing import FORMATS, DbtProject, land_messages

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = [("id", "int"), ("name", "string"), ("description", "string"), ("weight", "double")]


def model_sql(schema: str, materialized: str, partitioned: bool) -> str:
    part = ", partition_by='name'" if partitioned else ""
    return (
        f"{{{{ config(materialized='{materialized}', unique_key='id', source_table='inventory.products', "
        f"cdc_format='debezium', file_format='parquet'{part}) }}}}\n"
        f"select * from `{schema}`.cdc_changes\n"
    )


MODELS = {
    "parts_scd1": ("cdc_scd1", True),
    "flat_scd1": ("cdc_scd1", False),
    "parts_scd2": ("cdc_scd2", True),
    "flat_scd2": ("cdc_scd2", False),
}


def partitions_project(
    project: DbtProject, path: Path, schema: str, names: Iterable[str] = tuple(MODELS)
) -> DbtProject:
    """A throwaway project over `{schema}`.cdc_changes with the models `names` of MODELS (name ->
    materialization, partitioned), that dispatches to its own macros first (the simulated crash of
    integration_tests/macros/crash_points.sql)."""
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
    models = {name: model_sql(schema, *MODELS[name]) for name in names}
    columns = "".join(f"      - {{name: {c}, data_type: {t}}}\n" for c, t in COLUMNS)
    for name, text in models.items():
        (path / "models" / f"{name}.sql").write_text(text)
    (path / "models" / "models.yml").write_text(
        "version: 2\nmodels:\n" + "".join(f"  - name: {m}\n    columns:\n{columns}" for m in models)
    )
    side = DbtProject(str(path), profiles_dir=project.profiles_dir)
    side.dbt("deps", "--quiet")
    return side


def test_adding_or_removing_partition_by_asks_for_a_full_refresh(
    project: DbtProject, schema: str, tmp_path: Path
) -> None:
    side = partitions_project(project, tmp_path, schema, ("parts_scd1", "flat_scd1"))
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
