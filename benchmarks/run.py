"""``make bench``: every benchmark case, each in its own process (its own Spark JVM, so peak memory is
the case's own), results in ``benchmarks/results/latest.json`` and ``latest.md``.

    python -m benchmarks.run                 # all cases at the issue's sizes
    python -m benchmarks.run --scale 0.01    # the same cases, 1% of the events (a smoke run)
    python -m benchmarks.run --cases parse:debezium,apply

A case first runs at a tenth of its size in a schema of its own (the JVM's JIT and Spark's caches warm
up on the same code paths), then at full size; spark_cdc and its reference run on the same data in
the same session with the same settings, and the ratio compares them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.workload import OFFSET_STRIDE, Workload, columns

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "benchmarks" / "project"
RESULTS = ROOT / "benchmarks" / "results"
FORMATS = ("debezium", "aurora_dsql", "qlik_replicate", "ydb", "cockroachdb")
#: The lakehouse table formats the apply and large cases also run on (apply:delta, large:iceberg, ...).
LAKEHOUSE = ("delta", "iceberg")
#: The apply and large cases on parquet, then on each lakehouse format.
ALL_FORMATS_CASES = tuple(
    f"{case}{f}" for case in ("apply", "large") for f in ("", *(f":{x}" for x in LAKEHOUSE))
)
STAGING = {
    "debezium": ["stg_cdc__debezium"],
    "aurora_dsql": ["stg_cdc__aurora_dsql", "stg_cdc__aurora_dsql_reassembled"],
    "qlik_replicate": [
        "stg_cdc__qlik_replicate",
        "stg_cdc__qlik_replicate_metadata",
        "stg_cdc__qlik_replicate_retried",
    ],
    "ydb": ["stg_cdc__ydb"],
    "cockroachdb": ["stg_cdc__cockroachdb"],
}
#: The issue's sizes (benchmarks/README.md); --scale multiplies the event counts.
PARSE_EVENTS = 1_000_000
APPLY_EVENTS, APPLY_KEYS = 1_000_000, 200_000
LARGE_EVENTS, SMALL_BATCH = 10_000_000, 1_000
WARMUP = 0.1
#: The many-tables case: source tables, changes per table in the first build and keys per table,
#: and the busy batch's changes spread over all the tables.
MANY_TABLES, MANY_FIRST, MANY_KEYS, MANY_BUSY = 200, 1_000, 500, 10_000
#: The side-by-side case: scenarios of its history (about 3.5 changes each) and deliveries.
SIDE_SCENARIOS, SIDE_BATCHES, SIDE_SEED = 5_000, 4, 20261129


# ---------------------------------------------------------------------------------------------
# Measuring


def _tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and all its descendants (driver, JVM, Python workers)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/statm") as statm:
                rss[int(entry)] = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


class PeakMemory:
    """Samples this process tree's RSS every 0.2 s; ``peak`` is the highest seen since ``reset``."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))

    def reset(self) -> None:
        self.peak = _tree_rss_bytes(os.getpid())


@dataclass
class Measure:
    """One timed step: wall seconds, rows handled, and the process tree's peak RSS during it."""

    name: str
    seconds: float = 0.0
    rows: int = 0
    peak_rss_mb: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 2),
            "rows": self.rows,
            "rows_per_s": round(self.rows_per_s),
            "peak_rss_mb": round(self.peak_rss_mb),
            **self.detail,
        }


class Bench:
    """A case's session: the benchmark dbt project driven in-process and its SparkSession."""

    def __init__(self) -> None:
        from tests.helpers.landing import DbtProject

        self.memory = PeakMemory()
        self.project = DbtProject(str(PROJECT))
        started = time.monotonic()
        self.spark = self.project.spark
        self.jvm_start_s = time.monotonic() - started

    @contextmanager
    def measure(self, name: str, rows: int = 0) -> Iterator[Measure]:
        m = Measure(name, rows=rows)
        self.memory.reset()
        started = time.monotonic()
        yield m
        m.seconds = time.monotonic() - started
        m.peak_rss_mb = max(self.memory.peak, _tree_rss_bytes(os.getpid())) / 2**20

    def use_schema(self, schema: str, formats: tuple[str, ...]) -> None:
        """Point the project at a fresh ``schema`` (and ``<schema>_raw``) with ``formats`` enabled."""
        from tests.helpers.landing import land_messages

        os.environ["SPARK_CDC_SCHEMA"] = schema
        os.environ["SPARK_CDC_BENCH_FORMATS"] = " ".join(formats)
        for db in (schema, f"{schema}_raw"):
            self.spark.sql(f"drop database if exists `{db}` cascade")
        for fmt in FORMATS:
            land_messages(self.spark, f"{schema}_raw", fmt, [])

    def land(self, fmt: str, wl: Workload, schema: str) -> int:
        from benchmarks.generate import land

        return land(self.spark, fmt, wl, f"{schema}_raw")

    def dbt_run(self, *models: str, full_refresh: bool = False) -> dict[str, float]:
        """``dbt run`` of ``models``; node execution seconds by model name."""
        args = ["run", "--quiet", "-s", *models] + (["--full-refresh"] if full_refresh else [])
        result = self.project.dbt(*args)
        return {r.node.name: float(r.execution_time) for r in result.result.results}

    def count(self, sql: str) -> int:
        return int(self.spark.sql(f"select count(*) from ({sql})").first()[0])


