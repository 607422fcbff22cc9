"""The storage strategies of cdc_scd1 / cdc_scd2 side by side over one Debezium history, batch by batch,
and runs killed while writing.

- the versioned parquet rewrite (`products`, `products_history` of integration_tests): the reference;
- partitioned parquet (`parts_scd1`, `parts_scd2`, partition_by='name', in the throwaway project of
  partitions_project, tests/helpers/projects.py, over the same cdc_changes), which rewrites only the
  partitions a batch touches.

The history (batches() of tests/helpers/corpora/debezium.py: several names, a key moving between
names, late changes splitting SCD2 versions, TOAST, a primary-key change, redelivery, deletes, a
truncate and changes after it) lands in six batches. After each, the partitioned targets must equal
the rewrite (views, hidden rows, TBLPROPERTIES), and exactly the touched partitions get new
directories. In batches 4 and 5 the partitioned targets are first killed after their first partition
switch (the next run rolls forward); before batch 3's run, the directories of their work tables
killed while being written are planted. Then: a run without new changes rewrites nothing. That
comparison is marked long (`make test-long`, a tenth of the suite's time), and those checks are
made nowhere else; in `make test` partitioned targets are built over several batches by
test_debezium_scd2.py, test_debezium_apply_options.py and test_killed_full_refresh.py. (The MERGE
storage of delta and iceberg targets is compared with the same rewrite over the same history on
real Delta Lake and Apache Iceberg: test_lakehouse_merge.py.)

Runs killed while writing a table (found by the crash test's long form) are replayed in `make
test`, over the history's first three batches: before batches 1 and 2 the directories such a kill
leaves (data in the table's default location, no table in the catalog) are planted where the next
run writes: an incremental model's first build, the next version table. Spark refuses to create a
table there (LOCATION_ALREADY_EXISTS); the plugin deletes the abandoned directory and the statement
runs again (dbt_spark_cdc.abandoned_writes). After batch 2 the Debezium staging table is left as
appends killed before and during their job commit leave it; the next run settles it first, and
every message must be staged exactly once.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpora.debezium import batches
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.projects import partitions_project
from tests.helpers.targets import RUN, physical, props, version_table, view

pytestmark = pytest.mark.integration

MARKER = "#truncate"
# partitioned model -> (the same model without partition_by, is SCD1)
PAIRS = {"parts_scd1": ("products", True), "parts_scd2": ("products_history", False)}
PARTS_RUN = ("run", "--select", *PAIRS)


# --- writes killed half way -----------------------------------------------------------------------


def schema_dir(project: DbtProject, schema: str) -> Path:
    """Where Spark puts the schema's managed tables (the schema may not exist yet)."""
    warehouse = Path(project.spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).resolve()
    return warehouse / f"{schema}.db"


def dbt_log() -> str:
    """This process's dbt log (tests/integration/conftest.py puts it under DBT_LOG_PATH)."""
    return Path(os.environ["DBT_LOG_PATH"], "dbt.log").read_text(errors="replace")


def plant_abandoned_write(
    project: DbtProject, schema: str, table: str, *entries: str
) -> tuple[str, list[Path]]:
    """The directory a run killed while creating `schema.table` leaves (files under the table's
    default location, no table in the catalog): its location as Spark names it, and the files."""
    location = f"file:{schema_dir(project, schema)}"
    assert not project.spark.catalog.tableExists(f"{schema}.{table}")
    files = []
    for entry in entries:
        path = Path(location.removeprefix("file:"), table, entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"PAR1 written by a run that was killed")
        files.append(path)
    return f"{location}/{table}", files


def staged_refs(project: DbtProject, schema: str) -> set[str]:
    """The staged Debezium messages (each staged once, or this fails)."""
    refs = [
        r["ref"] for r in project.rows(f"select to_json(raw_ref) as ref from `{schema}`.stg_cdc__debezium")
    ]
    assert len(refs) == len(set(refs)), "a message staged twice"
    return set(refs)


def assert_cleared(planted: list[tuple[str, list[Path]]]) -> None:
    """The planted files are gone, and dbt's log names each deleted directory."""
    assert planted
    log = dbt_log()
    for location, files in planted:
        assert f"deleted {location}, the directory of an interrupted write" in log, location
        for f in files:
            assert not f.exists(), f


