"""The benchmark event model (benchmarks/workload.py): histories are valid, landing is a reordering
(nothing lost, nothing invented), and the expected state is what replaying the events gives."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from dataclasses import replace

import pytest

from benchmarks.columnar import raw_batch
from benchmarks.envelopes import ENVELOPES, preamble
from benchmarks.generate import raw_rows
from benchmarks.workload import (
    Workload,
    event,
    expected_current_rows,
    landed_event_index,
    op_of,
    redelivers,
    row_of,
)
from tests.helpers.landing import FORMATS

WL = Workload(
    events=2_000,
    keys=300,
    delete_fraction=0.3,
    out_of_order_fraction=0.3,
    duplicate_fraction=0.1,
    redelivery_lag=100,
)


def test_histories_start_with_an_insert_and_never_delete_twice() -> None:
    for key in range(1, 200):
        ops = [op_of(WL, key, n) for n in range(30)]
        assert ops[0] == "insert"
        for before, after in itertools.pairwise(ops):
            assert not (before == "delete" and after == "delete")
            assert (after == "insert") == (before == "delete")
        assert "delete" in ops or key > 20  # deletes do happen (a fixed seed: a stable check)


@pytest.mark.parametrize("first_event", [0, 2_000])
def test_landing_order_is_a_permutation_of_the_batch(first_event: int) -> None:
    wl = replace(WL, first_event=first_event)
    positions = range(first_event, first_event + wl.events)
    landed = [landed_event_index(wl, p) for p in positions]
    assert sorted(landed) == list(positions)
    moved = sum(1 for p, e in zip(positions, landed, strict=True) if p != e)
    assert 0.1 * wl.events < moved < 0.5 * wl.events
    assert all(abs(p - e) == wl.keys for p, e in zip(positions, landed, strict=True) if p != e)
    redelivered = sum(redelivers(wl, p) for p in positions)
    assert 0.05 * wl.events < redelivered < 0.15 * wl.events


def test_expected_state_is_the_replay_of_the_events_in_source_order() -> None:
    replayed: dict[int, dict[str, object]] = {}
    for index in range(WL.events):
        ev = event(WL, index)
        if ev.op == "delete":
            assert ev.key in replayed and ev.after is None and ev.before == replayed[ev.key]
            del replayed[ev.key]
        else:
            assert (ev.key in replayed) == (ev.op == "update")
            assert ev.after == row_of(WL, ev.key, ev.n)
            replayed[ev.key] = ev.after
    assert expected_current_rows(WL, WL.events) == replayed


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_envelope_is_json_and_names_its_event(fmt: str) -> None:
    messages = [m for i in range(50) for m in ENVELOPES[fmt](WL, event(WL, i))] + preamble(fmt, WL)
    for key, value in messages:
        assert isinstance(json.loads(value), dict)
        assert key is None or json.loads(key) is not None
    values = " ".join(value for _, value in messages)
    # Some representation of a value that only event 7's row has.
    assert row_of(WL, event(WL, 7).key, 0)["c00_string"] in values


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "wl",
    [
        replace(WL, chunked_fraction=0.2),
        # A second batch; 13 columns (two-byte Qlik masks); string heads longer than payload_bytes.
        Workload(events=3_000, keys=700, first_event=3_000, payload_width=13, payload_bytes=6),
    ],
    ids=["batch1", "batch2-wide-short"],
)
def test_columnar_generator_lands_exactly_the_per_event_rows(fmt: str, wl: Workload) -> None:
    """``land`` generates with ``columnar.raw_batch``; ``raw_rows`` (the envelopes, one event at a
    time) defines what must land: the same rows, byte for byte, in the same order, for the whole
    batch and for a range starting inside it (as ``mapInArrow`` hands out)."""
    ingested_at = dt.datetime(2026, 11, 26, 7, 30, 0, 123456)
    start = wl.first_event
    for positions in (range(start, start + wl.events), range(start + 450, start + 1_700)):
        want = list(raw_rows(fmt, wl, positions, ingested_at))
        got = [tuple(row.values()) for row in raw_batch(fmt, wl, positions, ingested_at).to_pylist()]
        assert len(got) > len(positions)  # redeliveries (and DSQL fragments) add rows
        assert got == want


def test_the_readme_benchmark_table_is_generated_from_the_results_file() -> None:
    """README's benchmark blocks and benchmarks/README.md's latest table are what benchmarks.run
    writes from benchmarks/results/latest.json."""
    import json
    from pathlib import Path

    from benchmarks.run import (
        LATEST_MARKERS,
        README_MARKERS,
        SIDE_MARKERS,
        readme_table,
        render_markdown,
        side_by_side_table,
    )

    root = Path(__file__).resolve().parents[2]
    report = json.loads((root / "benchmarks" / "results" / "latest.json").read_text())
    readme = (root / "README.md").read_text()
    block = readme.split(README_MARKERS[0], 1)[1].split(README_MARKERS[1], 1)[0]
    assert block.strip() == readme_table(report).strip()
    # The side-by-side table too; spark_cdc's row has no wrong key after any batch.
    side = readme.split(SIDE_MARKERS[0], 1)[1].split(SIDE_MARKERS[1], 1)[0]
    assert side.strip() == (side_by_side_table(report) or "").strip()
    # benchmarks/README.md holds the whole table.
    bench_readme = (root / "benchmarks" / "README.md").read_text()
    latest = bench_readme.split(LATEST_MARKERS[0], 1)[1].split(LATEST_MARKERS[1], 1)[0]
    assert latest.strip() == render_markdown(report).strip()
    ours = next(c for c in report["cases"] if c["case"] == "side_by_side:spark_cdc")
    assert ours["scd1_wrong"] == ours["scd2_wrong"] == [0] * len(ours["keys"])


def test_many_tables_landings_never_reuse_an_offset() -> None:
    """The many-tables case lands every source table's messages in one table: each table's and each
    landing's offsets are apart (a reused (partition, offset) would be staged as a redelivery), every
    message names its own table, and the busy landing continues each table's histories."""
    from benchmarks import many_tables as many

    at = dt.datetime(2026, 11, 30, 1, 0, 0)
    first = many.workloads(3, events=200, keys=50)
    busy = many.later(first, 20)
    assert [wl.first_event for wl in busy] == [200] * 3 and {wl.events for wl in busy} == {20}
    seen: set[tuple[int, int]] = set()
    rows = 0
    for landing, wls in enumerate((first, busy)):
        for i in range(len(wls)):
            batch = many.table_batch(wls, i, landing, at).to_pylist()
            rows += len(batch)
            seen |= {(r["partition"], r["offset"]) for r in batch}
            tables = {json.loads(r["value"])["source"]["table"] for r in batch}
            assert tables == {f"t{i:03d}"}
    assert len(seen) == rows
    with pytest.raises(ValueError, match="SPAN"):
        many.table_batch(many.workloads(1, events=many.SPAN + 1, keys=10), 0, 0, at)