# ---------------------------------------------------------------------------------------------
# Cases: each returns a list of result rows (one per comparison) for the report.


def case_parse(bench: Bench, fmt: str, scale: float) -> list[dict[str, Any]]:
    """Case 1: a format's staging models vs a bare ``from_json`` of the same messages."""
    from benchmarks.envelopes import BARE_PARSE
    from benchmarks.references import bare_parse

    schema_ddl, selects = BARE_PARSE[fmt]
    result: dict[str, Any] = {}
    for phase, factor in (("warmup", WARMUP), ("measured", 1.0)):
        schema = f"bench_{phase}"
        bench.use_schema(schema, (fmt,))
        wl = Workload(
            events=max(1000, int(PARSE_EVENTS * scale * factor)), keys=max(200, int(APPLY_KEYS * scale))
        )
        with bench.measure("generate") as gen:
            gen.rows = bench.land(fmt, wl, schema)
        with bench.measure("spark_cdc", rows=gen.rows) as ours:
            nodes = bench.dbt_run(*STAGING[fmt])
        ours.detail = {"model_seconds": round(sum(nodes.values()), 2), "models": nodes}
        ours.detail["staged"] = bench.count(f"select * from `{schema}`.`{STAGING[fmt][0]}`")
        ours.detail["quarantined"] = bench.count(
            f"select * from `{schema}`.`{STAGING[fmt][0]}` where record_status = 'quarantined'"
        )
        with bench.measure("bare_from_json", rows=gen.rows) as ref:
            bare_parse(bench.spark, f"`{schema}_raw`.`{fmt}`", schema_ddl, selects, f"`{schema}`.bare_parse")
        if phase == "measured":
            # Ratio of throughputs on the model's own execution time (dbt's per-command parse and
            # compile, about a second, is reported in seconds but not in the ratio).
            ratio = (gen.rows / ours.detail["model_seconds"]) / ref.rows_per_s
            result = {
                "case": f"parse:{fmt}",
                "events": wl.events,
                "raw_messages": gen.rows,
                "generate": gen.as_dict(),
                "spark_cdc": ours.as_dict(),
                "reference": ref.as_dict(),
                "ratio": round(ratio, 3),
                "ratio_meaning": "spark_cdc rows/s ÷ bare from_json rows/s (target ≥ 0.8)",
                "target": 0.8,
                "met": ratio >= 0.8,
            }
    return [result]


def _reference_table(schema: str, kind: str, batch: int, table_format: str) -> str:
    """The reference job's table after ``batch``: one table per batch on parquet (each job writes a new
    one), the one table every batch merges into on a lakehouse format."""
    return f"`{schema}`.ref_{kind}" if table_format != "parquet" else f"`{schema}`.ref_{kind}_{batch}"


def _apply_phase(
    bench: Bench, schema: str, wl: Workload, batches: int, kinds: tuple[str, ...], table_format: str
) -> dict[str, list[Measure]]:
    """Land and stage ``batches`` batches of ``wl``; after each, apply every kind (scd1, scd2) with
    spark_cdc and with the reference job (on a lakehouse format: the hand-written MERGE). Returns the
    measures by step name."""
    from benchmarks.references import scd1_job, scd1_merge_job, scd2_job, scd2_merge_job

    cols = columns(wl)
    out: dict[str, list[Measure]] = {}
    jobs: dict[str, tuple[str, Callable[..., None]]] = {
        "scd1": ("items_scd1_debezium", scd1_job if table_format == "parquet" else scd1_merge_job),
        "scd2": ("items_scd2", scd2_job if table_format == "parquet" else scd2_merge_job),
    }
    for b in range(batches):
        batch = replace(wl, first_event=b * wl.events)
        landed = bench.land("debezium", batch, schema)
        with bench.measure("stage", rows=landed) as m:
            m.detail = {"models": bench.dbt_run("stg_cdc__debezium", "cdc_sequence_conflicts", "cdc_changes")}
        out.setdefault("stage", []).append(m)
        first_order = b * wl.events * OFFSET_STRIDE
        changes_sql = (
            f"select * from `{schema}`.stg_cdc__debezium "
            f"where record_status = 'change' and raw_ref.order >= {first_order}"
        )
        n_changes = bench.count(changes_sql)
        for kind in kinds:
            model, job = jobs[kind]
            with bench.measure(f"{kind}:spark_cdc", rows=n_changes) as m:
                m.detail = {"model_seconds": bench.dbt_run(model)[model]}
            out.setdefault(f"{kind}:spark_cdc", []).append(m)
            table = _reference_table(schema, kind, b, table_format)
            with bench.measure(f"{kind}:reference", rows=n_changes) as m:
                if table_format == "parquet":
                    previous = _reference_table(schema, kind, b - 1, table_format) if b else None
                    job(bench.spark, changes_sql, cols, previous, table)
                else:
                    job(bench.spark, changes_sql, cols, table, table_format)
            out.setdefault(f"{kind}:reference", []).append(m)
    return out


