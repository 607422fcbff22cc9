"""The health report: one self-contained HTML page about a spark_cdc project.

``python -m dbt_spark_cdc.report --project-dir . --out cdc_report.html`` runs
``dbt run-operation spark_cdc.report`` in this process (any dbt-spark connection method), takes the
JSON line the macro logs, and writes a page with no network assets (inline CSS and SVG, no script):

- per source table, the lag of its recent staging runs as a chart (processing lag where the envelope
  carries a processing time, else load lag; p50 and max, logarithmic scale);
- quarantined records by reason and day, as stacked bars, with the totals;
- per SCD2 target, versions per commit day (valid-from) over its last `days` days with versions;
- per target, rows, tombstones and watermark;
- DSQL chunked records still waiting for fragments, and how long the oldest has waited.

Source table names and reason codes come from the data: every value is HTML-escaped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

PREFIX = "spark_cdc report data: "
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569")
#: Shown for a value that is missing (an en dash).
NONE = "\u2013"
#: Gridlines of the lag charts: durations a reader knows, roughly a factor of ten apart.
_LADDER = (
    (1.0, "1 ms"),
    (10.0, "10 ms"),
    (100.0, "100 ms"),
    (1e3, "1 s"),
    (1e4, "10 s"),
    (6e4, "1 min"),
    (6e5, "10 min"),
    (3.6e6, "1 h"),
    (3.6e7, "10 h"),
    (8.64e7, "1 d"),
    (8.64e8, "10 d"),
    (8.64e9, "100 d"),
    (3.1536e10, "1 y"),
    (3.1536e11, "10 y"),
    (3.1536e12, "100 y"),
)
_MS_UNITS = ((86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s"))


def _num(value: Any) -> float | None:
    """A number from the macro's text (every value is cast to string in SQL), or None."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _int(value: Any) -> int:
    number = _num(value)
    return int(number) if number is not None else 0


def format_ms(ms: float | None) -> str:
    """A duration in the largest unit that keeps it readable: 350 ms, 4.2 s, 3.0 h, 2.5 d."""
    if ms is None:
        return NONE
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    for size, unit in _MS_UNITS:
        if ms >= size:
            value = ms / size
            return f"{sign}{value:.0f} {unit}" if value >= 100 else f"{sign}{value:.1f} {unit}"
    return f"{sign}{ms:.0f} ms"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _svg_open(width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(label)}">'
    )


