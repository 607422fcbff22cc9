"""spark_cdc side by side with what users build today, on the same Delta tables and the same log.

One random history of ``reference.items`` (tests/helpers/reference.py: inserts, updates, no-op
updates, deletes, re-inserts, primary-key changes, several changes per key between runs) is sent as
Debezium sends it (tests/helpers/render.py) and delivered in batches out of order, with exact
redeliveries. After each batch lands, every approach runs once:

- **spark_cdc**: the package's staging, then ``cdc_scd1`` and ``cdc_scd2`` targets
  (integration_tests/models/reference/reference_debezium_scd*.sql) on the lane's table format;
- **incremental merge**: a dbt-spark ``incremental`` model (``incremental_strategy='merge'``,
  ``unique_key='id'``) over the new messages, the latest row per key by source time, with the
  filter dbt's documentation teaches (``updated_at > max(updated_at)`` of the target) and deletes kept
  as ``is_deleted`` rows;
- **snapshot (timestamp)** and **snapshot (check)**: dbt snapshots (``hard_deletes='new_record'``) over
  the usual staging view: the latest row per key among all landed messages, deleted keys left out.

Each is then compared with the plain-Python reference applied to the changes delivered so far, in
source order. SCD1 (current state): a key is wrong when its row differs, is missing or should not be
there. SCD2 (history), compared on content, not on validity times (each approach dates versions in its
own way): a key is wrong when its set of live versions' values, its number of deleted versions or its
current version differs from the reference's (a version repeating its predecessor's values counts
once, so a timestamp snapshot's version for an update that changed nothing is not held against it).

``python -m tests.helpers.side_by_side`` is the benchmark case (benchmarks/run.py, case
``side_by_side``); tests/integration/test_side_by_side.py runs it small in the Delta lane.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.reference import (
    COLUMNS,
    KEY,
    VALUE_COLUMNS,
    Event,
    deliver,
    generate_history,
    reference_scd1,
    reference_scd2,
    target_values,
)
from tests.helpers.render import Debezium

#: The approaches compared, in the order the results list them.
APPROACHES = ("spark_cdc", "incremental_merge", "snapshot_timestamp", "snapshot_check")
OURS = ("run", "--select", "+reference_debezium_scd1", "+reference_debezium_scd2")
# Every staged Debezium message's value, as a user's staging model declares it (schemas.enable=false,
# decimal.handling.mode=string, the Json column as its text).
_VALUE_SCHEMA = (
    "struct<before: struct<id: int>, after: struct<id: int, name: string, qty: bigint, price: string,"
    " active: boolean, note: string, doc: string>, source: struct<ts_ms: bigint, lsn: bigint>, op: string>"
)
_VALUES = ", ".join(c for c in VALUE_COLUMNS)


@dataclass
class Log:
    """The history as Debezium sends it and its deliveries, one list of events per batch."""

    renderer: Debezium
    deliveries: list[list[Event]]

    def delivered(self, batches: int) -> list[Event]:
        return [e for batch in self.deliveries[:batches] for e in batch]


def make_log(seed: int, scenarios: int, batches: int) -> Log:
    """A history without truncates or partial images (neither alternative could read either), in
    ``batches`` deliveries: random order, any batch, 15 % exact redeliveries."""
    rng = random.Random(seed)
    history = generate_history(rng, scenarios=scenarios, first_key=0, truncates=0)
    events = [replace(e, present=None) for e in history.events]
    return Log(Debezium(table="items"), deliver(rng, events, batches=batches))


def typical_project(path: Path, raw_relation: str, file_format: str) -> None:
    """The dbt project a user writes without spark_cdc, at ``path``: a staging view of the landed
    messages, the latest row per key, an incremental merge model and two snapshots. It shares the
    integration project's profile (its session and schema)."""
    (path / "models").mkdir(parents=True)
    (path / "snapshots").mkdir()
    (path / "dbt_project.yml").write_text(
        "name: typical_cdc\nversion: '0.1.0'\nconfig-version: 2\nprofile: spark_cdc_integration_tests\n"
    )
    models = path / "models"
    models.joinpath("typical_changes.sql").write_text(
        "{{ config(materialized='view') }}\n"
        "select coalesce(m.after.id, m.before.id) as id, m.after.name, m.after.qty,"
        " cast(m.after.price as decimal(12,2)) as price, m.after.active, m.after.note, m.after.doc,\n"
        "       m.op = 'd' as is_deleted, timestamp_millis(m.source.ts_ms) as updated_at\n"
        f"from (select from_json(value, '{_VALUE_SCHEMA}') as m from {raw_relation}\n"
        "      where value is not null)\n"
    )
    latest = (
        "select id, {values}, is_deleted, updated_at from (\n"
        "  select *, row_number() over (partition by id order by updated_at desc) as rn\n"
        "  from {{{{ ref('typical_changes') }}}}\n{where}) where rn = 1"
    )
    models.joinpath("typical_latest.sql").write_text(
        "{{ config(materialized='view') }}\n"
        f"select id, {_VALUES}, updated_at from ({latest.format(values=_VALUES, where='')})"
        " where not is_deleted\n"
    )
    incremental_filter = (
        "  {% if is_incremental() %}\n"
        "  where updated_at > (select max(updated_at) from {{ this }})\n"
        "  {% endif %}\n"
    )
    models.joinpath("typical_incremental.sql").write_text(
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',"
        f" file_format='{file_format}') }}}}\n"
        + latest.format(values=_VALUES, where=incremental_filter)
        + "\n"
    )
    check_cols = ", ".join(f"'{c}'" for c in VALUE_COLUMNS)
    for name, strategy in (
        ("typical_snapshot_timestamp", "strategy='timestamp', updated_at='updated_at'"),
        ("typical_snapshot_check", f"strategy='check', check_cols=[{check_cols}]"),
    ):
        (path / "snapshots" / f"{name}.sql").write_text(
            f"{{% snapshot {name} %}}\n"
            f"{{{{ config(unique_key='id', {strategy}, hard_deletes='new_record',"
            f" file_format='{file_format}') }}}}\n"
            "select * from {{ ref('typical_latest') }}\n{% endsnapshot %}\n"
        )