def _same_rows(bench: Bench, ours: str, ref: str) -> bool:
    """Whether two queries return the same multiset of rows."""
    return (
        bench.count(f"({ours}) except all ({ref})") == 0 and bench.count(f"({ref}) except all ({ours})") == 0
    )


def _same_scd1(bench: Bench, reference: str, schema: str) -> bool:
    names = ", ".join(f"`{c.name}`" for c in columns(Workload()))
    ours = f"select {names} from `{schema}`.items_scd1_debezium"
    return _same_rows(bench, ours, f"select {names} from {reference} where not deleted")


def _same_scd2(bench: Bench, reference: str, schema: str) -> bool:
    names = ", ".join(f"`{c.name}`" for c in columns(Workload()))
    ours = f"select {names}, _cdc_is_current, _cdc_is_deleted from `{schema}`.items_scd2"
    return _same_rows(bench, ours, f"select {names}, is_current, is_deleted from {reference}")


def _lakehouse_session(table_format: str) -> None:
    """Before the case's Bench: the format's jars and catalog (benchmarks/project/profiles.yml), its
    targets' file_format, and a Spark home of its own (its own metastore and warehouse)."""
    from tests.helpers.lakehouse import session_env

    os.environ.update(
        SPARK_CDC_TABLE_FORMAT=table_format,
        SPARK_CDC_BENCH_FILE_FORMAT=table_format,
        SPARK_CDC_HOME=str(ROOT / ".spark" / f"bench_{table_format}"),
    )
    os.environ.update(session_env())


def _case_suffix(table_format: str) -> str:
    """The row-name suffix of a lakehouse run of a case: ``apply:scd1:batch1:delta``."""
    return "" if table_format == "parquet" else f":{table_format}"


def case_apply(bench: Bench, scale: float, table_format: str = "parquet") -> list[dict[str, Any]]:
    """Cases 2 and 3: SCD1 and SCD2 apply of two batches of 1,000,000 changes over 200,000 keys,
    against the hand-written one-pass jobs (on Delta or Iceberg: against a hand-written MERGE)."""
    results: list[dict[str, Any]] = []
    reference_kind = "hand-written job" if table_format == "parquet" else f"hand-written {table_format} MERGE"
    for phase, factor in (("warmup", WARMUP), ("measured", 1.0)):
        schema = f"bench_{phase}"
        bench.use_schema(schema, ("debezium",))
        wl = Workload(
            events=max(1000, int(APPLY_EVENTS * scale * factor)),
            keys=max(200, int(APPLY_KEYS * scale * factor)),
        )
        steps = _apply_phase(bench, schema, wl, 2, ("scd1", "scd2"), table_format)
        if phase != "measured":
            continue
        for kind, target, same in (("scd1", 1.25, _same_scd1), ("scd2", 1.5, _same_scd2)):
            for b in range(2):
                ours, ref = steps[f"{kind}:spark_cdc"][b], steps[f"{kind}:reference"][b]
                ratio = ours.seconds / ref.seconds
                reference = _reference_table(schema, kind, b, table_format)
                results.append(
                    {
                        "case": f"apply:{kind}:batch{b + 1}{_case_suffix(table_format)}",
                        "table_format": table_format,
                        "events": wl.events,
                        "keys": wl.keys,
                        "into": "empty target" if b == 0 else "the target after batch 1",
                        "stage": steps["stage"][b].as_dict(),
                        "spark_cdc": ours.as_dict(),
                        "reference": ref.as_dict(),
                        "ratio": round(ratio, 3),
                        "ratio_meaning": f"spark_cdc ÷ {reference_kind}, wall time (target ≤ {target})",
                        "target": target,
                        "met": ratio <= target,
                        "same_rows_as_reference": same(bench, reference, schema) if b == 1 else None,
                    }
                )
    return results