def interrupt_appends(project: DbtProject, schema: str, table: str) -> int:
    """Leave `table` as runs killed while appending to it would: a job whose commit had published
    only its first file (its other files are back under `_temporary/0/task_*`, committed but not
    published), and a committed task of a job whose commit never began (a copy of a staged file
    under a new job id). Returns how many files the first job had not published."""
    root = schema_dir(project, schema) / table
    jobs: dict[str, list[Path]] = {}
    for f in sorted(root.glob("part-*")):
        jobs.setdefault(f.name.split("-", 2)[2][:36], []).append(f)
    cut = next(files for files in jobs.values() if len(files) > 1)  # a job that wrote several files
    tasks = root / "_temporary" / "0"
    for n, f in enumerate(cut[1:], 1):
        task = tasks / f"task_202611270000_0001_m_{n:06d}"
        task.mkdir(parents=True)
        f.rename(task / f.name)
        crc = f.with_name(f".{f.name}.crc")
        if crc.exists():
            crc.rename(task / crc.name)
    stale = tasks / "task_202611270000_0002_m_000000"
    stale.mkdir(parents=True)
    (stale / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet").write_bytes(cut[0].read_bytes())
    project.spark.catalog.refreshTable(f"{schema}.{table}")
    return len(cut) - 1


# --- partitioned targets ------------------------------------------------------------------------


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


def assert_partitioned_same_as_rewrite(project: DbtProject, schema: str) -> None:
    for parts, (flat, scd1) in PAIRS.items():
        assert view(project, schema, parts, scd1) == view(project, schema, flat, scd1), parts
        # Hidden bookkeeping too (tombstones, truncate marker, stored changes).
        assert physical(project, f"`{schema}`.{parts}__cdc_parts", scd1) == physical(
            project, version_table(project, schema, flat), scd1
        ), parts
        got, want = props(project, schema, parts), props(project, schema, flat)
        counted = ("spark_cdc.current_rows", "spark_cdc.tombstones", "spark_cdc.versions")
        for key in ("spark_cdc.consumed_through", *counted):
            assert got.get(key) == want.get(key), (parts, key)


def batch_keys(project: DbtProject, schema: str, watermark: str | None) -> tuple[set[str], bool]:
    where = f"where cdc_loaded_at > timestamp'{watermark}'" if watermark else ""
    rows = project.rows(f"select distinct key, op from `{schema}`.cdc_changes {where}")
    return {r["key"] for r in rows if r["key"] is not None}, any(r["op"] == "truncate" for r in rows)


def apply_partitioned(
    project: DbtProject, side: DbtProject, schema: str, i: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch `i` into the partitioned targets of `side` (the change stream and the rewrite already
    hold it): the same rows as the rewrite, and new directories for exactly the touched partitions.
    Queries go through `project` (the same Spark session)."""
    spark = project.spark
    if i == 0:
        side.dbt(*PARTS_RUN)
        assert_partitioned_same_as_rewrite(project, schema)
        for parts in PAIRS:
            assert not spark.catalog.tableExists(f"{schema}.{parts}__cdc_v1")
            assert int(props(project, schema, parts)["spark_cdc.last_rewritten_partitions"]) == len(
                directories(project, schema, parts)
            )
        return
    before = {
        p: (stored(project, schema, p), directories(project, schema, p), props(project, schema, p))
        for p in PAIRS
    }
    keys, truncate = batch_keys(project, schema, before["parts_scd1"][2]["spark_cdc.consumed_through"])
    assert keys or truncate, i  # the batch reached the change stream
    if i in (3, 4):
        # Killed after the first partition switch: plan committed, watermark not advanced.
        monkeypatch.setenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH", "1")
        side.dbt(*PARTS_RUN, expect_success=False)
        monkeypatch.delenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH")
        for parts in PAIRS:
            assert spark.catalog.tableExists(f"{schema}.{parts}__cdc_stage")
            assert props(project, schema, parts) == before[parts][2]
            # Half switched: the first partition has its new directory, not every one.
            switched = directories(project, schema, parts)
            changed = {n for n, d in switched.items() if before[parts][1].get(n) != d}
            assert changed and changed != set(switched) | set(before[parts][1]), (i, parts)
    planted = []
    if i == 2:
        # Killed while writing a work table: its data, no table.
        planted = [
            plant_abandoned_write(
                project, schema, "parts_scd1__cdc_touched", "_temporary/0/part-00000.parquet"
            ),
            plant_abandoned_write(project, schema, "parts_scd2__cdc_next", "_SUCCESS", "part-00000.parquet"),
        ]
    side.dbt(*PARTS_RUN)
    if planted:
        assert_cleared(planted)
    assert_partitioned_same_as_rewrite(project, schema)
    for parts in PAIRS:
        assert not spark.catalog.tableExists(f"{schema}.{parts}__cdc_stage")
        after_rows, after_dirs = stored(project, schema, parts), directories(project, schema, parts)
        rewritten = int(props(project, schema, parts)["spark_cdc.last_rewritten_partitions"])
        if i in (3, 4):
            continue  # the re-run rewrote what the roll-forward had already switched
        touched = expected_touched(before[parts][0], after_rows, keys, truncate)
        assert rewritten == len(touched), (i, parts, touched)
        old_dirs = before[parts][1]
        for name, d in after_dirs.items():
            assert (d != old_dirs.get(name)) == (name in touched), (i, parts, name)
        if not truncate:
            assert rewritten < len(after_dirs), (i, parts)


def test_killed_writes_are_cleared_and_interrupted_appends_settled(project: DbtProject, schema: str) -> None:
    """The change stream and the rewrite over the history's first three batches, each run after a
    kill planted: writes killed half way are cleared, interrupted appends settled, and every landed
    message is staged exactly once."""
    unsettled, staged_before = 0, set()
    history = batches()[:3]
    for i, batch in enumerate(history):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        planted = []
        if i == 0:  # killed while building an incremental model the first time
            planted = [
                plant_abandoned_write(
                    project, schema, "stg_cdc__debezium", "_temporary/0/task/part-0.parquet"
                )
            ]
        if i == 1:  # killed while writing the next version of a rewritten target
            version = int(props(project, schema, "products")["spark_cdc.version"]) + 1
            planted = [
                plant_abandoned_write(project, schema, f"products__cdc_v{version}", ".spark-staging-1/x")
            ]
        project.dbt(*RUN)
        if planted:
            assert_cleared(planted)
        if unsettled:
            # The unpublished files published, the stale task discarded: every message staged once.
            assert (
                f"settled an interrupted append to `{schema}`.`stg_cdc__debezium` (a run was killed while "
                f"writing it): published the {unsettled} file(s) its commit had not, discarded 1 file(s)"
            ) in dbt_log()
            assert staged_refs(project, schema) >= staged_before
            unsettled = 0
        if i == 1:  # appends killed before and during their commit, for the next batch's run
            staged_before = staged_refs(project, schema)
            unsettled = interrupt_appends(project, schema, "stg_cdc__debezium")
            assert staged_refs(project, schema) < staged_before  # the cut job's rows are missing
    assert unsettled == 0
    staged = len(staged_refs(project, schema))
    assert staged == sum(len(b) for b in history)  # every landed message, once
    assert {r["id"] for r in view(project, schema, "products", True)} >= {101, 102, 103}

    # Files someone put there by hand (no trace of a Spark write) are not deleted: the error says so.
    from dbt_spark_cdc.abandoned_writes import clear_abandoned_location, explain

    _, (notes,) = plant_abandoned_write(project, schema, "by_hand", "notes.txt")
    with pytest.raises(Exception) as refused:
        project.spark.sql(f"create table `{schema}`.by_hand using parquet as select 1 as a")
    assert clear_abandoned_location(project.spark, refused.value) is None
    assert notes.exists()
    message = explain(refused.value) or ""
    assert "no table in the catalog owns them" in message and "Fix: move that directory away" in message


@pytest.mark.long
def test_partitioned_targets_equal_the_rewrite_after_every_batch(
    project: DbtProject, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPARK_CDC_IT_CRASH_AFTER_SWITCH", raising=False)
    side = partitions_project(project, tmp_path, schema, PAIRS)
    for i, batch in enumerate(batches()):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        project.dbt(*RUN)  # the change stream and the rewrite
        apply_partitioned(project, side, schema, i, monkeypatch)
    # The history reached the targets: the comparisons above were not of empty tables.
    assert [r["id"] for r in view(project, schema, "products", True)] == [200]
    assert len(view(project, schema, "products_history", False)) > 20

    # Partitioned, no new changes: nothing is rewritten, not even the view.
    snapshot = {p: (directories(project, schema, p), props(project, schema, p)) for p in PAIRS}
    side.dbt(*PARTS_RUN)
    assert {p: (directories(project, schema, p), props(project, schema, p)) for p in PAIRS} == snapshot
