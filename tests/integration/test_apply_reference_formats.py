"""Randomized reference suite for the apply engine, in every envelope format (issue 51).

Random, realistic histories (snapshots, inserts, full, partial and no-op updates, deletes with whole
or key-only before images, primary-key changes, re-inserts, truncates) on disjoint keys are generated
once (tests/helpers/reference.py), rendered in each format as its connector sends them
(tests/helpers/render.py: a connector without truncates sends the deletes of DELETE FROM) and
delivered in random batches, out of order, with exact redeliveries and sequence conflicts, through a
handful of `dbt run`s that stage all five formats at once (one raw table and one source table per
format). After every run each format's SCD1 and SCD2 targets are compared with the plain-Python
reference applied to the changes delivered so far, in sequence order: the SCD1 rows with
reference_scd1, the SCD2 whole history with reference_scd2, and the SCD1 rows with the SCD2 current
versions; the quarantine must hold exactly the copies of changes in a sequence conflict. Then a
re-run rewrites nothing and `--full-refresh` gives the same.

The builds run once, in the first test that needs them; each test then checks one format's results
(``outcome``), so one format's failure does not hide another's.

SPARK_CDC_REFERENCE_SEED picks other histories (failure messages name the seed);
SPARK_CDC_REFERENCE_SCENARIOS sets how many scenarios each format's history has (the long form).
In a lakehouse lane (SPARK_CDC_TABLE_FORMAT=delta|iceberg) the targets use that file_format: the MERGE
storage on real Delta Lake or Apache Iceberg. SPARK_CDC_REFERENCE_FEEDS (space-separated format names)
builds only those formats' feeds (the lanes: debezium, the one with truncates); the others skip.
"""

from __future__ import annotations