def case_large(bench: Bench, scale: float, table_format: str = "parquet") -> list[dict[str, Any]]:
    """Case 4 and the memory case: 10,000,000 changes into an empty partitioned SCD1 target (a rebuild
    from scratch; peak memory), then 1,000 changes into the resulting 10,000,000-row table (on Delta or
    Iceberg: a MERGE into it)."""
    schema = "bench_large"
    bench.use_schema(schema, ("debezium",))
    events = max(10_000, int(LARGE_EVENTS * scale))
    # Each key changes once: a 10,000,000-row target.
    wl = Workload(events=events, keys=events)
    with bench.measure("generate") as gen:
        gen.rows = bench.land("debezium", wl, schema)
    with bench.measure("stage", rows=gen.rows) as stage:
        stage.detail = {"models": bench.dbt_run("stg_cdc__debezium", "cdc_sequence_conflicts", "cdc_changes")}
    with bench.measure("rebuild", rows=events) as full:
        full.detail = {"model_seconds": bench.dbt_run("items_scd1_partitioned")["items_scd1_partitioned"]}
    rows = bench.count(f"select * from `{schema}`.items_scd1_partitioned")
    small = replace(wl, events=SMALL_BATCH, first_event=events, duplicate_fraction=0.0)
    landed = bench.land("debezium", small, schema)
    with bench.measure("small batch stage", rows=landed) as small_stage:
        small_stage.detail = {
            "models": bench.dbt_run("stg_cdc__debezium", "cdc_sequence_conflicts", "cdc_changes")
        }
    with bench.measure("small batch", rows=SMALL_BATCH) as batch:
        batch.detail = {"model_seconds": bench.dbt_run("items_scd1_partitioned")["items_scd1_partitioned"]}
    props = {
        r["key"]: r["value"]
        for r in bench.project.rows(f"show tblproperties `{schema}`.items_scd1_partitioned")
    }
    batch.detail["partitions_rewritten"] = props.get("spark_cdc.last_rewritten_partitions")
    ratio = batch.seconds / full.seconds
    driver_memory = bench.spark.conf.get("spark.driver.memory")
    suffix = _case_suffix(table_format)
    return [
        {
            "case": f"small_batch_into_large_table{suffix}",
            "table_format": table_format,
            "target_rows": rows,
            "spark_cdc": batch.as_dict(),
            "small_batch_stage": small_stage.as_dict(),
            "reference": full.as_dict(),
            "ratio": round(ratio, 3),
            "ratio_meaning": "1,000-change run ÷ rebuilding the target from scratch (target ≤ 0.2)",
            "target": 0.2,
            "met": ratio <= 0.2,
        },
        {
            "case": f"memory_10m_changes{suffix}",
            "table_format": table_format,
            "changes": events,
            "driver_memory": driver_memory,
            "generate": gen.as_dict(),
            "stage": stage.as_dict(),
            "apply": full.as_dict(),
            "peak_rss_mb": round(max(gen.peak_rss_mb, stage.peak_rss_mb, full.peak_rss_mb)),
            "met": rows > 0,
        },
    ]


