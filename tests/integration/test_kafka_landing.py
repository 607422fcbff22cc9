"""Kafka landing as sinks really write it: several topics in one table (position = topic, partition,
offset), one table per topic (several relations for one format), redeliveries and late landings at
offsets below the watermark, and offsets used again. Nothing is lost silently: every raw record is a
change, a counted duplicate, or quarantined with a reason, and the completeness contract fails when
a record is not accounted for.

Messages are hand-made Debezium envelopes (schemas.enable=false) of tables shop.t00..t19, one topic
per table, as Debezium's default topic routing lands them.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
# The change stream and its ledger; not the targets, which read other source tables (each an empty
# table here, a few seconds of statements per build).
SELECT = (
    "--select",
    "stg_cdc__debezium+",
    "cdc_reason_codes",
    "--exclude",
    "udf_smoke_sql",
    "udf_smoke_python",
    "config.materialized:cdc_scd1",
    "config.materialized:cdc_scd2",
)

# Every message here is Debezium's: only its staging is built (tests/integration/conftest.py).
IT_FORMATS = ("debezium",)


def envelope(table: str, key: int, lsn: int, name: str) -> str:
    return json.dumps(
        {
            "before": None,
            "after": {"id": key, "name": name},
            "source": {"schema": "shop", "table": table, "lsn": lsn, "ts_ms": 1_700_000_000_000 + lsn},
            "op": "c",
            "ts_ms": 1_700_000_000_100 + lsn,
        }
    )


def land(project: DbtProject, table: str, rows: list[tuple[str, int, int, str]]) -> None:
    """Append (topic, partition, offset, value) rows to raw table `table`, as a Kafka sink writes them."""
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

    schema = StructType(
        [
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("key", StringType()),
            StructField("value", StringType()),
            StructField("ingested_at", TimestampType()),
        ]
    )
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    data = [(t, p, o, None, v, now) for t, p, o, v in rows]
    project.spark.createDataFrame(data, schema).write.mode("append").format("parquet").saveAsTable(table)


def spark_cdc_vars(relations: list[str], position: list[str] | None) -> str:
    """--vars replacing var('spark_cdc'): Debezium read from `relations`, by `position` (None: the
    project's partition_column and order_column)."""
    cfg = copy.deepcopy(yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"])
    for name, options in cfg["spark_cdc"]["formats"].items():
        options["enabled"] = name == "debezium"
    for table in [f"t{t:02d}" for t in range(20)] + ["late"]:
        cfg["spark_cdc"]["tables"][f"shop.{table}"] = {"primary_key": ["id"]}
    debezium = cfg["spark_cdc"]["formats"]["debezium"]
    debezium.pop("source", None)
    debezium["relation"] = relations if len(relations) > 1 else relations[0]
    debezium.pop("key_column", None)
    if position is not None:
        debezium.pop("partition_column", None)
        debezium.pop("order_column", None)
        debezium["position_columns"] = position
    return json.dumps(cfg)


def staged(project: DbtProject, schema: str) -> Counter[tuple[str, str | None]]:
    rows = project.rows(f"select record_status, reason_code from `{schema}`.stg_cdc__debezium")
    return Counter((r["record_status"], r["reason_code"]) for r in rows)


def changes_by_table(project: DbtProject, schema: str) -> Counter[str]:
    rows = project.rows(f"select source_table from `{schema}`.cdc_changes")
    return Counter(r["source_table"] for r in rows)


def ledger(project: DbtProject, schema: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for r in project.rows(f"select outcome, records from `{schema}`.cdc_accounting"):
        counts[r["outcome"]] += r["records"]
    return counts


def topic_rows(
    topics: int, offsets: range, partition: int = 0, lsn_base: int = 0
) -> list[tuple[str, int, int, str]]:
    """`topics` topics (shop.t00 ...), each with a record at every offset: the same offsets in every
    topic, interleaved as a sink writing all topics into one table lands them."""
    rows = []
    for o in offsets:
        for t in range(topics):
            table = f"t{t:02d}"
            lsn = lsn_base + 1000 * o + t
            rows.append(
                (f"dbz.shop.{table}", partition, o, envelope(table, key=o, lsn=lsn, name=f"{table}-{o}"))
            )
    return rows


def test_twenty_topics_in_one_table_lose_nothing(project: DbtProject, schema: str) -> None:
    raw = f"`{schema}_raw`.`kafka_all`"
    variables = spark_cdc_vars([f"{schema}_raw.kafka_all"], ["topic", "partition", "offset"])
    land(project, raw, topic_rows(20, range(0, 5)))
    project.dbt("build", *SELECT, "--vars", variables)
    assert changes_by_table(project, schema) == Counter({f"shop.t{t:02d}": 5 for t in range(20)})
    # Later offsets of every topic, in two partitions, and a topic that starts late at offset 0.
    land(
        project, raw, topic_rows(20, range(5, 8)) + topic_rows(20, range(0, 3), partition=1, lsn_base=100_000)
    )
    land(project, raw, [("dbz.shop.late", 0, 0, envelope("late", key=1, lsn=5, name="late"))])
    project.dbt("build", *SELECT, "--vars", variables)

    expected = Counter({f"shop.t{t:02d}": 11 for t in range(20)}) + Counter({"shop.late": 1})
    assert changes_by_table(project, schema) == expected
    assert staged(project, schema) == Counter({("change", None): 221})
    assert ledger(project, schema) == Counter({"change": 221})


def test_a_position_without_the_topic_quarantines_instead_of_dropping(
    project: DbtProject, schema: str
) -> None:
    """The failure the issue saw: position (partition, offset) while two topics share the table. The
    second topic's records sit at positions already used: never a silent drop, each is quarantined
    position_reused and counted, so the user sees the configuration is wrong."""
    raw = f"`{schema}_raw`.`kafka_two`"
    variables = spark_cdc_vars([f"{schema}_raw.kafka_two"], None)
    first = [r for r in topic_rows(2, range(0, 3)) if r[0].endswith("t00")]
    second = [r for r in topic_rows(2, range(0, 3)) if r[0].endswith("t01")]
    land(project, raw, first)
    project.dbt("build", *SELECT, "--vars", variables)
    land(project, raw, second)
    project.dbt("build", *SELECT, "--vars", variables)
    assert staged(project, schema) == Counter({("change", None): 3, ("quarantined", "position_reused"): 3})
    quarantined = project.rows(f"select reason_code, raw_value from `{schema}`.cdc_quarantine")
    assert sorted(json.loads(r["raw_value"])["source"]["table"] for r in quarantined) == ["t01"] * 3
    assert ledger(project, schema) == Counter({"change": 3, "quarantined": 3})
    # Within one run too: both topics' records at the same positions in one batch.
    project.spark.sql(f"drop table {raw}")
    land(project, raw, first + second)
    project.dbt("build", *SELECT, "--vars", variables, "--full-refresh")
    assert staged(project, schema) == Counter({("quarantined", "position_reused"): 6})


def test_one_table_per_topic_are_several_relations_of_one_format(project: DbtProject, schema: str) -> None:
    tables = [f"kafka_t{t:02d}" for t in range(3)]
    variables = spark_cdc_vars([f"{schema}_raw.{t}" for t in tables], ["partition", "offset"])
    for t, table in enumerate(tables):
        rows = [r for r in topic_rows(3, range(0, 4)) if r[0].endswith(f"t{t:02d}")]
        land(project, f"`{schema}_raw`.`{table}`", rows)
    project.dbt("build", *SELECT, "--vars", variables)
    assert changes_by_table(project, schema) == Counter({f"shop.t{t:02d}": 4 for t in range(3)})
    relations = project.rows(
        f"select raw_relation, records from `{schema}`.cdc_accounting"
        " where outcome = 'change' order by raw_relation"
    )
    assert [(r["raw_relation"].split(".")[-1].strip("`"), r["records"]) for r in relations] == [
        (t, 4) for t in tables
    ]
    # Each relation keeps its own watermark: offsets another relation passed long ago still stage.
    land(project, f"`{schema}_raw`.`{tables[0]}`", [r for r in topic_rows(1, range(4, 30))])
    land(
        project,
        f"`{schema}_raw`.`{tables[1]}`",
        [r for r in topic_rows(2, range(4, 5)) if r[0].endswith("t01")],
    )
    project.dbt("build", *SELECT, "--vars", variables)
    assert changes_by_table(project, schema) == Counter({"shop.t00": 30, "shop.t01": 5, "shop.t02": 4})


def test_redeliveries_late_landings_and_reused_offsets_are_each_accounted(
    project: DbtProject, schema: str
) -> None:
    raw = f"`{schema}_raw`.`kafka_redelivered`"
    variables = spark_cdc_vars([f"{schema}_raw.kafka_redelivered"], ["topic", "partition", "offset"])
    rows = topic_rows(1, range(0, 10))
    land(project, raw, [r for r in rows if r[2] != 4])  # offset 4 lands late (a slow sink task)
    project.dbt("build", *SELECT, "--vars", variables)
    assert staged(project, schema) == Counter({("change", None): 9})
    # A sink redelivers offsets 2 and 3 (same content), offset 4 lands at last, and offset 7 comes
    # again with other content (a topic recreated): all below the watermark (9).
    reused = ("dbz.shop.t00", 0, 7, envelope("t00", key=700, lsn=7_000_000, name="other"))
    land(project, raw, [rows[2], rows[3], rows[2], rows[4], reused])
    project.dbt("build", *SELECT, "--vars", variables)
    assert staged(project, schema) == Counter(
        {("change", None): 10, ("skipped", "duplicate"): 3, ("quarantined", "position_reused"): 1}
    )
    assert ledger(project, schema) == Counter({"change": 10, "duplicate": 3, "quarantined": 1})
    assert changes_by_table(project, schema) == Counter({"shop.t00": 10})
    # Nothing new: a re-run stages nothing (the counts agree, the narrow check finds nothing).
    project.dbt("build", *SELECT, "--vars", variables)
    assert sum(staged(project, schema).values()) == 14


def test_the_completeness_contract_fails_on_a_lost_record(project: DbtProject, schema: str) -> None:
    raw = f"`{schema}_raw`.`kafka_lost`"
    variables = spark_cdc_vars([f"{schema}_raw.kafka_lost"], ["topic", "partition", "offset"])
    land(project, raw, topic_rows(2, range(0, 3)))
    project.dbt("build", *SELECT, "--vars", variables)
    # Force a loss: one staged record disappears (a hand-made deletion, a bug, a bad restore).
    kept = project.spark.table(f"`{schema}`.stg_cdc__debezium").where("raw_ref.order != 1")
    kept.cache().count()
    kept.write.mode("overwrite").saveAsTable(f"`{schema}`.stg_cdc__debezium_kept")
    project.spark.sql(
        f"insert overwrite table `{schema}`.stg_cdc__debezium select * from `{schema}`.stg_cdc__debezium_kept"
    )
    result = project.dbt("test", "--select", "cdc_accounting", "--vars", variables, expect_success=False)
    failed = [r for r in result.result.results if r.node.name.startswith("spark_cdc_cdc_records_accounted")]
    assert [(r.status, r.failures) for r in failed] == [("fail", 2)]


def test_a_build_logs_no_existing_session_warning_per_statement(project: DbtProject, schema: str) -> None:
    """dbt-spark builds its session with the profile's settings for every statement, and Spark warned
    each time ("Using an existing Spark session; only runtime SQL configurations will take effect"):
    about 500 lines per build. The package logs SparkSession's builder at ERROR."""
    project.dbt("seed", "--select", "cdc_reason_codes")
    jvm = project.spark._jvm
    levels = {
        name: str(jvm.org.apache.logging.log4j.LogManager.getLogger(name).getLevel())
        for name in ("org.apache.spark.sql.SparkSession", "org.apache.spark.sql.classic.SparkSession")
    }
    assert levels == dict.fromkeys(levels, "ERROR")