def lag_chart(points: Sequence[tuple[str, float | None, float | None]], label: str) -> str:
    """SVG line chart of (run, p50 ms, max ms) on a log scale (lags span milliseconds to days)."""
    width, height, left, right, top, bottom = 520, 190, 64, 12, 12, 30
    values = [v for _, *pair in points for v in pair if v is not None]
    if not values:
        return '<p class="empty">No measurable lag in these runs.</p>'
    # Log scale between the ladder steps around the values (lags span milliseconds to days); lags
    # at or below 1 ms (clocks that disagree can make them negative) sit on the bottom line.
    smallest, largest = min(max(v, 1.0) for v in values), max(max(values), 1.0)
    low = max([t for t, _ in _LADDER if t <= smallest], default=_LADDER[0][0])
    high = min([t for t, _ in _LADDER if t >= largest and t > low], default=_LADDER[-1][0])
    span = math.log10(high) - math.log10(low)
    plot_w, plot_h = width - left - right, height - top - bottom

    def y(ms: float) -> float:
        return top + plot_h * (1 - (math.log10(min(max(ms, low), high)) - math.log10(low)) / span)

    def x(i: int) -> float:
        return left + (plot_w * i / (len(points) - 1) if len(points) > 1 else plot_w / 2)

    parts = [_svg_open(width, height, label)]
    for tick, tick_label in _LADDER:
        if low <= tick <= high:
            ty = y(tick)
            parts.append(f'<line x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}" class="grid"/>')
            parts.append(
                f'<text x="{left - 6}" y="{ty + 4:.1f}" class="tick" text-anchor="end">{tick_label}</text>'
            )
    for n, (name, color) in enumerate((("p50", PALETTE[0]), ("max", PALETTE[1]))):
        series = [(i, run, (p50, peak)[n]) for i, (run, p50, peak) in enumerate(points)]
        known = [(i, run, ms) for i, run, ms in series if ms is not None]
        if len(known) > 1:
            path = " ".join(f"{x(i):.1f},{y(ms):.1f}" for i, _, ms in known)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for i, run, ms in known:
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(ms):.1f}" r="3" fill="{color}">'
                f"<title>{_e(run)}: {name} {format_ms(ms)}</title></circle>"
            )
    first, last = points[0][0], points[-1][0]
    parts.append(f'<text x="{left}" y="{height - 8}" class="tick">{_e(first[:16])}</text>')
    if len(points) > 1:
        parts.append(
            f'<text x="{width - right}" y="{height - 8}" class="tick" '
            f'text-anchor="end">{_e(last[:16])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def stacked_bars(days: Sequence[str], stacks: dict[str, dict[str, int]], label: str) -> str:
    """SVG stacked bar chart: one bar per day, one colour per series (series -> day -> count)."""
    width, height, left, right, top, bottom = 560, 190, 44, 12, 12, 30
    totals = [sum(s.get(d, 0) for s in stacks.values()) for d in days]
    peak = max(totals, default=0)
    if peak == 0:
        return '<p class="empty">None in this window.</p>'
    step = 10 ** math.floor(math.log10(peak)) if peak >= 10 else 1
    top_value = math.ceil(peak / step) * step
    plot_w, plot_h = width - left - right, height - top - bottom
    slot = plot_w / len(days)
    parts = [_svg_open(width, height, label)]
    for tick in (0, top_value / 2, top_value):
        ty = top + plot_h * (1 - tick / top_value)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{ty + 4:.1f}" class="tick" text-anchor="end">{tick:g}</text>')
    for i, day in enumerate(days):
        base = 0
        for n, (name, series) in enumerate(stacks.items()):
            count = series.get(day, 0)
            if not count:
                continue
            bar_h = plot_h * count / top_value
            by = top + plot_h * (1 - (base + count) / top_value)
            parts.append(
                f'<rect x="{left + i * slot + slot * 0.15:.1f}" y="{by:.1f}" width="{slot * 0.7:.1f}" '
                f'height="{bar_h:.1f}" fill="{PALETTE[n % len(PALETTE)]}">'
                f"<title>{_e(day)}: {_e(name)} {count}</title></rect>"
            )
            base += count
    parts.append(f'<text x="{left}" y="{height - 8}" class="tick">{_e(days[0])}</text>')
    parts.append(
        f'<text x="{width - right}" y="{height - 8}" class="tick" text-anchor="end">{_e(days[-1])}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _legend(names: Sequence[str]) -> str:
    items = "".join(
        f'<span class="key"><span class="swatch" style="background:{PALETTE[n % len(PALETTE)]}"></span>'
        f"{_e(name)}</span>"
        for n, name in enumerate(names)
    )
    return f'<div class="legend">{items}</div>'


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f'<th class="{"num" if i in numeric else ""}">{_e(h)}</th>' for i, h in enumerate(header))
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"num" if i in numeric else ""}">{_e(v)}</td>' for i, v in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _window_days(data: dict[str, Any], end_day: str | None = None) -> list[str]:
    """The report's `days` calendar days ending on end_day (default: the day it was generated)."""
    end = dt.date.fromisoformat((end_day or data["generated_at"])[:10])
    return [(end - dt.timedelta(days=n)).isoformat() for n in range(int(data["days"]) - 1, -1, -1)]


def _lag_section(data: dict[str, Any]) -> tuple[str, float | None]:
    by_source: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in data["lag"]:
        by_source[(row["cdc_format"], row["source_table"])].append(row)
    if not by_source:
        return '<p class="empty">No staging runs with changes yet (cdc_lag is empty or not built).</p>', None
    blocks, worst = [], None
    for (fmt, table), rows in sorted(by_source.items()):
        measure = "processing" if any(_num(r["processing_max"]) is not None for r in rows) else "load"
        points = [(r["run"], _num(r[f"{measure}_p50"]), _num(r[f"{measure}_max"])) for r in rows]
        latest = points[-1][2]
        if measure == "processing" and latest is not None:
            worst = latest if worst is None else max(worst, latest)
        changes = sum(_int(r["changes"]) for r in rows)
        blocks.append(
            f'<div class="chart"><h3>{_e(table)} <span class="muted">{_e(fmt)} · {measure} lag · '
            f"{len(rows)} runs · {changes:,} changes · latest max {format_ms(latest)}</span></h3>"
            + lag_chart(points, f"{measure} lag of {table}")
            + _legend(["p50", "max"])
            + "</div>"
        )
    return "".join(blocks), worst