def test_many_tables_models_and_table() -> None:
    """The generated models select their own table; the case's table reports each step per target."""
    from benchmarks import many_tables as many
    from benchmarks.run import many_tables_table

    scd1 = many.SCD1.format(table="many.t007")
    incremental = many.INCREMENTAL.format(table="many.t007")
    assert "source_table='many.t007'" in scd1 and "materialized='cdc_scd1'" in scd1
    assert "source_table = 'many.t007'" in incremental and "is_incremental()" in incremental
    step = {"seconds": 1.0, "rows": 0, "model_seconds": 2.0, "per_target_seconds": 0.01}
    kinds = ("cdc_scd1", "incremental")
    steps = {f"{s}:{k}": dict(step) for s in ("first build", "idle", "busy") for k in kinds}
    steps["busy:cdc_scd1"] |= {"rows": 10_000, "model_seconds": 500.0, "per_target_seconds": 2.5}
    steps["busy:stage"] = {"seconds": 7.5}
    case = {"case": "many_tables", "tables": 200, "steps": steps, "targets_hold_live_keys": False}
    table = many_tables_table({"cases": [case]}) or ""
    assert "| busy (10,000 changes) | 500.0 s (2.5 s each) | 2.0 s (0.01 s each) | 7.5 s |" in table
    assert "| idle | 2.0 s (0.01 s each) | 2.0 s (0.01 s each) | - |" in table
    assert "do **not** hold" in table and "200 source tables" in table
    assert many_tables_table({"cases": []}) is None


def test_lakehouse_cases_name_their_rows_and_merge_apart_from_parquet() -> None:
    """`apply:delta` and `large:iceberg` are cases of their own: their rows carry the format in the
    name, the reference merges into one table of that format, and re-running `apply` (parquet) with
    --merge replaces only the rows that run produced (each row's case_run)."""
    from benchmarks.run import ALL_FORMATS_CASES, _case_run, _case_suffix, _reference_table, render_markdown

    assert ALL_FORMATS_CASES == (
        "apply",
        "apply:delta",
        "apply:iceberg",
        "large",
        "large:delta",
        "large:iceberg",
    )
    assert _case_suffix("parquet") == "" and _case_suffix("delta") == ":delta"
    assert _reference_table("s", "scd1", 1, "parquet") == "`s`.ref_scd1_1"
    assert (
        _reference_table("s", "scd1", 0, "iceberg")
        == _reference_table("s", "scd1", 1, "iceberg")
        == "`s`.ref_scd1"
    )
    parquet = {"case": "apply:scd1:batch1", "case_run": "apply"}
    delta = {"case": "apply:scd1:batch1:delta", "case_run": "apply:delta"}
    assert _case_run(parquet) == "apply" and _case_run(delta) == "apply:delta"
    machine = {
        k: "x" for k in ("date", "cores", "cpu", "memory_gib", "spark_master", "python", "java", "pyspark")
    } | {"dbt-core": "x", "dbt-spark": "x", "dbt-spark-cdc": "x"}
    measure = {"seconds": 2.0, "rows": 10, "rows_per_s": 5, "peak_rss_mb": 1}
    rows = [
        dict(delta, spark_cdc=measure, reference=measure, ratio=1.0, target=1.25, met=True),
        dict(parquet, spark_cdc=measure, reference=measure, ratio=1.0, target=1.25, met=True),
    ]
    table = render_markdown({"machine": machine, "scale": 1.0, "total_seconds": 1, "cases": rows})
    # Parquet's rows first, then each format's.
    assert table.index("| apply:scd1:batch1 |") < table.index("| apply:scd1:batch1:delta |")
