"""The MERGE strategy of cdc_scd1 / cdc_scd2 (file_format delta, iceberg, hudi): the generated CREATE /
MERGE / view statements are handed to Spark's SQL parser, which needs no catalog, and the MERGE plans
are checked clause by clause. The strategy itself runs on real Delta Lake and Apache Iceberg in the
lakehouse lanes (test_lakehouse_merge.py), batch by batch over the Debezium history of
tests/helpers/corpora/debezium.py (batches()), against the same targets built by the parquet rewrite."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration

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
