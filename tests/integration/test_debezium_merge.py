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

    assert "'spark_cdc.last_batch_simple' = 'true'" in statements["scd1_view"]
    assert "'spark_cdc.partial_rows' = '0'" in statements["scd1_view"]
    # The short cdc_scd1 statement reads the batch once and folds no column.
    assert "__new" in statements["scd1_merge"] and "__new" not in statements["scd1_merge_simple"]

    for name, n_columns in (
        ("scd1_merge", SCD1_STATE_COLUMNS),
        ("scd1_merge_simple", SCD1_STATE_COLUMNS),
        ("scd2_merge", SCD2_STATE_COLUMNS),
    ):
        kind = name[:4]
        plan = plans[name]
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


def test_the_batch_checks_parse_each_image_once(project: DbtProject, schema: str) -> None:
    """The rows a batch table is written from (_cdc_batch_rows_sql) carry `_rejected`, whether a
    change fails the target's checks, computed through one parse of each image and one of its key:
    the checks read the parsed members. Were the parse inlined into each check's predicate, Spark
    would parse an image once per check (a filter pushed below that select did: 70 JSON parses per
    change). Counted over the rows, `_rejected` finds the three bad changes."""
    project.dbt("run-operation", "render_merge_statements")
    sql = project.rows(f"select sql from `{schema}`.merge_statements where name = 'screen_count'")[0]["sql"]
    spark = project.spark
    # A table, not a view over VALUES, which the optimizer would fold into constants.
    spark.sql(f"drop table if exists `{schema}`.things_input")
    spark.sql(
        f"""create table `{schema}`.things_input using parquet as
        select 'debezium' as cdc_format, 'inventory.products' as source_table, op, key, after,
          cast(null as string) as before, cast(null as array<string>) as present_columns,
          named_struct('s1', cast(seq as decimal(38,0)), 's2', cast(null as decimal(38,0)),
                       's3', cast(null as decimal(38,0))) as seq,
          cast(map() as map<string, string>) as type_hints, timestamp'2024-01-02 00:00:00' as commit_ts,
          named_struct('relation', 'raw', 'partition', '0', 'order', cast(seq as decimal(38,0)),
                       'fragment_count', 1) as raw_ref,
          timestamp'2024-01-02 00:00:00' as cdc_loaded_at
        from values
          ('insert', '{{"id":1}}', '{{"id":1,"name":"a","weight":1.5}}', 1),
          ('update', '{{"id":1}}', '{{"id":1,"name":"a","weight":"heavy"}}', 2),
          ('insert', '{{"id":"x"}}', '{{"id":"x","name":"b","weight":2}}', 3),
          ('insert', '{{"id":4}}', '{{"id":4,"name":"","weight":2}}', 4)
          as t(op, key, after, seq)"""
    )
    spark.sql(f"create or replace temporary view things__cdc_input as select * from `{schema}`.things_input")
    # weight "heavy" is not a double, "x" is not an int key, '' cannot name a partition directory.
    assert spark.sql(sql).collect()[0][0] == 3
    plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()
    parse = "spark_cdc_json_members(" if spark.version.startswith("3.") else "from_json(MapType"
    # One parse of the image (`_rm`) and one of the key (`_km`).
    assert plan.count(parse) == 2, plan
