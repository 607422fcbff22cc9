"""The MERGE storage of cdc_scd1 / cdc_scd2 on real Delta Lake or Apache Iceberg.

Runs in the lakehouse lanes (SPARK_CDC_TABLE_FORMAT=delta or iceberg: the process's Spark session
loads that format, tests/helpers/lakehouse.py): `make test`'s Delta lane, both lanes of `make
test-lakehouse` and `make test-long`; skipped elsewhere. `products_merge` and
`products_history_merge` (file_format = that format) are built beside the parquet rewrite (`products`,
`products_history`) over the Debezium history of tests/helpers/corpora/debezium.py (batches(): several
names, late changes splitting SCD2 versions, TOAST, a primary-key change, redelivery, deletes, a
truncate and changes after it), in six batches. After each, the MERGE targets must equal the rewrite
(views, hidden rows, TBLPROPERTIES) and the state table must be a table of the format with one new
commit (a MERGE) per run; products_merge's table properties (Delta's change data feed, Iceberg's
merge-on-read) take effect. Then a re-run after a crash between the MERGE (committed) and the view swap
changes no row, and a full refresh (CREATE OR REPLACE) rebuilds the same views.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.corpora.debezium import batches, corpus
from tests.helpers.lakehouse import table_format
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.targets import MERGE_RUN, assert_same_targets, physical, props

FORMAT = table_format()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(FORMAT is None, reason="a lakehouse lane only (SPARK_CDC_TABLE_FORMAT=delta|iceberg)"),
]
MODELS = ("products_merge", "products_history_merge")
# The history is Debezium's: the other formats' staging (empty here) is not built (conftest.py).
IT_FORMATS = ("debezium",)


def commits(project: DbtProject, table: str) -> list[dict[str, Any]]:
    """The table's commits, oldest first, as the format records them: Delta's history (operation,
    metrics), Iceberg's snapshots (operation, summary). Either fails on a table of another format."""
    if FORMAT == "delta":
        rows = project.rows(f"describe history {table}")
        return sorted(rows, key=lambda r: int(r["version"]))
    return project.rows(f"select operation, summary from {table}.snapshots order by committed_at")


def merge_commit(commit: dict[str, Any]) -> bool:
    # Iceberg records a MERGE that rewrites or deletes rows as an overwrite, one that only adds as append.
    return (
        commit["operation"] == "MERGE"
        if FORMAT == "delta"
        else commit["operation"] in ("overwrite", "append")
    )


def test_merge_targets_equal_the_rewrite_after_every_batch(project: DbtProject, schema: str) -> None:
    redelivered = json.loads(corpus("schema-include")[10])["payload"]
    touched = {106, 300, 104, 101, 401, 107, (redelivered["after"] or redelivered["before"])["id"]}
    states = {m: f"`{schema}`.{m}__cdc_state" for m in MODELS}
    seen = {m: 0 for m in MODELS}
    for i, batch in enumerate(batches()):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        project.dbt(*MERGE_RUN)  # the change stream, the rewrite and the MERGE targets
        assert_same_targets(project, schema)
        for model, state in states.items():
            history = commits(project, state)
            # The first build creates the state table; every later run adds one commit, its MERGE.
            assert len(history) == seen[model] + 1, (i, model, history[seen[model] :])
            assert i == 0 or merge_commit(history[-1]), (i, model, history[-1])
            assert not project.spark.catalog.tableExists(f"{schema}.{model}__cdc_v1")
            seen[model] = len(history)
        if i == 3 and FORMAT == "delta":
            # Without a truncate the MERGE reads the touched keys' rows only, never the whole state.
            metrics = commits(project, states["products_merge"])[-1]["operationMetrics"]
            assert int(metrics["numSourceRows"]) == len(touched), metrics
            assert int(metrics["numTargetRowsDeleted"]) == 0, metrics
    assert [r["id"] for r in project.rows(f"select id from `{schema}`.products_merge")] == [200]
    assert len(project.rows(f"select * from `{schema}`.products_history_merge")) > 20

    # products_merge's tblproperties: Delta's change data feed gives the target's own changes, one
    # commit per run; Iceberg's merge-on-read MERGE writes delete files instead of rewriting data.
    if FORMAT == "delta":
        changes = project.rows(
            "select id, _cdc_deleted, _change_type, _commit_version"
            f" from table_changes('{schema}.products_merge__cdc_state', 0)"
        )
        assert {"insert", "update_preimage", "update_postimage"} <= {r["_change_type"] for r in changes}
        assert len({r["_commit_version"] for r in changes}) == len(batches())
        # The primary-key change 101 -> 401 deletes 101: its row becomes a tombstone.
        assert any(
            r["id"] == 101 and r["_change_type"] == "update_postimage" and r["_cdc_deleted"] for r in changes
        ), [r for r in changes if r["id"] == 101]
    else:
        summaries = [c["summary"] for c in commits(project, states["products_merge"])[1:]]
        assert any(int(s.get("added-delete-files", 0)) > 0 for s in summaries), summaries

    # A crash between the MERGE (committed) and the view swap: the state holds the last batch, the
    # view still records the previous watermark. The re-run applies the batch again: no row changes.
    state1 = physical(project, states["products_merge"], False)
    state2 = physical(project, states["products_history_merge"], False)
    loads = project.rows(f"select distinct cast(cdc_loaded_at as string) as t from `{schema}`.cdc_changes")
    earlier = sorted(r["t"] for r in loads)[-2]  # the watermark before the last batch
    for model in MODELS:
        project.spark.sql(
            f"alter view `{schema}`.{model} set tblproperties ('spark_cdc.consumed_through' = '{earlier}')"
        )
    project.dbt("run", "--select", *MODELS)
    # Every SCD1 row, apply time included (the re-applied changes are stale: rows are copied).
    assert physical(project, states["products_merge"], False) == state1
    assert physical(project, states["products_history_merge"], False) == state2
    assert (
        props(project, schema, "products_merge")["spark_cdc.consumed_through"]
        == props(project, schema, "products")["spark_cdc.consumed_through"]
    )
    assert_same_targets(project, schema)

    # A full refresh replaces the state table in one commit (CREATE OR REPLACE TABLE ... AS SELECT):
    # the same views (an SCD1 rebuild keeps no tombstones of keys a truncate removed).
    before = {m: len(commits(project, s)) for m, s in states.items()}
    project.dbt("run", "--select", *MODELS, "--full-refresh")
    assert_same_targets(project, schema, hidden=False)
    for model, state in states.items():
        assert len(commits(project, state)) > before[model], model