def render(data: dict[str, Any]) -> str:
    """The page, from the macro's data (see macros/monitoring/report.sql)."""
    days = _window_days(data)
    lag_html, worst_lag = _lag_section(data)

    reasons: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[tuple[str, str, str], int] = defaultdict(int)
    for row in data["quarantine"]:
        reasons[row["reason_code"]][row["day"]] += _int(row["records"])
        totals[(row["cdc_format"], row["source_table"] or "(unknown table)", row["reason_code"])] += _int(
            row["records"]
        )
    quarantined = sum(totals.values())
    ordered = dict(sorted(reasons.items(), key=lambda kv: -sum(kv[1].values())))
    quarantine_html = (
        stacked_bars(days, ordered, "quarantined records per day by reason")
        + (_legend(list(ordered)) if ordered else "")
        + (
            _table(
                ["format", "source table", "reason", "records"],
                [(*k, f"{v:,}") for k, v in sorted(totals.items(), key=lambda kv: -kv[1])],
                numeric=(3,),
            )
            if totals
            else ""
        )
    )

    versions: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    undated: dict[str, int] = defaultdict(int)
    for row in data["scd2_days"]:
        if row["day"] is None:
            undated[row["target"]] += _int(row["versions"])
        else:
            versions[row["target"]][row["day"]] += _int(row["versions"])
    scd2_targets = [t for t in data["targets"] if t["kind"] == "scd2"]
    scd2_blocks = []
    for target in scd2_targets:
        series = {target["name"]: dict(versions.get(target["name"], {}))}
        note = f" · {undated[target['name']]:,} without a commit time" if undated.get(target["name"]) else ""
        # Source time: the window ends on the target's latest commit day, so a replay of old history
        # (or a source that went quiet) still shows the shape of its last days.
        target_days = _window_days(data, max(series[target["name"]], default=None))
        scd2_blocks.append(
            f'<div class="chart"><h3>{_e(target["name"])} <span class="muted">{_e(target["source_table"])} · '
            f"{_int(target['versions']):,} versions{note}</span></h3>"
            + stacked_bars(target_days, series, f"versions per day of {target['name']}")
            + "</div>"
        )
    scd2_html = "".join(scd2_blocks) or '<p class="empty">No cdc_scd2 target has been built.</p>'

    target_rows = [
        (
            t["name"],
            t["kind"],
            t["source_table"],
            f"{_int(t['rows']):,}" if t["kind"] == "scd1" else f"{_int(t['versions']):,}",
            f"{_int(t['tombstones']):,}" if t["tombstones"] else NONE,
            f"{_int(t['last_batch_changes']):,}",
            t["consumed_through"] or NONE,
        )
        for t in sorted(data["targets"], key=lambda t: t["name"])
    ]
    targets_html = (
        _table(
            [
                "target",
                "kind",
                "source table",
                "rows / versions",
                "tombstones",
                "last batch",
                "consumed through",
            ],
            target_rows,
            numeric=(3, 4, 5),
        )
        if target_rows
        else '<p class="empty">No cdc_scd1 or cdc_scd2 target has been built.</p>'
    )

    now = dt.datetime.strptime(data["generated_at"][:19], "%Y-%m-%d %H:%M:%S")
    pending_rows, pending_chunks = [], 0
    for row in data["pending"]:
        pending_chunks += _int(row["chunks"])
        oldest = row["oldest_at"]
        age = NONE
        if oldest:
            waited = now - dt.datetime.strptime(oldest[:19], "%Y-%m-%d %H:%M:%S")
            age = format_ms(waited.total_seconds() * 1000)
        pending_rows.append(
            (
                row["source_table"] or "(main record not arrived)",
                row["chunks"],
                row["fragments"],
                oldest or NONE,
                age,
            )
        )
    pending_html = (
        _table(
            ["source table", "chunks waiting", "fragments received", "oldest since", "waiting"],
            pending_rows,
            numeric=(1, 2),
        )
        if pending_rows
        else '<p class="empty">No Aurora DSQL chunk is waiting for fragments.</p>'
    )

    cards = [
        ("targets", f"{len(data['targets'])}"),
        (f"quarantined ({data['days']} d)", f"{quarantined:,}"),
        ("chunks waiting", f"{pending_chunks:,}"),
        ("latest processing lag (worst source)", format_ms(worst_lag)),
    ]
    cards_html = "".join(
        f'<div class="card{" alert" if (n == 1 and quarantined) or (n == 2 and pending_chunks) else ""}">'
        f'<div class="value">{_e(v)}</div><div class="label">{_e(k)}</div></div>'
        for n, (k, v) in enumerate(cards)
    )
    return _PAGE.format(
        title=_e(f"spark_cdc health · {data['project']}"),
        project=_e(data["project"]),
        target=_e(data["target"]),
        generated=_e(data["generated_at"]),
        days=_e(data["days"]),
        runs=_e(data["runs"]),
        cards=cards_html,
        lag=lag_html,
        quarantine=quarantine_html,
        scd2=scd2_html,
        targets=targets_html,
        pending=pending_html,
    )


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #0f172a;
       margin: 0; background: #f8fafc; }}