# --- comparison -----------------------------------------------------------------------------------

Values = tuple[Any, ...]


def _values(row: dict[str, Any]) -> Values:
    return tuple(row[c] for c in COLUMNS)


def expected_scd1(events: Sequence[Event]) -> dict[int, Values]:
    return {k: _values(target_values(r.values)) for k, r in reference_scd1(events).items()}


@dataclass
class KeyHistory:
    """One key's SCD2 history, as compared: the values of its live versions, how many deleted versions
    it has, and its current version (values, or None when deleted)."""

    live: set[Values] = field(default_factory=set)
    deletes: int = 0
    current: Values | None = None


def expected_scd2(events: Sequence[Event]) -> dict[int, KeyHistory]:
    out: dict[int, KeyHistory] = {}
    for v in reference_scd2(events):
        h = out.setdefault(v.key, KeyHistory())
        values = _values(target_values(v.values))
        if v.is_deleted:
            h.deletes += 1
        else:
            h.live.add(values)
        if v.is_current:
            h.current = None if v.is_deleted else values
    return out


def histories(versions: Sequence[tuple[int, Values, bool, bool]]) -> dict[int, KeyHistory]:
    """(key, values, is_deleted, is_current) rows of a target, as histories."""
    out: dict[int, KeyHistory] = {}
    for key, values, deleted, current in versions:
        h = out.setdefault(key, KeyHistory())
        if deleted:
            h.deletes += 1
        else:
            h.live.add(values)
        if current:
            h.current = None if deleted else values
    return out


def wrong_keys(expected: dict[int, Any], actual: dict[int, Any]) -> int:
    return sum(expected.get(k) != actual.get(k) for k in expected.keys() | actual.keys())


def _scd1_rows(project: DbtProject, relation: str, where: str = "true") -> dict[int, Values]:
    rows = project.rows(f"select {', '.join(COLUMNS)} from {relation} where {where}")
    return {r[KEY]: _values(r) for r in rows}


def actual(project: DbtProject, schema: str) -> dict[str, tuple[dict[int, Any], dict[int, Any]]]:
    """Per approach, (SCD1 rows by key, SCD2 histories by key); an approach without one has {}."""
    cols = ", ".join(COLUMNS)
    ours2 = project.rows(
        f"select {cols}, _cdc_is_deleted, _cdc_is_current from `{schema}`.reference_debezium_scd2"
    )
    out: dict[str, tuple[dict[int, Any], dict[int, Any]]] = {
        "spark_cdc": (
            _scd1_rows(project, f"`{schema}`.reference_debezium_scd1"),
            histories([(r[KEY], _values(r), r["_cdc_is_deleted"], r["_cdc_is_current"]) for r in ours2]),
        ),
        "incremental_merge": (_scd1_rows(project, f"`{schema}`.typical_incremental", "not is_deleted"), {}),
    }
    for name in ("snapshot_timestamp", "snapshot_check"):
        rows = project.rows(
            f"select {cols}, dbt_is_deleted = 'True' as deleted, dbt_valid_to is null as current"
            f" from `{schema}`.typical_{name}"
        )
        versions = [(r[KEY], _values(r), r["deleted"], r["current"]) for r in rows]
        current = {k: v for k, v, d, c in versions if c and not d}
        out[name] = (current, histories(versions))
    return out


@dataclass
class BatchResult:
    """One batch: per approach, its build time and how many keys its SCD1 and SCD2 tables get wrong."""

    batch: int
    keys: int  # keys the reference history has touched so far
    seconds: dict[str, float]
    scd1_wrong: dict[str, int]
    scd2_wrong: dict[str, int]


def run(project: DbtProject, typical: DbtProject, schema: str, log: Log) -> list[BatchResult]:
    """Land each batch, build every approach, compare each with the reference."""
    results = []
    for b, batch in enumerate(log.deliveries):
        messages = [m for e in batch for m in log.renderer.render(e)]
        land_messages(project.spark, f"{schema}_raw", "debezium", messages)
        seconds = {}
        for name, target, command in (
            ("spark_cdc", project, OURS),
            ("incremental_merge", typical, ("run",)),
            ("snapshot_timestamp", typical, ("snapshot", "--select", "typical_snapshot_timestamp")),
            ("snapshot_check", typical, ("snapshot", "--select", "typical_snapshot_check")),
        ):
            started = time.monotonic()
            target.dbt(*command)
            seconds[name] = round(time.monotonic() - started, 2)
        events = log.delivered(b + 1)
        scd1, scd2 = expected_scd1(events), expected_scd2(events)
        got = actual(project, schema)
        results.append(
            BatchResult(
                batch=b + 1,
                keys=len(scd2),
                seconds=seconds,
                scd1_wrong={n: wrong_keys(scd1, got[n][0]) for n in APPROACHES},
                scd2_wrong={n: wrong_keys(scd2, got[n][1]) for n in APPROACHES if got[n][1]},
            )
        )
    return results
