"""Partitioned parquet targets (partition_by): changing the layout of an existing target asks for a
full refresh.

The models are in a throwaway project over the integration project's change stream; the same
project serves test_debezium_storage.py, where partitioned targets are built beside the versioned
rewrite and the MERGE strategy over one Debezium history (only the touched partitions are
rewritten; a run killed after a partition switch is rolled forward)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.corpora.debezium import batches
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.projects import model_sql, partitions_project
from tests.helpers.targets import view

pytestmark = pytest.mark.integration


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