header {{ background: #0f172a; color: #f8fafc; padding: 18px 28px; }}
header h1 {{ font-size: 20px; margin: 0 0 4px; }}
header p {{ margin: 0; color: #cbd5e1; }}
main {{ padding: 12px 28px 32px; max-width: 1240px; }}
h2 {{ font-size: 16px; margin: 26px 0 8px; border-bottom: 1px solid #e2e8f0; padding-bottom: 4px; }}
h3 {{ font-size: 13px; margin: 0 0 6px; }}
.muted, .empty {{ color: #64748b; font-weight: normal; }}
.cards {{ display: flex; gap: 12px; flex-wrap: wrap; margin-top: 16px; }}
.card {{ background: #fff; border: 1px solid #e2e8f0; border-radius: 8px; padding: 10px 16px;
         min-width: 150px; }}
.card .value {{ font-size: 22px; font-weight: 600; }}
.card .label {{ color: #64748b; font-size: 12px; }}
.card.alert {{ border-color: #dc2626; }} .card.alert .value {{ color: #dc2626; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 16px; }}
.chart {{ display: inline-block; vertical-align: top; background: #fff; border: 1px solid #e2e8f0;
          border-radius: 8px; padding: 10px 12px; }}
svg .grid {{ stroke: #e2e8f0; stroke-width: 1; }}
svg .tick {{ fill: #64748b; font-size: 10px; }}
.legend {{ font-size: 12px; color: #334155; margin: 4px 0 8px; }}
.key {{ margin-right: 12px; white-space: nowrap; }}
.swatch {{ display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }}
table {{ border-collapse: collapse; background: #fff; margin: 8px 0; font-size: 13px; }}
th, td {{ border: 1px solid #e2e8f0; padding: 4px 10px; text-align: left; }}
th {{ background: #f1f5f9; font-weight: 600; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
</style></head>
<body>
<header><h1>spark_cdc health · {project}</h1>
<p>target {target} · generated {generated} · last {days} days,
up to {runs} staging runs per source</p></header>
<main>
<div class="cards">{cards}</div>
<h2>Lag per source table (recent staging runs)</h2><div class="charts">{lag}</div>
<h2>Quarantined records per day, by reason</h2><div class="chart">{quarantine}</div>
<h2>SCD2 versions per commit day (the last days with versions)</h2><div class="charts">{scd2}</div>
<h2>Targets</h2>{targets}
<h2>Aurora DSQL chunks waiting for fragments</h2>{pending}
</main></body></html>
"""


def collect(dbt_args: Sequence[str], days: int, runs: int) -> dict[str, Any]:
    """Run ``dbt run-operation spark_cdc.report`` in this process and return the data it logged."""
    from dbt.cli.main import dbtRunner

    found: list[str] = []

    def listen(event: Any) -> None:
        message = getattr(getattr(event, "data", None), "msg", None)
        if isinstance(message, str) and message.startswith(PREFIX):
            found.append(message[len(PREFIX) :])

    args = [
        "run-operation",
        "spark_cdc.report",
        "--args",
        json.dumps({"days": days, "runs": runs}),
        *dbt_args,
    ]
    result = dbtRunner(callbacks=[listen]).invoke(args)
    if not result.success or not found:
        raise SystemExit(
            f"spark_cdc report: `dbt {' '.join(args)}` failed or logged no report data"
            f" ({result.exception or 'no data line'}). Fix: run it from the dbt project that installs"
            " spark_cdc (or pass --project-dir/--profiles-dir), after a dbt build."
        )
    data: dict[str, Any] = json.loads(found[-1])
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dbt_spark_cdc.report",
        description="Write spark_cdc's health report (one self-contained HTML page) for a dbt project.",
    )
    parser.add_argument(
        "--out", default="cdc_report.html", help="where to write the page (default %(default)s)"
    )
    parser.add_argument(
        "--days", type=int, default=14, help="days of quarantine and SCD2 history (default 14)"
    )
    parser.add_argument(
        "--runs", type=int, default=30, help="staging runs per source in the lag charts (default 30)"
    )
    parser.add_argument("--data", help="render this JSON (the macro's data) instead of running dbt")
    parser.add_argument("--project-dir")
    parser.add_argument("--profiles-dir")
    parser.add_argument("--target")
    parser.add_argument("--vars")
    options = parser.parse_args(argv)
    if options.data:
        with open(options.data, encoding="utf-8") as handle:
            data = json.load(handle)
    else:
        dbt_args = [
            arg
            for name in ("project_dir", "profiles_dir", "target", "vars")
            if getattr(options, name)
            for arg in (f"--{name.replace('_', '-')}", getattr(options, name))
        ]
        data = collect(dbt_args, options.days, options.runs)
    with open(options.out, "w", encoding="utf-8") as handle:
        handle.write(render(data))
    print(f"spark_cdc health report: {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
