"""Randomized reference suite for the apply engine (issue 4, "Done means").

Hundreds of random, realistic Debezium histories (inserts, updates, partial TOAST updates, updates
that change nothing, deletes, re-inserts, primary-key changes, snapshots, truncates) on disjoint keys
are delivered in random batches, out of order and with exact redeliveries, through a handful of
`dbt build` runs. After each run every target is compared with the plain-Python reference
(dbt_spark_cdc.testing_reference) applied to the events delivered so far, in sequence order: the
SCD1 targets' state with reference_scd1, the SCD2 targets' whole history with reference_scd2.

A table type plugs in as one more target of make_targets with its own reference function and query;
every target is built by the same `dbt build` runs.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from dbt_spark_cdc.testing import DbtProject, RawMessage, land_messages
from dbt_spark_cdc.testing_reference import (
    COLUMNS,
    Event,
    History,
    Row,
    add_sequence_conflicts,
    deliver,
    expected_rows,
    expected_versions,
    generate_history,
    reference_scd1,
    reference_scd2,
    sequence_conflicts,
)

pytestmark = pytest.mark.integration

# Fixed, so a failure reproduces; SPARK_CDC_REFERENCE_SEED explores other histories (the failure
# message names the seed).
SEED = int(os.environ.get("SPARK_CDC_REFERENCE_SEED", "20261123"))
BATCHES = 4


@dataclass
class Target:
    """One target model fed by one generated source table."""

    model: str
    source_schema: str
    source_table: str
    history: History
    events: list[Event]  # the history plus rival changes (sequence conflicts), in LSN order
    deliveries: list[list[Event]]
    expected: Callable[[list[Event]], list[Row]]
    query: str


def scd1_query(model: str) -> str:
    cols = ", ".join(f"`{c}`" for c in COLUMNS)
    lsn = "cast(_cdc_seq.s2 as bigint) as _lsn"
    return f"select {cols}, _cdc_op, {lsn} from `{{schema}}`.{model} order by id"


def scd1_expected(events: list[Event]) -> list[Row]:
    return expected_rows(reference_scd1(events))


def scd2_query(model: str) -> str:
    cols = ", ".join(f"`{c}`" for c in COLUMNS)
    meta = (
        "cast(_cdc_valid_from_seq.s2 as bigint) as _valid_from_lsn,"
        " cast(_cdc_valid_to_seq.s2 as bigint) as _valid_to_lsn,"
        " unix_millis(_cdc_valid_from) as _valid_from_ms, unix_millis(_cdc_valid_to) as _valid_to_ms,"
        " _cdc_is_current, _cdc_is_deleted, _cdc_op, cast(_cdc_seq.s2 as bigint) as _lsn,"
        " unix_millis(_cdc_commit_ts) as _commit_ms"
    )
    return f"select {cols}, {meta} from `{{schema}}`.{model} order by id, _cdc_valid_from_seq"


def scd2_expected(events: list[Event]) -> list[Row]:
    return expected_versions(reference_scd2(events))


def make_targets(seed: int) -> list[Target]:
    rng = random.Random(seed)
    plain = generate_history(rng, scenarios=160, first_key=0)
    truncated = generate_history(rng, scenarios=60, first_key=100_000, first_scenario=160, truncates=6)
    targets = []
    for model, table, history in (
        ("apply_reference_scd1", "items", plain),
        ("apply_reference_scd1_truncated", "items_truncated", truncated),
    ):
        events = add_sequence_conflicts(rng, history.events, rate=0.03)
        deliveries = deliver(rng, events, batches=BATCHES)
        targets.append(
            Target(model, "reference", table, history, events, deliveries, scd1_expected, scd1_query(model))
        )
    # SCD2 histories have source tables of their own: cdc_scd2 replays a key's stored changes, so
    # partial images may arrive before their base. Conflict members arrive in any batches: a change
    # applied before its rival arrived is taken back.
    plain = generate_history(rng, scenarios=150, first_key=200_000, first_scenario=220)
    truncated = generate_history(rng, scenarios=60, first_key=300_000, first_scenario=370, truncates=6)
    for model, table, history in (
        ("apply_reference_scd2", "items_scd2", plain),
        ("apply_reference_scd2_truncated", "items_scd2_truncated", truncated),
    ):
        events = add_sequence_conflicts(rng, history.events, rate=0.03)
        deliveries = deliver(rng, events, batches=BATCHES, partials_after_their_base=False)
        targets.append(
            Target(model, "reference", table, history, events, deliveries, scd2_expected, scd2_query(model))
        )
    return targets


def build_args(targets: list[Target]) -> tuple[str, ...]:
    selected = [f"+{t.model}" for t in targets]
    return ("build", "--select", *selected, "+cdc_quarantine", "+cdc_skipped", "cdc_reason_codes")


def messages(rng: random.Random, target: Target, batch: list[Event]) -> list[RawMessage | str | None]:
    out: list[RawMessage | str | None] = []
    for e in batch:
        out.append(e.envelope(target.source_schema, target.source_table))
        if e.op == "d" and rng.random() < 0.3:
            out.append(None)  # the Kafka tombstone that follows a delete: skipped, never applied
    return out


def explain(target: Target, delivered: list[list[Event]], expected: list[Row], actual: list[Row]) -> str:
    """The keys that differ, with the history and arrival batch of every event of their scenario."""
    exp: dict[int, list[Row]] = {}
    act: dict[int, list[Row]] = {}
    for rows, by_key in ((expected, exp), (actual, act)):
        for r in rows:
            by_key.setdefault(r["id"], []).append(r)
    wrong = sorted(k for k in exp.keys() | act.keys() if exp.get(k) != act.get(k))
    lines = [f"{target.model}: {len(wrong)} keys differ from the reference (seed {SEED})"]
    first_key = target.history.scenarios[0].first_key
    arrival: dict[int, list[int]] = {}
    for b, batch in enumerate(delivered):
        for e in batch:
            arrival.setdefault(id(e), []).append(b)
    for k in wrong[:5]:
        lines.append(f"key {k}: expected {exp.get(k)}\n        actual   {act.get(k)}")
        scenario = target.history.scenarios[(k - first_key) // 10]
        for e in target.events:
            if e.key in scenario.keys or e.key is None:
                batches = arrival.get(id(e))
                lines.append(f"    lsn {e.lsn} op {e.op} key {e.key} batches {batches} after {e.after}")
    return "\n".join(lines)


def version(project: DbtProject, schema: str, model: str) -> str:
    props = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{model}")}
    return props["spark_cdc.version"]


def normalised(rows: list[dict[str, Any]]) -> list[Row]:
    """LSNs and epoch milliseconds as Python ints (Spark may return them as decimals)."""
    ints = ("_lsn", "_ms")
    return [{c: int(v) if c.endswith(ints) and v is not None else v for c, v in r.items()} for r in rows]


def test_scd1_and_scd2_converge_to_the_reference_for_random_histories(
    project: DbtProject, schema: str
) -> None:
    targets = make_targets(SEED)
    for kind in ("scd1", "scd2"):
        assert sum(len(t.history.scenarios) for t in targets if f"_{kind}" in t.model) >= 200
    rng = random.Random(SEED + 1)
    delivered: dict[str, list[list[Event]]] = {t.model: [] for t in targets}
    for b in range(BATCHES):
        landing: list[RawMessage | str | None] = []
        for t in targets:
            delivered[t.model].append(t.deliveries[b])
            landing.extend(messages(rng, t, t.deliveries[b]))
        rng.shuffle(landing)
        land_messages(project.spark, f"{schema}_raw", "debezium", landing)
        project.dbt(*build_args(targets))

        for t in targets:
            so_far = [e for batch in delivered[t.model] for e in batch]
            expected = t.expected(so_far)
            actual = normalised(project.rows(t.query.format(schema=schema)))
            assert actual == expected, explain(t, delivered[t.model], expected, actual)

        # Every delivered copy of a change in a sequence conflict is quarantined, and nothing else.
        conflicted: Counter[tuple[str, int, int]] = Counter()
        for t in targets:
            so_far = [e for batch in delivered[t.model] for e in batch]
            groups = sequence_conflicts(so_far)
            table = f"{t.source_schema}.{t.source_table}"
            conflicted.update((table, e.key, e.lsn) for e in so_far if (e.key, e.lsn) in groups)
        reasons = project.rows(f"select reason_code from `{schema}`.cdc_quarantine")
        expected_reasons = Counter({"sequence_conflict": conflicted.total()}) if conflicted else Counter()
        assert Counter(r["reason_code"] for r in reasons) == expected_reasons
        recorded = project.rows(
            f"select source_table, key, seq.s2 as lsn from `{schema}`.cdc_sequence_conflicts"
            " where row_kind = 'conflict'"
        )
        found = Counter((r["source_table"], int(json.loads(r["key"])["id"]), int(r["lsn"])) for r in recorded)
        assert found == conflicted

    # Nothing new: no target is rewritten. A full refresh (staging, conflicts and targets rebuilt
    # from the raw messages in one batch each) gives the same state, and the same history.
    versions = {t.model: version(project, schema, t.model) for t in targets}
    project.dbt(*build_args(targets))
    assert {t.model: version(project, schema, t.model) for t in targets} == versions
    project.dbt(*build_args(targets), "--full-refresh")
    for t in targets:
        expected = t.expected([e for batch in delivered[t.model] for e in batch])
        actual = normalised(project.rows(t.query.format(schema=schema)))
        assert actual == expected, explain(t, delivered[t.model], expected, actual)

    # The histories really exercise every kind of change the suite is about.
    events = [e for t in targets for e in t.events]
    assert {e.op for e in events} == {"c", "u", "d", "r", "t"}
    assert sum(e.is_partial for e in events) > 50
    assert len(sequence_conflicts(events)) >= 20
    assert sum(1 for t in targets for b in t.deliveries for e in b) > len(events)  # redeliveries
    # SCD2: partial images that arrived before an older change of their key, versions updated in
    # place (an update that changed nothing), deleted versions from deletes and from truncates.
    early_partials = 0
    versions = []
    for t in targets:
        if "_scd2" in t.model:
            early_partials += sum(
                e.is_partial
                and any(o.key == e.key and o.lsn < e.lsn for later in t.deliveries[b + 1 :] for o in later)
                for b, batch in enumerate(t.deliveries)
                for e in batch
            )
            versions += reference_scd2(t.events)
    assert early_partials > 20
    assert sum(v.lsn != v.valid_from for v in versions) > 10
    assert {v.op for v in versions if v.is_deleted} == {"delete", "truncate"}