def _many_phase(bench: Bench, schema: str, tables: int, scale: float) -> dict[str, Measure]:
    """One pass of the many-tables case in ``schema``: land and stage the first changes of every
    table, build both kinds of model, run them again idle, then land, stage and build a busy batch.
    Returns the measures by step (``first build``, ``idle``, ``busy``) and kind."""
    from benchmarks import many_tables as many

    steps: dict[str, Measure] = {}
    first = many.workloads(tables, max(20, int(MANY_FIRST * scale)), max(10, int(MANY_KEYS * scale)))
    busy = many.later(first, max(1, int(MANY_BUSY * scale) // tables))
    plan = (("first build", first, ("first build", "idle")), ("busy", busy, ("busy",)))
    for landing, (label, wls, runs) in enumerate(plan):
        changes = sum(wl.events for wl in wls)
        landed = many.land(bench.spark, wls, landing, f"{schema}_raw")
        with bench.measure(f"{label}:stage", rows=landed) as m:
            m.detail = {"models": bench.dbt_run("stg_cdc__debezium", "cdc_sequence_conflicts", "cdc_changes")}
        steps[f"{label}:stage"] = m
        for step in runs:
            for kind in ("cdc_scd1", "incremental"):
                tag = "many_scd1" if kind == "cdc_scd1" else "many_incremental"
                with bench.measure(f"{step}:{kind}", rows=0 if step == "idle" else changes) as m:
                    # Models only: the package's on-run-start/end hooks are results too.
                    nodes = {k: v for k, v in bench.dbt_run(f"tag:{tag}").items() if k.startswith("many_")}
                m.detail = {
                    "targets": len(nodes),
                    "model_seconds": round(sum(nodes.values()), 2),
                    "per_target_seconds": round(sum(nodes.values()) / max(1, len(nodes)), 3),
                    "slowest_target_seconds": round(max(nodes.values(), default=0.0), 3),
                }
                steps[f"{step}:{kind}"] = m
    return steps


def case_many_tables(bench: Bench, scale: float) -> list[dict[str, Any]]:
    """The many-tables case: one connector, MANY_TABLES source tables, a ``cdc_scd1`` target and a
    plain dbt-spark ``incremental`` model per table (benchmarks/many_tables.py): first build, idle
    build, then MANY_BUSY changes spread over the tables."""
    from benchmarks import many_tables as many

    tables = max(2, round(MANY_TABLES * min(1.0, scale * 10)))
    try:
        for phase, count in (("warmup", max(2, tables // 20)), ("measured", tables)):
            schema = f"bench_many_{phase}"
            bench.use_schema(schema, ("debezium",))
            many.write_models(count)
            steps = _many_phase(bench, schema, count, scale if phase == "measured" else scale * WARMUP)
        live = {r["source_table"]: r["n"] for r in bench.project.rows(many.live_keys_sql(schema))}
        held = {r["source_table"]: r["n"] for r in bench.project.rows(many.target_rows_sql(schema, tables))}
    finally:
        many.remove_models()
    idle_ours, idle_ref = steps["idle:cdc_scd1"], steps["idle:incremental"]
    ratio = idle_ours.detail["model_seconds"] / idle_ref.detail["model_seconds"]
    return [
        {
            "case": "many_tables",
            "tables": tables,
            "steps": {name: m.as_dict() for name, m in steps.items()},
            "spark_cdc": idle_ours.as_dict(),
            "reference": idle_ref.as_dict(),
            "ratio": round(ratio, 3),
            "ratio_meaning": (
                "idle cdc_scd1 targets ÷ idle dbt-spark incremental models, summed model seconds"
                " in one dbt run each (target ≤ 1.0)"
            ),
            "target": 1.0,
            "met": ratio <= 1.0,
            "targets_hold_live_keys": live == held,
        }
    ]


def case_demo(scale: float) -> list[dict[str, Any]]:
    """Case 5: ``make demo``'s ``dbt build`` end to end, in a process of its own."""
    env = {**os.environ, "SPARK_CDC_HOME": str(ROOT / ".spark" / "bench_demo")}
    memory_peak = 0
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "scripts/demo.py"],
        cwd=ROOT / "integration_tests",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True)
    reader.start()
    while proc.poll() is None:
        memory_peak = max(memory_peak, _tree_rss_bytes(proc.pid))
        time.sleep(0.2)
    reader.join()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError("demo failed:\n" + "".join(output[-40:]))
    timing = next(line for line in output if line.startswith("time: Spark start"))
    spark_start = float(timing.split("Spark start ")[1].split("s")[0])
    build = float(timing.split("dbt build ")[1].split("s")[0])
    return [
        {
            "case": "end_to_end_demo",
            "spark_cdc": {"name": "dbt build", "seconds": build, "peak_rss_mb": round(memory_peak / 2**20)},
            "jvm_start_seconds": spark_start,
            "process_seconds": round(wall, 2),
            "contracts": next((line.strip() for line in output if line.startswith("contracts:")), None),
        }
    ]


def case_side_by_side(scale: float) -> list[dict[str, Any]]:
    """Case 6: spark_cdc beside a dbt snapshot and a dbt-spark incremental merge on Delta Lake, one
    history delivered in SIDE_BATCHES batches (tests/helpers/side_by_side.py): per approach, the keys
    its tables get wrong after each batch and its build time."""
    import tempfile

    from tests.helpers import side_by_side as sbs
    from tests.helpers.lakehouse import session_env
    from tests.helpers.landing import DbtProject, fresh_landing

    os.environ.update(
        SPARK_CDC_TABLE_FORMAT="delta",
        SPARK_CDC_HOME=str(ROOT / ".spark" / "bench_side_by_side"),
        SPARK_CDC_SCHEMA="side_by_side",
        SPARK_CDC_IT_REFERENCE="1",
        SPARK_CDC_IT_FILE_FORMAT="delta",
        SPARK_CDC_IT_FORMATS="debezium",
    )
    os.environ.update(session_env())
    project = DbtProject(str(ROOT / "integration_tests"))
    project.dbt("deps", "--quiet")
    fresh_landing(project.spark, "side_by_side")
    scenarios = max(10, round(SIDE_SCENARIOS * scale))
    log = sbs.make_log(SIDE_SEED, scenarios=scenarios, batches=SIDE_BATCHES)
    with tempfile.TemporaryDirectory() as folder:
        sbs.typical_project(Path(folder), "`side_by_side_raw`.debezium", "delta")
        typical = DbtProject(folder, profiles_dir=project.profiles_dir)
        results = sbs.run(project, typical, "side_by_side", log)
    messages = sum(len(log.renderer.render(e)) for batch in log.deliveries for e in batch)
    return [
        {
            "case": f"side_by_side:{name}",
            "messages": messages,
            "keys": [r.keys for r in results],
            "scd1_wrong": [r.scd1_wrong[name] for r in results],
            "scd2_wrong": [r.scd2_wrong.get(name) for r in results],
            "seconds": [r.seconds[name] for r in results],
        }
        for name in sbs.APPROACHES
    ]


# ---------------------------------------------------------------------------------------------
# Driver


def run_case(name: str, scale: float) -> list[dict[str, Any]]:
    if name == "demo":
        return case_demo(scale)
    if name == "side_by_side":
        return case_side_by_side(scale)
    kind, _, table_format = name.partition(":")
    if kind in ("apply", "large") and table_format:
        if table_format not in LAKEHOUSE:
            raise SystemExit(f"unknown table format in case {name!r}; known: {', '.join(LAKEHOUSE)}")
        _lakehouse_session(table_format)
    bench = Bench()
    if name.startswith("parse:"):
        rows = case_parse(bench, name.split(":", 1)[1], scale)
    elif kind == "apply":
        rows = case_apply(bench, scale, table_format or "parquet")
    elif kind == "large":
        rows = case_large(bench, scale, table_format or "parquet")
    elif name == "many_tables":
        rows = case_many_tables(bench, scale)
    else:
        raise SystemExit(
            f"unknown case {name!r}; known: parse:<format>, apply, apply:<delta|iceberg>, large, "
            "large:<delta|iceberg>, many_tables, demo, side_by_side"
        )
    for row in rows:
        row["jvm_start_seconds"] = round(bench.jvm_start_s, 2)
    return rows


def machine() -> dict[str, Any]:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    java = [
        line
        for line in subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
        if not line.startswith("Picked up")  # JAVA_TOOL_OPTIONS' notice, not the version
    ]
    with open("/proc/meminfo") as meminfo:
        mem_kb = int(meminfo.readline().split()[1])
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "cpu": next(
            (
                line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo")
                if line.startswith("model name")
            ),
            "",
        ),
        "python": platform.python_version(),
        "java": java[0] if java else "",
        **{dist: version(dist) for dist in ("pyspark", "dbt-core", "dbt-spark", "dbt-spark-cdc")},
        "spark_master": "local[2]",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cases",
        default=",".join(
            [
                *(f"parse:{f}" for f in FORMATS),
                *ALL_FORMATS_CASES,
                "many_tables",
                "demo",
                "side_by_side",
            ]
        ),
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every event count (default 1)")
    parser.add_argument("--out", default=str(RESULTS / "latest.json"))
    parser.add_argument(
        "--merge", action="store_true", help="replace these cases' rows in --out, keep the rest"
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case in this process
    parser.add_argument("--case-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_CDC_HOME", str(ROOT / ".spark" / "bench"))
    home = os.environ["SPARK_CDC_HOME"]
    os.environ.setdefault("DBT_TARGET_PATH", os.path.join(home, "target"))
    os.environ.setdefault("DBT_LOG_PATH", os.path.join(home, "logs"))
    if args.case:
        rows = run_case(args.case, args.scale)
        Path(args.case_out).write_text(json.dumps(rows, indent=2, default=str))
        return 0

    from tests.helpers.landing import DbtProject

    DbtProject(str(PROJECT)).dbt("deps", "--quiet")
    out = Path(args.out)
    report: dict[str, Any] = {"machine": machine(), "scale": args.scale, "cases": []}
    if args.merge and out.exists():
        # Re-run some cases into an earlier report of the same scale (their rows are replaced).
        report = json.loads(out.read_text())
        report["machine"] = machine()
    for name in args.cases.split(","):
        case_file = out.with_suffix(f".{name.replace(':', '_')}.tmp")
        t0 = time.monotonic()
        print(f"== {name} ...", flush=True)
        cmd = [sys.executable, "-m", "benchmarks.run", "--case", name, "--scale", str(args.scale)]
        done = subprocess.run([*cmd, "--case-out", str(case_file)], cwd=ROOT)
        rows = (
            json.loads(case_file.read_text())
            if done.returncode == 0
            else [{"case": name, "error": f"exit {done.returncode}"}]
        )
        case_file.unlink(missing_ok=True)
        measured = {k: report["machine"][k] for k in ("date", "pyspark")}
        for row in rows:
            row["case_run"], row["case_process_seconds"] = name, round(time.monotonic() - t0)
            row["measured"] = measured  # --merge keeps rows of earlier runs: each says when and on what
        report["cases"] = [c for c in report["cases"] if _case_run(c) != name] + rows
        # Each case process once (the apply case reports four rows).
        per_run = {_case_run(c): c.get("case_process_seconds", 0) for c in report["cases"]}
        report["total_seconds"] = sum(per_run.values())
        # Written after every case, so a long run shows its results as it goes.
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"== {name}: {time.monotonic() - t0:.0f}s", flush=True)
    markdown = render_markdown(report)
    out.with_suffix(".md").write_text(markdown)
    print(markdown)
    if out == RESULTS / "latest.json":
        update_readme(report)
    return 0 if all("error" not in c for c in report["cases"]) else 1


README = ROOT / "README.md"
README_MARKERS = ("<!-- bench:start -->", "<!-- bench:end -->")
SIDE_MARKERS = ("<!-- side_by_side:start -->", "<!-- side_by_side:end -->")
#: benchmarks/README.md's Latest results: the whole table of latest.md.
BENCH_README = ROOT / "benchmarks" / "README.md"
LATEST_MARKERS = ("<!-- latest:start -->", "<!-- latest:end -->")


def _in_case_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Report rows in the order of the cases that produced them (as `make bench` runs them), each
    case's rows as it wrote them; rows of unknown cases last."""
    order = [*(f"parse:{f}" for f in FORMATS), *ALL_FORMATS_CASES, "many_tables", "demo"]

    def position(c: dict[str, Any]) -> int:
        run = _case_run(c)
        return order.index(run) if run in order else len(order)

    return sorted(rows, key=position)


def readme_table(report: dict[str, Any]) -> str:
    """The README's short benchmark table: each case's ratio against its target, from a report."""
    lines = ["| case | ratio to the reference | target | met |", "|---|---:|---:|:---:|"]
    for c in _in_case_order(report["cases"]):
        if "ratio" in c:
            met = "yes" if c.get("met") else "no"
            lines.append(f"| {c['case']} | {c['ratio']} | {c.get('target', '')} | {met} |")
    lines.append("")
    lines.append(
        f"Ratios are times against the reference in the same run (parse: rows per second, higher is better;"
        f" apply: time, lower is better{_many_caption(report)}); {report['machine']['cores']} cores,"
        f" scale {report['scale']},"
        f" pyspark {_pyspark_of(report, [c for c in report['cases'] if 'ratio' in c])}."
        " Every measure: `benchmarks/results/latest.json`."
    )
    return "\n".join(lines)


def _many_case(report: dict[str, Any]) -> dict[str, Any] | None:
    """The report's many-tables row, unless the case is missing or failed."""
    return next((c for c in report["cases"] if c["case"] == "many_tables" and "error" not in c), None)


def _many_caption(report: dict[str, Any]) -> str:
    """What the many-tables ratio compares, when the report has that case."""
    case = _many_case(report)
    if case is None:
        return ""
    n = case["tables"]
    return f"; many_tables: an idle run of {n} `cdc_scd1` targets against {n} dbt-spark incremental models"


SIDE_NAMES = {
    "spark_cdc": "spark_cdc: staging, `cdc_scd1` and `cdc_scd2`",
    "incremental_merge": "dbt-spark incremental, `merge`",
    "snapshot_timestamp": "dbt snapshot, `timestamp`",
    "snapshot_check": "dbt snapshot, `check`",
}


def _earlier_rows(report: dict[str, Any]) -> str:
    """A sentence naming the rows an earlier run measured (kept by --merge), or nothing."""
    now = {k: report["machine"][k] for k in ("date", "pyspark")}
    earlier: dict[tuple[str, str], list[str]] = {}
    for c in report["cases"]:
        m = c.get("measured", now)
        if m != now:
            earlier.setdefault((m["date"], m["pyspark"]), []).append(c["case"])
    return "".join(
        f" Measured {date} on pyspark {version}: {', '.join(cases)}."
        for (date, version), cases in sorted(earlier.items())
    )


def _pyspark_of(report: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The pyspark version(s) ``rows`` were measured on (rows of earlier runs kept by --merge)."""
    versions = {c.get("measured", {}).get("pyspark", report["machine"]["pyspark"]) for c in rows}
    return " and ".join(sorted(versions))


def side_by_side_table(report: dict[str, Any]) -> str | None:
    """The side-by-side case as a table: per approach, keys wrong after each batch and build times;
    None when the report has no such case."""
    rows = [c for c in report["cases"] if c["case"].startswith("side_by_side:") and "error" not in c]
    if not rows:
        return None

    def per_batch(values: list[Any]) -> str:
        return " / ".join("-" if v is None else f"{v:,}" for v in values)

    keys = rows[0]["keys"]
    lines = [
        "| approach | SCD1 keys wrong, after each batch | SCD2 keys wrong | seconds per batch |",
        "|---|---:|---:|---:|",
    ]
    for c in rows:
        name = SIDE_NAMES.get(c["case"].split(":", 1)[1], c["case"])
        seconds = " / ".join(f"{s:.1f}" for s in c["seconds"])
        lines.append(f"| {name} | {per_batch(c['scd1_wrong'])} | {per_batch(c['scd2_wrong'])} | {seconds} |")
    lines.append("")
    lines.append(
        f"One Debezium history ({rows[0]['messages']:,} messages, {per_batch(keys)} keys seen after each of"
        f" {len(keys)} batches; out of order, redelivered, deletes, re-inserts, several changes per key"
        f" between runs) on Delta Lake, compared after each batch with the source table's true state and"
        f" history (SCD2 on content: each key's versions and deletes). Snapshots only have history, the"
        f" incremental model only current state (-); spark_cdc's time is one `dbt run` that stages the"
        f" batch and builds both its targets. {report['machine']['cores']} cores, scale"
        f" {report['scale']}, pyspark {_pyspark_of(report, rows)}; method: benchmarks/README.md."
    )
    return "\n".join(lines)


def many_tables_table(report: dict[str, Any]) -> str | None:
    """The many-tables case's steps: per kind of model, the run's summed model seconds and the mean
    per target; None when the report has no such case."""
    case = _many_case(report)
    if case is None:
        return None
    steps = case["steps"]
    lines = [
        "| step | `cdc_scd1` targets | dbt-spark `incremental` models | staging first |",
        "|---|---:|---:|---:|",
    ]
    for step in ("first build", "idle", "busy"):
        ours, ref = steps[f"{step}:cdc_scd1"], steps[f"{step}:incremental"]
        stage = steps.get(f"{step}:stage")
        stage_text = f"{stage['seconds']} s" if stage else "-"
        changes = f" ({ours['rows']:,} changes)" if ours["rows"] else ""
        lines.append(
            f"| {step}{changes} | {ours['model_seconds']} s ({ours['per_target_seconds']} s each) |"
            f" {ref['model_seconds']} s ({ref['per_target_seconds']} s each) | {stage_text} |"
        )
    lines.append("")
    held = "hold" if case.get("targets_hold_live_keys") else "do **not** hold"
    lines.append(
        f"One Debezium connector, {case['tables']} source tables landed in one table, one `dbt run`"
        f" per step and kind (model execution seconds as dbt reports them). After the busy batch the"
        f" `cdc_scd1` targets {held} exactly each table's live keys."
    )
    return "\n".join(lines)


def _replace_block(text: str, markers: tuple[str, str], body: str) -> str:
    start, end = markers
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def update_readme(report: dict[str, Any], readme: Path = README, bench_readme: Path = BENCH_README) -> None:
    """Rewrite the README's benchmark blocks (README_MARKERS, SIDE_MARKERS) and benchmarks/README.md's
    Latest results (LATEST_MARKERS) from ``report``."""
    text = _replace_block(readme.read_text(), README_MARKERS, readme_table(report))
    side = side_by_side_table(report)
    if side is not None:
        text = _replace_block(text, SIDE_MARKERS, side)
    readme.write_text(text)
    latest = render_markdown(report).strip()
    bench_readme.write_text(_replace_block(bench_readme.read_text(), LATEST_MARKERS, latest))


def _case_run(row: dict[str, Any]) -> str:
    """The case whose run produced a report row (``apply`` gives ``apply:scd1:batch1``...,
    ``apply:delta`` gives ``apply:scd1:batch1:delta``..., ``large`` two rows, ``demo`` one): the
    ``case_run`` each row records."""
    return str(row.get("case_run", row["case"]))


def render_markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"Measured {m['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, "
        f"{m['spark_master']}; "
        f"Python {m['python']}, {m['java']}, pyspark {m['pyspark']}, dbt-core {m['dbt-core']}, "
        f"dbt-spark {m['dbt-spark']}, dbt-spark-cdc {m['dbt-spark-cdc']}; scale {report['scale']}; "
        f"the cases took {report['total_seconds']} s in all.{_earlier_rows(report)}",
        "",
        "| case | rows | spark_cdc | reference | ratio | target | met | peak RSS |",
        "|---|---:|---:|---:|---:|---:|:---:|---:|",
    ]
    for c in _in_case_order(report["cases"]):
        if c["case"].startswith("side_by_side:") and "error" not in c:
            continue  # its own table, below
        if "error" in c:
            lines.append(f"| {c['case']} | | failed: {c['error']} | | | | | |")
            continue
        ours, ref = c.get("spark_cdc", {}), c.get("reference", {})
        rows = ours.get("rows") or c.get("changes") or ""
        ours_text = f"{ours['seconds']} s" if ours else ""
        if ours.get("rows_per_s"):
            ours_text += f" ({ours['rows_per_s']:,}/s)"
        ref_text = f"{ref['seconds']} s ({ref['rows_per_s']:,}/s)" if ref else ""
        if c["case"].startswith("memory_10m_changes"):
            ours_text = f"stage {c['stage']['seconds']} s, apply {c['apply']['seconds']} s"
            ref_text = f"driver memory {c['driver_memory']}"
        if c["case"] == "end_to_end_demo":
            ref_text = f"JVM start {c['jvm_start_seconds']} s (apart)"
        if c["case"] == "many_tables":
            ours_text = f"idle: {ours['model_seconds']} s ({ours['per_target_seconds']} s per target)"
            ref_text = f"idle incremental: {ref['model_seconds']} s ({ref['per_target_seconds']} s each)"
            rows = f"{c['tables']} tables"
        peak = c.get("peak_rss_mb") or ours.get("peak_rss_mb", "")
        met = "" if "met" not in c else ("yes" if c["met"] else "**no**")
        lines.append(
            f"| {c['case']} | {rows:,} | {ours_text} | {ref_text} | {c.get('ratio', '')} | "
            f"{c.get('target', '')} | {met} | {peak} MB |"
            if isinstance(rows, int)
            else f"| {c['case']} | {rows} | {ours_text} | {ref_text} | {c.get('ratio', '')} | "
            f"{c.get('target', '')} | {met} | {peak} MB |"
        )
    many = many_tables_table(report)
    if many is not None:
        lines += ["", "Many tables (case many_tables):", "", many]
    side = side_by_side_table(report)
    if side is not None:
        lines += ["", "Side by side (case side_by_side):", "", side]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
