"""make demo: land the real Debezium corpus in a raw table, `dbt build` the demo, print a summary.

The demo starts from empty schemas every time, so running it twice gives the same tables.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
# The landing helpers and the dbt runner live in the repository's tests/helpers (they are not part of
# the dbt-spark-cdc wheel): the repository root goes on the path, wherever the script is run from.
sys.path.insert(0, str(HERE.parent))

from tests.helpers.lakehouse import session_env, table_format  # noqa: E402
from tests.helpers.landing import (  # noqa: E402
    FORMATS,
    DbtProject,
    land_messages,
    qualified,
    read_jsonl_messages,
)

CORPUS = HERE / "data" / "debezium_postgres" / "flink"


def main() -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    schema = os.environ.setdefault("SPARK_CDC_SCHEMA", "spark_cdc_demo")
    # Only Debezium messages are landed: the other formats' staging models are not built
    # (integration_tests/macros/spark_cdc_overrides.sql).
    os.environ.setdefault("SPARK_CDC_IT_FORMATS", "debezium")
    # SPARK_CDC_TABLE_FORMAT=delta|iceberg: the targets are Delta Lake or Apache Iceberg tables (the
    # jars are resolved into .spark/ on first use); unset, parquet.
    target_format = table_format() or "parquet"
    os.environ.update(session_env())
    os.environ.setdefault("SPARK_CDC_IT_FILE_FORMAT", target_format)
    raw_schema = f"{schema}_raw"
    project = DbtProject(str(HERE))
    started = time.monotonic()
    project.dbt("deps", "--quiet")
    spark = project.spark
    jvm_ready = time.monotonic()
    for name in (schema, raw_schema):
        spark.sql(f"drop database if exists `{name}` cascade")
    messages = read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))
    landed = land_messages(spark, raw_schema, "debezium", messages)
    for fmt in FORMATS:
        land_messages(spark, raw_schema, fmt, [])
    # `dbt build` runs every data-contract test right after the models it guards: a broken contract
    # fails the build, and so the demo. It builds what the summary shows: the package's models for
    # Debezium (the one format landed) and the project's Debezium targets, with their tests.
    result = project.dbt("build", "--select", "package:spark_cdc", "+path:models/debezium")
    built = time.monotonic()
    tests = [r for r in result.result.results if r.node.resource_type == "test"]

    print()
    print("spark_cdc demo summary")
    print("======================")
    print(f"raw messages landed in {qualified(raw_schema, 'debezium')}: {landed}")
    print(f"targets stored as: {target_format}")
    quarantined = project.rows(
        f"select reason_code, count(*) as n from {qualified(schema, 'cdc_quarantine')} group by 1 order by 1"
    )
    skipped = project.rows(
        f"select reason_code, count(*) as n from {qualified(schema, 'cdc_skipped')} group by 1 order by 1"
    )
    header = f"{'target':<26} {'kind':<9} {'applied':>8} {'current rows':>13} {'version':>8}"
    print(header)
    targets = cdc_targets(project, schema)
    idle = 0
    for target, props in targets:
        changes = props.get("spark_cdc.last_batch_changes", "0")
        if changes == "0":
            idle += 1  # a target of a format the demo lands nothing for
            continue
        kind = props["spark_cdc.materialization"]
        print(
            f"{target:<26} {kind:<9} {changes:>8} "
            f"{props.get('spark_cdc.current_rows', '?'):>13} {props.get('spark_cdc.version', '?'):>8}"
        )
    if idle:
        print(f"(and {idle} targets without changes)")
    print("quarantined: " + (", ".join(f"{r['reason_code']}={r['n']}" for r in quarantined) or "none"))
    print("skipped:     " + (", ".join(f"{r['reason_code']}={r['n']}" for r in skipped) or "none"))
    statuses = Counter(str(r.status) for r in tests)
    print(
        f"contracts:   {len(tests)} tests, "
        + ", ".join(f"{statuses[s]} {s}" for s in ("pass", "warn", "fail", "error") if statuses[s])
    )
    for r in tests:
        if str(r.status) != "pass":
            print(f"  {r.status}: {r.node.name}: {r.message}")
    print(f"time: Spark start {jvm_ready - started:.1f}s, dbt build {built - jvm_ready:.1f}s")
    print()
    for row in project.rows(
        f"select id, name, description, weight from {qualified(schema, 'products')} order by id"
    ):
        print(f"  {row['id']:>4}  {row['name']:<20} {row['description']:<58} {row['weight']}")
    return 0


def cdc_targets(project: DbtProject, schema: str) -> list[tuple[str, dict[str, str]]]:
    """Every view of the schema that a spark_cdc materialization built, with its TBLPROPERTIES."""
    found = []
    for view in project.rows(f"show views in `{schema}`"):
        if view["isTemporary"]:
            continue
        name = view["viewName"]
        props = {r["key"]: r["value"] for r in project.rows(f"show tblproperties {qualified(schema, name)}")}
        if "spark_cdc.materialization" in props:
            found.append((name, props))
    return sorted(found)


if __name__ == "__main__":
    raise SystemExit(main())