import copy
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.lakehouse import table_format, target_file_format
from tests.helpers.landing import DbtProject, RawMessage, land_messages
from tests.helpers.reference import (
    COLUMNS,
    KEY,
    Event,
    History,
    Row,
    add_sequence_conflicts,
    deliver,
    early_partials,
    first_arrival,
    generate_history,
    reference_scd1,
    reference_scd2,
    sequence_conflicts,
    target_values,
)
from tests.helpers.render import (
    AuroraDsql,
    CockroachDb,
    Debezium,
    QlikReplicate,
    Renderer,
    Ydb,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
# Fixed, so a failure reproduces; SPARK_CDC_REFERENCE_SEED explores other histories.
SEED = int(os.environ.get("SPARK_CDC_REFERENCE_SEED", "20261130"))
# Scenarios of the history every format renders.
SCENARIOS = int(os.environ.get("SPARK_CDC_REFERENCE_SCENARIOS", "60"))
BATCHES = 3
CONFLICT_RATE = 0.03


@dataclass
class Feed:
    """One format's rendering of one history: its source table, its two targets, its deliveries."""

    name: str
    renderer: Renderer
    history: History
    events: list[Event]  # the history as the format expresses it, plus rivals, in sequence order
    deliveries: list[list[Event]]

    @property
    def scd1(self) -> str:
        return f"reference_{self.name}_scd1"

    @property
    def scd2(self) -> str:
        return f"reference_{self.name}_scd2"

    def delivered(self, batches: int) -> list[Event]:
        return [e for batch in self.deliveries[:batches] for e in batch]


def make_feeds(seed: int, scenarios: int) -> list[Feed]:
    """One history, with truncates, in every format (a connector that sends no truncates sends the
    deletes of ``DELETE FROM`` instead). Each format gets rivals and deliveries of its own."""
    rng = random.Random(seed)
    history = generate_history(rng, scenarios=scenarios, first_key=0, truncates=max(1, scenarios // 30))
    renderers: list[Renderer] = [Debezium(table="items"), AuroraDsql(), QlikReplicate(), Ydb(), CockroachDb()]
    assert [r.fmt for r in renderers] == FEEDS
    feeds = []
    for renderer in renderers:
        adapted = renderer.adapt(history.events)
        events = add_sequence_conflicts(rng, adapted, rate=CONFLICT_RATE, eligible=renderer.conflict_eligible)
        feeds.append(Feed(renderer.fmt, renderer, history, events, deliver(rng, events, batches=BATCHES)))
    return feeds


FEEDS = ["debezium", "aurora_dsql", "qlik_replicate", "ydb", "cockroachdb"]
# The feeds this process builds (SPARK_CDC_REFERENCE_FEEDS; default: all).
BUILT = os.environ.get("SPARK_CDC_REFERENCE_FEEDS", " ".join(FEEDS)).split()


# --- what the targets should hold ----------------------------------------------------------------

VALUE_SQL = ", ".join(f"`{c}`" for c in COLUMNS)


def scd1_rows(feed: Feed, events: Sequence[Event]) -> list[Row]:
    r = feed.renderer
    state = reference_scd1(events, op_name=r.op_name)
    return [
        {**target_values(row.values), "_cdc_op": row.op, "_seq": row.seq, "_commit_ms": r.commit_ms(row.seq)}
        for _, row in sorted(state.items())
    ]


def scd2_rows(feed: Feed, events: Sequence[Event]) -> list[Row]:
    r = feed.renderer
    return [
        {
            **target_values(v.values),
            "_valid_from": v.valid_from,
            "_valid_to": v.valid_to,
            "_valid_from_ms": r.commit_ms(v.valid_from),
            "_valid_to_ms": None if v.valid_to is None else r.commit_ms(v.valid_to),
            "_cdc_is_current": v.is_current,
            "_cdc_is_deleted": v.is_deleted,
            "_cdc_op": v.op,
            "_seq": v.seq,
            "_commit_ms": r.commit_ms(v.seq),
        }
        for v in reference_scd2(events, op_name=r.op_name)
    ]


def _seq(feed: Feed, struct: dict[str, Any] | None) -> int | None:
    return None if struct is None else feed.renderer.seq_from(struct["s1"], struct["s2"], struct["s3"])


def _ms(value: Any) -> int | None:
    return None if value is None else int(value)


def actual_scd1(project: DbtProject, schema: str, feed: Feed) -> list[Row]:
    rows = project.rows(
        f"select {VALUE_SQL}, _cdc_op, _cdc_seq, unix_millis(_cdc_commit_ts) as _commit_ms"
        f" from `{schema}`.{feed.scd1}"
    )
    out = [
        {
            **{c: r[c] for c in COLUMNS},
            "_cdc_op": r["_cdc_op"],
            "_seq": _seq(feed, r["_cdc_seq"]),
            "_commit_ms": _ms(r["_commit_ms"]),
        }
        for r in rows
    ]
    return sorted(out, key=lambda r: r[KEY])


def actual_scd2(project: DbtProject, schema: str, feed: Feed) -> list[Row]:
    rows = project.rows(
        f"select {VALUE_SQL}, _cdc_valid_from_seq, _cdc_valid_to_seq,"
        " unix_millis(_cdc_valid_from) as _valid_from_ms, unix_millis(_cdc_valid_to) as _valid_to_ms,"
        " _cdc_is_current, _cdc_is_deleted, _cdc_op, _cdc_seq, unix_millis(_cdc_commit_ts) as _commit_ms"
        f" from `{schema}`.{feed.scd2}"
    )
    out = [
        {
            **{c: r[c] for c in COLUMNS},
            "_valid_from": _seq(feed, r["_cdc_valid_from_seq"]),
            "_valid_to": _seq(feed, r["_cdc_valid_to_seq"]),
            "_valid_from_ms": _ms(r["_valid_from_ms"]),
            "_valid_to_ms": _ms(r["_valid_to_ms"]),
            "_cdc_is_current": r["_cdc_is_current"],
            "_cdc_is_deleted": r["_cdc_is_deleted"],
            "_cdc_op": r["_cdc_op"],
            "_seq": _seq(feed, r["_cdc_seq"]),
            "_commit_ms": _ms(r["_commit_ms"]),
        }
        for r in rows
    ]
    return sorted(out, key=lambda r: (r[KEY], r["_valid_from"] if r["_valid_from"] is not None else -1))


def current_versions(history: Iterable[Row]) -> list[Row]:
    """SCD2 versions shaped like SCD1 rows: the current, not deleted ones."""
    keep = (*COLUMNS, "_cdc_op", "_seq", "_commit_ms")
    return [{c: v[c] for c in keep} for v in history if v["_cdc_is_current"] and not v["_cdc_is_deleted"]]


def _short(row: Row | None) -> str:
    """A row with long values cut (the generator's long notes would drown the message)."""
    if row is None:
        return "None"
    cut = {
        c: f"{v[:12]}...({len(v)} chars)" if isinstance(v, str) and len(v) > 40 else v for c, v in row.items()
    }
    return str(cut)


def _event_line(e: Event, batches: list[int]) -> str:
    what = e.op if e.old_key is None else f"update (key change from {e.old_key})"
    present = "" if e.present is None else f" present {sorted(e.present)}"
    arrived = f"batches {batches}" if batches else "not delivered yet"
    images = f"after {_short(e.after)} before {_short(e.before)}"
    return f"    seq {e.seq} {what} key {e.key} {arrived}{present} {images}"


def explain(feed: Feed, batches: int, model: str, expected: list[Row], actual: list[Row], stage: str) -> str:
    """The keys that differ, which columns differ how often, and for the first keys every event of
    their scenario with the batches it arrived in."""
    exp: dict[Any, list[Row]] = {}
    act: dict[Any, list[Row]] = {}
    for rows, by_key in ((expected, exp), (actual, act)):
        for r in rows:
            by_key.setdefault(r[KEY], []).append(r)
    wrong = sorted(k for k in exp.keys() | act.keys() if exp.get(k) != act.get(k))
    columns: Counter[str] = Counter()
    for k in wrong:
        want, got = exp.get(k, []), act.get(k, [])
        if len(want) != len(got):
            columns["fewer rows than expected" if len(got) < len(want) else "more rows than expected"] += 1
            continue
        columns.update({c for x, y in zip(want, got, strict=True) for c in x if x[c] != y.get(c)})
    lines = [
        f"{model} ({feed.renderer.fmt}, {feed.renderer.source_table}) {stage}: {len(wrong)} keys differ from"
        f" the reference (seed {SEED}, SPARK_CDC_REFERENCE_SCENARIOS={SCENARIOS}): {wrong[:20]};"
        f" keys by what differs: {dict(columns.most_common())}"
    ]
    arrival: dict[int, list[int]] = {}
    for b, batch in enumerate(feed.deliveries[:batches]):
        for e in batch:
            arrival.setdefault(id(e), []).append(b + 1)
    for k in wrong[:4]:
        lines.append(f"  key {k}:")
        lines += [f"    expected {_short(r)}" for r in exp.get(k, [])] or ["    expected nothing"]
        lines += [f"    actual   {_short(r)}" for r in act.get(k, [])] or ["    actual   nothing"]
        scenario = feed.history.scenario_of(k)
        keys = set(scenario.keys) if scenario else {k}
        for e in feed.events:
            if e.key is None or keys & {c.key for c in e.changes()}:
                lines.append(_event_line(e, arrival.get(id(e), [])))
    return "\n".join(lines)


# --- the builds ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the builds found, per feed: the messages of every check that failed."""

    feeds: list[Feed]
    targets: dict[str, list[str]] = field(default_factory=dict)  # after each batch
    quarantine: dict[str, list[str]] = field(default_factory=dict)
    rerun: dict[str, list[str]] = field(default_factory=dict)  # re-run and --full-refresh
    # Per feed, whether each build took the simple path (spark_cdc.last_batch_simple): (SCD1, SCD2).
    simple: dict[str, list[tuple[bool, bool]]] = field(default_factory=dict)
    error: str | None = None


def spark_cdc_vars(feeds: Sequence[Feed]) -> str:
    """--vars: the project's spark_cdc var (CLI vars replace it whole), with the tables of the formats
    whose messages name none set to this suite's."""
    project_vars = yaml.safe_load((ROOT / "integration_tests" / "dbt_project.yml").read_text())["vars"]
    cfg = copy.deepcopy(project_vars["spark_cdc"])
    for f in feeds:
        if f.renderer.fmt in ("qlik_replicate", "ydb", "cockroachdb"):
            cfg["formats"][f.renderer.fmt]["source_table"] = f.renderer.source_table
    return json.dumps({"spark_cdc": cfg})


def build_args(feeds: Sequence[Feed]) -> tuple[str, ...]:
    models = [f"+{m}" for f in feeds for m in (f.scd1, f.scd2)]
    # `run`: the package's own data tests have their modules; here they would only add time.
    return ("run", "--select", *models, "+cdc_quarantine", "+cdc_skipped", "--vars", spark_cdc_vars(feeds))


def view_property(project: DbtProject, schema: str, model: str, name: str) -> str:
    props = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{model}")}
    return str(props[name])


def version(project: DbtProject, schema: str, model: str) -> str:
    return view_property(project, schema, model, "spark_cdc.version")


def took_simple(project: DbtProject, schema: str, feed: Feed) -> tuple[bool, bool]:
    scd1, scd2 = (
        view_property(project, schema, m, "spark_cdc.last_batch_simple") == "true"
        for m in (feed.scd1, feed.scd2)
    )
    return scd1, scd2


def check_targets(project: DbtProject, schema: str, feed: Feed, batches: int, stage: str) -> list[str]:
    events = feed.delivered(batches)
    failures = []
    scd1_expected, scd1_actual = scd1_rows(feed, events), actual_scd1(project, schema, feed)
    if scd1_actual != scd1_expected:
        failures.append(explain(feed, batches, feed.scd1, scd1_expected, scd1_actual, stage))
    scd2_expected, scd2_actual = scd2_rows(feed, events), actual_scd2(project, schema, feed)
    if scd2_actual != scd2_expected:
        failures.append(explain(feed, batches, feed.scd2, scd2_expected, scd2_actual, stage))
    current = current_versions(scd2_actual)
    if current != scd1_actual:
        failures.append(
            explain(
                feed, batches, f"{feed.scd1} vs {feed.scd2} (current versions)", current, scd1_actual, stage
            )
        )
    return failures


def check_quarantine(project: DbtProject, schema: str, feeds: Sequence[Feed], batches: int) -> dict[str, str]:
    """Per feed, what differs: the quarantine must hold every delivered copy of a change in a sequence
    conflict, and nothing else; cdc_sequence_conflicts must record the same copies."""
    expected_reasons: Counter[tuple[str, str | None, str]] = Counter()
    expected_groups: Counter[tuple[str, str | None, int, int]] = Counter()
    for f in feeds:
        delivered = f.delivered(batches)
        groups = sequence_conflicts(delivered)
        table = f.renderer.source_table
        for e in delivered:
            for c in e.changes():
                if (c.key, c.seq) in groups:
                    expected_reasons[(f.renderer.fmt, table, "sequence_conflict")] += 1
                    expected_groups[(f.renderer.fmt, table, c.key, c.seq)] += 1
    reasons = Counter(
        (r["cdc_format"], r["source_table"], r["reason_code"])
        for r in project.rows(f"select cdc_format, source_table, reason_code from `{schema}`.cdc_quarantine")
    )
    by_table = {(f.renderer.fmt, f.renderer.source_table): f for f in feeds}
    recorded: Counter[tuple[str, str | None, int, int]] = Counter()
    for r in project.rows(
        f"select cdc_format, source_table, key, seq from `{schema}`.cdc_sequence_conflicts"
        " where row_kind = 'conflict'"
    ):
        feed = by_table.get((r["cdc_format"], r["source_table"]))
        seq = _seq(feed, r["seq"]) if feed is not None else None
        recorded[
            (r["cdc_format"], r["source_table"], int(json.loads(r["key"])[KEY]), -1 if seq is None else seq)
        ] += 1
    out: dict[str, str] = {}
    for f in feeds:

        def mine(item: tuple[Any, ...], f: Feed = f) -> bool:
            # Rows of this feed's table, and rows of its format that name no known table.
            return item[0] == f.renderer.fmt and (
                item[1] == f.renderer.source_table or (item[0], item[1]) not in by_table
            )

        exp_r = Counter({k: n for k, n in expected_reasons.items() if mine(k)})
        act_r = Counter({k: n for k, n in reasons.items() if mine(k)})
        exp_g = Counter({k: n for k, n in expected_groups.items() if mine(k)})
        act_g = Counter({k: n for k, n in recorded.items() if mine(k)})
        problems = []
        if act_r != exp_r:
            problems.append(f"cdc_quarantine reasons: expected {dict(exp_r)}, actual {dict(act_r)}")
        if act_g != exp_g:
            missing, extra = exp_g - act_g, act_g - exp_g
            problems.append(
                "cdc_sequence_conflicts (format, table, key, seq):"
                f" missing {dict(missing)}, unexpected {dict(extra)}"
            )
        if problems:
            out[f.name] = f"after batch {batches} (seed {SEED}): " + "; ".join(problems)
    return out


def land(project: DbtProject, schema: str, feeds: Sequence[Feed], batch: int, rng: random.Random) -> None:
    """Batch ``batch`` of every feed, one raw table per format, in random order. Qlik's metadata comes
    with the first batch, and again (as Replicate re-sends it after a task restart) with the third."""
    by_format: dict[str, list[RawMessage | str | None]] = {}
    for f in feeds:
        messages = by_format.setdefault(f.renderer.fmt, [])
        if batch in (0, 2):
            messages += f.renderer.preamble()
        for e in f.deliveries[batch]:
            messages += f.renderer.render(e)
    for fmt, messages in by_format.items():
        rng.shuffle(messages)
        land_messages(project.spark, f"{schema}_raw", fmt, messages)


def run_builds(project: DbtProject, schema: str, feeds: list[Feed]) -> Outcome:
    outcome = Outcome(
        feeds, {f.name: [] for f in feeds}, {f.name: [] for f in feeds}, {f.name: [] for f in feeds}
    )
    args = build_args(feeds)
    rng = random.Random(SEED + 1)
    started = time.monotonic()

    def progress(what: str) -> None:
        print(f"reference suite: {what} at {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    for b in range(BATCHES):
        land(project, schema, feeds, b, rng)
        project.dbt(*args)
        progress(f"batch {b + 1} of {BATCHES} built")
        for f in feeds:
            outcome.targets[f.name] += check_targets(project, schema, f, b + 1, f"after batch {b + 1}")
            outcome.simple.setdefault(f.name, []).append(took_simple(project, schema, f))
        for name, problem in check_quarantine(project, schema, feeds, b + 1).items():
            outcome.quarantine[name].append(problem)

    # Nothing new: no target is rewritten. A full refresh (staging, conflicts and targets rebuilt
    # from the raw messages in one batch each) gives the same state and the same history.
    models = [m for f in feeds for m in (f.scd1, f.scd2)]
    versions = {m: version(project, schema, m) for m in models}
    project.dbt(*args)
    for f in feeds:
        for m in (f.scd1, f.scd2):
            now = version(project, schema, m)
            if now != versions[m]:
                outcome.rerun[f.name].append(
                    f"{m}: a re-run with nothing new rewrote it (version {versions[m]} -> {now})"
                )
    progress("re-run built")
    project.dbt(*args, "--full-refresh")
    progress("--full-refresh built")
    for f in feeds:
        outcome.rerun[f.name] += check_targets(project, schema, f, BATCHES, "after --full-refresh")
        outcome.simple.setdefault(f.name, []).append(took_simple(project, schema, f))
    return outcome


_OUTCOME: list[Outcome] = []


@pytest.fixture
def outcome(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """The builds' outcome: run by the first test that asks (in its own fresh schema), then kept."""
    feed = request.node.callspec.params["feed"]
    if feed not in BUILT:
        pytest.skip(f"{feed}: not in SPARK_CDC_REFERENCE_FEEDS")
    if not _OUTCOME:
        # The suite's target models are enabled only for it.
        monkeypatch.setenv("SPARK_CDC_IT_REFERENCE", "1")
        # The targets' file_format: the lane's lakehouse format, parquet otherwise.
        monkeypatch.setenv("SPARK_CDC_IT_FILE_FORMAT", target_file_format())
        project: DbtProject = request.getfixturevalue("project")
        schema: str = request.getfixturevalue("schema")
        feeds = [f for f in make_feeds(SEED, SCENARIOS) if f.name in BUILT]
        if BUILT != FEEDS:  # the other formats' staging is not built either
            monkeypatch.setenv("SPARK_CDC_IT_FORMATS", " ".join(BUILT))
        try:
            _OUTCOME.append(run_builds(project, schema, feeds))
        except Exception as error:  # a failed build fails every test, with its message
            text = str(error).replace(spark_cdc_vars(feeds), "<the spark_cdc var>")
            _OUTCOME.append(Outcome(feeds, error=f"{type(error).__name__}: {text}"))
    result = _OUTCOME[0]
    if result.error is not None:
        pytest.fail(f"the builds failed (seed {SEED}): {result.error}", pytrace=False)
    return result


def _report(failures: list[str], limit: int = 6) -> str:
    shown = failures[:limit]
    more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
    return "\n\n".join(shown) + more


@pytest.mark.parametrize("feed", FEEDS)
def test_scd1_and_scd2_equal_the_reference_after_every_batch(outcome: Outcome, feed: str) -> None:
    assert outcome.targets[feed] == [], _report(outcome.targets[feed])


@pytest.mark.parametrize("feed", FEEDS)
def test_quarantine_holds_exactly_the_sequence_conflicts(outcome: Outcome, feed: str) -> None:
    assert outcome.quarantine[feed] == [], _report(outcome.quarantine[feed])


@pytest.mark.parametrize("feed", FEEDS)
def test_a_rerun_rewrites_nothing_and_a_full_refresh_gives_the_same(outcome: Outcome, feed: str) -> None:
    assert outcome.rerun[feed] == [], _report(outcome.rerun[feed])


@pytest.mark.parametrize("feed", FEEDS)
def test_the_checks_saw_both_statements_of_each_kind(outcome: Outcome, feed: str) -> None:
    """cdc_scd1 applies a batch without partial images, truncates and rebuilds with a short statement
    (_scd1_simple_state_sql) and any other with the per-column one; cdc_scd2 replays whole images
    with one lag() of the image (scd2_state_sql's whole_images) while neither the batch nor any
    stored change holds a partial image or a truncate. The checks above compared both with the
    reference: a format with partial images or truncates (Debezium, Qlik Replicate, YDB) needs the
    general statements at least once, the others (Aurora DSQL, CockroachDB) take the short ones in
    every build, batches that rebuild keys after a sequence conflict included."""
    taken = outcome.simple[feed]
    renderer = next(f.renderer for f in outcome.feeds if f.name == feed)
    for kind, flags in (("cdc_scd1", [t[0] for t in taken]), ("cdc_scd2", [t[1] for t in taken])):
        if renderer.partial_images or renderer.truncates:
            assert not all(flags), (kind, taken)
        else:
            assert all(flags), (kind, taken)


@pytest.mark.skipif(table_format() is not None, reason="no Spark: the main suite runs it")
def test_the_histories_exercise_every_kind_of_change() -> None:
    """No Spark: the generated histories and deliveries hold every kind the suite is about, in every
    format that can express it."""
    feeds = {f.name: f for f in make_feeds(SEED, SCENARIOS)}
    assert len(FEEDS) * SCENARIOS >= 300 or "SPARK_CDC_REFERENCE_SCENARIOS" in os.environ

    def at_least(n: int) -> int:
        """``n`` for the default number of scenarios, in proportion for another."""
        return max(1, n * SCENARIOS // 60)

    def kinds(f: Feed) -> set[str]:
        return {e.op for e in f.events}

    for f in feeds.values():
        events = f.events
        copies = [e for batch in f.deliveries for e in batch]
        assert kinds(f) >= {"snapshot", "insert", "update", "delete"}, f.name
        assert sum(e.is_key_change for e in events) >= at_least(5), f.name
        assert len(sequence_conflicts(events)) >= at_least(5), f.name
        assert len(copies) > len(events), f.name  # redeliveries
        # Re-inserts: a key inserted again after a delete of it.
        deleted: set[int] = set()
        reinserts = 0
        for e in events:
            for c in e.changes():
                if c.effect == "delete":
                    deleted.add(c.key)
                elif c.key in deleted:
                    reinserts += 1
        assert reinserts >= at_least(5), f.name
        # Deletes with whole and with key-only before images (DSQL sends only the key, CockroachDB's
        # diff the whole row).
        befores = {len(e.before or {}) > 1 for e in events if e.op == "delete"}
        whole = {"aurora_dsql": {False}, "cockroachdb": {True}}.get(f.renderer.fmt, {True, False})
        assert befores == whole, f.name
        # JSON strings (that read as numbers or booleans too), numbers, booleans, objects, SQL NULL.
        docs = [e.after["doc"] for e in events if e.after is not None]
        assert {"mañana", "118", "true"} <= {d for d in docs if isinstance(d, str)}, f.name
        assert any(isinstance(d, dict) and d for d in docs) and None in docs, f.name
        assert any(isinstance(d, bool) for d in docs) and any(type(d) in (int, float) for d in docs), f.name
        partials = sum(e.is_partial for e in events)
        if f.renderer.partial_images:
            assert partials >= at_least(10), f.name
            # Partial images arriving before an older change of their key.
            assert early_partials(f.deliveries) >= at_least(3), f.name
        else:
            assert partials == 0, f.name
        # Some conflict member arrives in an earlier batch than its rival (applied, then taken back).
        first = first_arrival(f.deliveries)
        by_group: dict[tuple[int, int], list[int]] = {}
        for e in events:
            for c in e.changes():
                by_group.setdefault((c.key, c.seq), []).append(first[id(e)])
        groups = sequence_conflicts(events)
        assert sum(min(by_group[g]) < max(by_group[g]) for g in groups) >= at_least(2), f.name
    # Truncates: Debezium sends them; the other connectors the deletes of DELETE FROM.
    assert kinds(feeds["debezium"]) == {"snapshot", "insert", "update", "delete", "truncate"}
    assert all("truncate" not in kinds(f) for name, f in feeds.items() if name != "debezium")
    # SCD2: versions updated in place (an update that changed nothing), deleted versions from deletes
    # and from truncates.
    versions = [v for f in feeds.values() for v in reference_scd2(f.events)]
    assert sum(v.seq != v.valid_from for v in versions) >= at_least(10)
    assert {v.op for v in versions if v.is_deleted} == {"delete", "truncate"}
