"""The Debezium history's targets compared: the parquet rewrite (`products`, `products_history` of
integration_tests) against the MERGE targets beside it (`products_merge`, `products_history_merge`)
or the partitioned ones of test_debezium_storage.py, views, hidden rows and TBLPROPERTIES."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.landing import DbtProject

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
