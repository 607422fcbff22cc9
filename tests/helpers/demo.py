"""The demo's build for the distributed run: the real Debezium corpus landed and DEMO_BUILD, run locally
by test_reliability_cluster.py and on the standalone cluster by cluster_demo.py, whose tables are
compared."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages
from tests.helpers.snapshots import rows

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "integration_tests" / "data" / "debezium_postgres" / "flink"
LONG = os.environ.get("SPARK_CDC_CLUSTER_TESTS") == "all"
DEMO_TARGETS = ("products", "products_history", "products_weight_history")
DEMO_BUILD = (
    ("build", "--exclude", "udf_smoke_sql", "udf_smoke_python")
    if LONG
    else ("build", "--select", "package:spark_cdc", *DEMO_TARGETS)
)


def schema_rows(spark: Any, schema: str) -> dict[str, list[dict[str, Any]]]:
    """Every table and view of `schema` except the hidden storage of CDC targets."""
    quoted = "`" + schema.replace("`", "``") + "`"
    names = sorted(r.tableName for r in spark.sql(f"show tables in {quoted}").collect() if not r.isTemporary)
    return {n: rows(spark, f"select * from {quoted}.`{n}`") for n in names if "__cdc_" not in n}


def demo_messages() -> list[str]:
    return read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))


def build_demo(project: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The demo's landing and DEMO_BUILD, narrowed to Debezium (the demo lands only Debezium
    messages); every table and view it leaves in `schema`. Run locally by test_reliability_cluster.py
    and on the cluster by cluster_demo.py."""
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium")
    land_messages(project.spark, f"{schema}_raw", "debezium", demo_messages())
    project.dbt(*DEMO_BUILD)
    return schema_rows(project.spark, schema)
