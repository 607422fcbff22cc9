"""An independent reference for the apply engine: random Debezium change histories and a plain
Python function per table type that applies them in sequence order.

The reference knows nothing of the SQL engine. It is the specification the randomized suite
(tests/integration/test_debezium_apply_reference.py) checks the materializations against:

- changes of one source table apply in sequence (LSN) order, however they were delivered;
- an exact redelivery counts once;
- two different changes with the same key and sequence are a conflict: neither applies;
- an update whose image carries the TOAST placeholder keeps that column's previous value;
- a delete removes the key; a truncate removes every key.

A table type plugs in as one more ``reference_<type>`` function over the same events:
``reference_scd1`` (one row per live key) and ``reference_scd2`` (one row per version of every key).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: What Debezium writes in place of an unchanged TOASTed value it did not read.
TOAST_PLACEHOLDER = "__debezium_unavailable_value"

#: Canonical op names of Debezium's op codes.
CANONICAL_OP = {"c": "insert", "u": "update", "d": "delete", "r": "snapshot", "t": "truncate"}

#: Columns of the generated table (``id`` is the primary key) and their target data types.
COLUMNS: dict[str, str] = {
    "id": "int",
    "name": "string",
    "qty": "bigint",
    "price": "double",
    "active": "boolean",
    "note": "string",
}

#: Columns Debezium may send as the TOAST placeholder (large text).
TOASTABLE = ("name", "note")

#: Source commit time (epoch milliseconds) of the generated change with LSN 0; a change's commit
#: time is this plus its LSN, so commit order is LSN order.
COMMIT_MS_AT_LSN_0 = 1_700_000_000_000

Row = dict[str, Any]


@dataclass(frozen=True)
class Event:
    """One Debezium change event of table ``schema.table``: op code, LSN and images."""

    op: str
    lsn: int
    key: int | None
    after: Row | None = None
    before: Row | None = None
    tx_id: int = 0

    @property
    def is_partial(self) -> bool:
        return self.after is not None and TOAST_PLACEHOLDER in self.after.values()

    def content(self) -> tuple[str, str]:
        """What makes two deliveries of the same key and sequence the same change: the same effect.

        Inserts, updates and snapshots upsert their image; the before image decides nothing.
        """
        effect = "delete" if self.op == "d" else "truncate" if self.op == "t" else "upsert"
        return (effect, json.dumps(self.after, sort_keys=True))

    def envelope(self, schema: str, table: str) -> str:
        """The event as the Debezium JSON converter (schemas.enable=false) writes it."""
        return json.dumps(
            {
                "before": self.before,
                "after": self.after,
                "source": {
                    "version": "2.7.0.Final",
                    "connector": "postgresql",
                    "name": "ref",
                    "ts_ms": COMMIT_MS_AT_LSN_0 + self.lsn,
                    "snapshot": "true" if self.op == "r" else "false",
                    "db": "postgres",
                    "schema": schema,
                    "table": table,
                    "txId": self.tx_id,
                    "lsn": self.lsn,
                },
                "op": self.op,
                "ts_ms": 1_700_000_000_100 + self.lsn,
            }
        )


@dataclass(frozen=True)
class Scd1Row:
    """A live key of an SCD1 target: its column values, last applied op and its LSN."""

    values: Row
    op: str
    lsn: int


def sequence_conflicts(events: Iterable[Event]) -> set[tuple[int, int]]:
    """(key, lsn) pairs that carry more than one distinct change (truncates have no key)."""
    contents: dict[tuple[int, int], set[tuple[str, str]]] = {}
    for e in events:
        if e.key is not None:
            contents.setdefault((e.key, e.lsn), set()).add(e.content())
    return {group for group, seen in contents.items() if len(seen) > 1}


def applicable(events: Iterable[Event]) -> list[Event]:
    """The events a target applies, in sequence order: exact redeliveries once, conflicts never.

    Events of one LSN (a snapshot, or the delete and insert of a primary-key change) touch
    different keys, so their relative order does not matter.
    """
    events = list(events)
    conflicts = sequence_conflicts(events)
    unique: dict[tuple[int | None, int, tuple[str, str]], Event] = {}
    for e in events:
        if e.key is None or (e.key, e.lsn) not in conflicts:
            unique.setdefault((e.key, e.lsn, e.content()), e)
    return sorted(unique.values(), key=lambda e: e.lsn)


def reference_scd1(events: Iterable[Event], columns: Sequence[str] = tuple(COLUMNS)) -> dict[int, Scd1Row]:
    """The SCD1 state after applying ``events`` in sequence order: live keys only."""
    state: dict[int, Scd1Row] = {}
    for e in applicable(events):
        if e.op == "t":
            state.clear()
        elif e.op == "d":
            assert e.key is not None
            state.pop(e.key, None)
        else:
            assert e.key is not None and e.after is not None
            previous = state[e.key].values if e.key in state else {}
            values = {
                c: previous.get(c) if e.after.get(c) == TOAST_PLACEHOLDER else e.after.get(c) for c in columns
            }
            state[e.key] = Scd1Row(values=values, op=CANONICAL_OP[e.op], lsn=e.lsn)
    return state


@dataclass(frozen=True)
class Scd2Version:
    """One version of a key in an SCD2 target, validity given by the LSNs of the changes that opened
    it and the next version (commit times are ``COMMIT_MS_AT_LSN_0`` plus those LSNs)."""

    key: int
    values: Row
    valid_from: int
    valid_to: int | None
    is_current: bool
    is_deleted: bool
    op: str  # canonical op of the last change applied to the version
    lsn: int  # LSN of that change


def reference_scd2(
    events: Iterable[Event],
    columns: Sequence[str] = tuple(COLUMNS),
    key_column: str = "id",
    tracked: Sequence[str] | None = None,
) -> list[Scd2Version]:
    """The history a ``cdc_scd2`` target (``delete_handling='new_record'``) holds after ``events``:
    every version of every key, sorted by key and valid-from (docs/cdc_scd2.md, "Semantics").

    Per key, the applicable changes and the table's truncates are played in sequence order:

    - an insert, update or snapshot sets the key's values (a TOAST placeholder keeps the column's
      value in the key's current life; a life ends with a delete or truncate, so after one the
      column is null). It opens a version when it is the key's first change, follows a deleted
      version, or changes a ``tracked`` column (default: every non-key column); otherwise it
      updates the open version in place (values, op and LSN change; valid-from stays);
    - a delete of a key that is not deleted opens a deleted version: the previous values, overridden
      by the columns its before image carries. A delete of a deleted key changes nothing;
    - a truncate opens a deleted version (op ``truncate``, previous values) of every key that exists
      at the source just before it (its last change is an upsert); other keys do not see it.

    A version is valid until the next version of its key opens; the last one is current.
    """
    value_columns = [c for c in columns if c != key_column]
    tracked = value_columns if tracked is None else list(tracked)
    applied = applicable(events)
    truncates = [e for e in applied if e.op == "t"]
    changes_of: dict[int, list[Event]] = {}
    for e in applied:
        if e.key is not None:
            changes_of.setdefault(e.key, []).append(e)
    history: list[Scd2Version] = []
    for key, changes in sorted(changes_of.items()):
        history.extend(
            _key_history(
                key, sorted(changes + truncates, key=lambda e: e.lsn), key_column, value_columns, tracked
            )
        )
    return history


def _key_history(
    key: int, timeline: list[Event], key_column: str, value_columns: list[str], tracked: list[str]
) -> list[Scd2Version]:
    versions: list[dict[str, Any]] = []
    life: Row = {}  # values of the key since its last delete or truncate
    live = False  # the key exists at the source after the changes played so far

    def open_version(e: Event, values: Row, op: str, deleted: bool) -> None:
        versions.append(
            {
                "values": {key_column: key, **values},
                "valid_from": e.lsn,
                "op": op,
                "lsn": e.lsn,
                "deleted": deleted,
            }
        )

    for e in timeline:
        if e.op == "t":
            if live:
                open_version(e, {c: life.get(c) for c in value_columns}, "truncate", deleted=True)
            live, life = False, {}
        elif e.op == "d":
            if not versions or not versions[-1]["deleted"]:
                before = e.before or {}
                values = {c: before[c] if c in before else life.get(c) for c in value_columns}
                open_version(e, values, "delete", deleted=True)
            live, life = False, {}
        else:
            assert e.after is not None
            life = {
                c: life.get(c) if e.after.get(c) == TOAST_PLACEHOLDER else e.after.get(c)
                for c in value_columns
            }
            live = True
            current = versions[-1] if versions else None
            if current is None or current["deleted"] or any(current["values"][c] != life[c] for c in tracked):
                open_version(e, life, CANONICAL_OP[e.op], deleted=False)
            else:
                current.update(values={key_column: key, **life}, op=CANONICAL_OP[e.op], lsn=e.lsn)
    return [
        Scd2Version(
            key=key,
            values=v["values"],
            valid_from=v["valid_from"],
            valid_to=versions[i + 1]["valid_from"] if i + 1 < len(versions) else None,
            is_current=i + 1 == len(versions),
            is_deleted=v["deleted"],
            op=v["op"],
            lsn=v["lsn"],
        )
        for i, v in enumerate(versions)
    ]


# --- random histories ---------------------------------------------------------------------------


@dataclass
class _Source:
    """The source database while a history is generated: the rows that exist right now."""

    rows: dict[int, Row] = field(default_factory=dict)


@dataclass
class Scenario:
    """Keys [first_key, first_key + width) of one table, changed by a handful of transactions."""

    number: int
    first_key: int
    width: int
    steps_left: int

    @property
    def keys(self) -> range:
        return range(self.first_key, self.first_key + self.width)


@dataclass
class History:
    """The events of one source table in commit order, and the scenarios that produced them."""

    events: list[Event]
    scenarios: list[Scenario]


def _random_row(rng: random.Random, key: int) -> Row:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    return {
        "id": key,
        "name": maybe(rng.choice(["anvil", "rope", "tent", "lamp", "stove"]) + f"-{rng.randrange(1000)}"),
        "qty": maybe(rng.randrange(-(2**40), 2**40)),
        "price": maybe(rng.choice([0.0, 1.5, -2.25, 1e-7, 12345.678, rng.randrange(10**6) / 100])),
        "active": maybe(rng.random() < 0.5),
        "note": maybe("n" * rng.randrange(0, 5) + rng.choice(["", " ", "é", "\u2028", "x" * 300])),
    }


def generate_history(
    rng: random.Random,
    *,
    scenarios: int,
    first_key: int,
    first_scenario: int = 0,
    truncates: int = 0,
    snapshot: bool = True,
) -> History:
    """A random, realistic history of one table: ``scenarios`` groups of disjoint keys, interleaved.

    Each step of a scenario is one transaction chosen from what the source could really emit next
    for its keys: insert of an absent key; full update, partial update (TOAST placeholder), update
    that changes nothing, delete, or primary-key change (delete of the old key and insert of an
    absent key, one LSN) of a present key. ``truncates`` truncates of the whole table fall at random
    points; with ``snapshot``, the history starts with a snapshot (op r, one LSN) of some keys.
    """
    source = _Source()
    groups = [
        Scenario(first_scenario + i, first_key + 10 * i, width=rng.randint(1, 3), steps_left=0)
        for i in range(scenarios)
    ]
    for g in groups:
        g.steps_left = rng.randint(2, 9)
    events: list[Event] = []
    lsn = 1_000
    tx = 500
    if snapshot:
        lsn += 8
        for g in groups:
            for key in g.keys:
                if rng.random() < 0.3:
                    row = _random_row(rng, key)
                    source.rows[key] = row
                    events.append(Event("r", lsn, key, after=row, tx_id=tx))

    total_steps = sum(g.steps_left for g in groups)
    # Not in the last steps, so some keys outlive the last truncate.
    truncate_at = set(rng.sample(range(total_steps * 4 // 5), truncates)) if truncates else set()
    step = 0
    while any(g.steps_left for g in groups):
        g = rng.choice([g for g in groups if g.steps_left])
        g.steps_left -= 1
        tx += 1
        lsn += rng.randint(8, 64)
        events.extend(_scenario_step(rng, g, source, lsn, tx))
        if step in truncate_at:
            tx += 1
            lsn += rng.randint(8, 64)
            events.append(Event("t", lsn, None, tx_id=tx))
            source.rows.clear()
        step += 1
    return History(events=events, scenarios=groups)


def _scenario_step(rng: random.Random, g: Scenario, source: _Source, lsn: int, tx: int) -> list[Event]:
    key = rng.choice(list(g.keys))
    if key not in source.rows:
        row = _random_row(rng, key)
        source.rows[key] = row
        return [Event("c", lsn, key, after=row, tx_id=tx)]
    current = source.rows[key]
    absent = [k for k in g.keys if k not in source.rows]
    kinds = ["update", "partial", "unchanged", "delete", "key_change"]
    kind = rng.choices(kinds, weights=[4, 3, 1, 2, 2 if absent else 0])[0]
    if kind == "delete":
        del source.rows[key]
        # REPLICA IDENTITY FULL sends the whole old row, DEFAULT only its key.
        before = dict(current) if rng.random() < 0.5 else {"id": key}
        return [Event("d", lsn, key, before=before, tx_id=tx)]
    if kind == "key_change":
        # Debezium emits a primary-key update as a delete of the old key and a create of the new
        # one, both from the same WAL record (same LSN).
        new_key = rng.choice(absent)
        del source.rows[key]
        row = {**current, "id": new_key, **({"qty": rng.randrange(100)} if rng.random() < 0.5 else {})}
        source.rows[new_key] = row
        return [
            Event("d", lsn, key, before=dict(current), tx_id=tx),
            Event("c", lsn, new_key, after=row, tx_id=tx),
        ]
    if kind == "unchanged":
        # An UPDATE that sets every column to its value still emits a change (an SCD2 target
        # updates its open version in place), sometimes with TOASTed columns not read.
        after = {
            c: TOAST_PLACEHOLDER if c in TOASTABLE and v is not None and rng.random() < 0.5 else v
            for c, v in current.items()
        }
        return [Event("u", lsn, key, after=after, before=None, tx_id=tx)]
    row = _random_row(rng, key)
    source.rows[key] = row
    after = dict(row)
    if kind == "partial":
        # An unchanged TOASTed column: the source keeps its value, the event carries the placeholder.
        for c in rng.sample(TOASTABLE, rng.randint(1, len(TOASTABLE))):
            row[c] = current[c]
            after[c] = TOAST_PLACEHOLDER
    return [Event("u", lsn, key, after=after, before=None, tx_id=tx)]


def add_sequence_conflicts(rng: random.Random, events: Sequence[Event], rate: float) -> list[Event]:
    """``events`` plus, for a ``rate`` share of the keyed ones, a rival: a different change of the
    same key with the same LSN (what a broken connector or a replayed, edited topic produces)."""
    out = list(events)
    for e in events:
        if e.key is None or rng.random() >= rate:
            continue
        if e.op == "d":
            # A delete's rival upserts the key at the delete's LSN.
            row = {c: None for c in COLUMNS} | {"id": e.key, "qty": rng.randrange(1000)}
            rival = Event("u", e.lsn, e.key, after=row, tx_id=e.tx_id)
        else:
            assert e.after is not None
            rival = Event(e.op, e.lsn, e.key, after={**e.after, "qty": rng.randrange(1000)}, tx_id=e.tx_id)
        if rival.content() != e.content():
            out.append(rival)
    return sorted(out, key=lambda e: e.lsn)


# --- delivery -----------------------------------------------------------------------------------


def deliver(
    rng: random.Random,
    events: Sequence[Event],
    *,
    batches: int,
    duplicate_rate: float = 0.15,
    partials_after_their_base: bool = True,
    conflicts_known_on_arrival: bool = False,
) -> list[list[Event]]:
    """``events`` (plus exact redeliveries) split into ``batches`` deliveries in random order.

    Arrival is random except for these rules:

    - ``partials_after_their_base``: a partial update (TOAST placeholder) never arrives in an
      earlier batch than an older change of its key. An SCD1 target stores only the latest state
      of a key, so an older full image arriving after a newer partial one cannot fill the partial
      image's missing columns any more (docs/apply_semantics.md, "Partial images"). An SCD2 target
      replays a key's stored changes and needs no such rule.
    - ``conflicts_known_on_arrival``: no member of a sequence conflict arrives before the batch in
      which a second, different member arrives, so no target applies a change before its conflict
      is known. cdc_scd2 cannot take back such a change yet (docs/cdc_scd2.md, "Not yet").
    """
    copies: list[Event] = []
    for e in events:
        copies.append(e)
        while rng.random() < duplicate_rate:
            copies.append(e)
    batch_of = [rng.randrange(batches) for _ in copies]
    # Both rules only ever delay a copy, so applying them until nothing moves ends.
    while True:
        moved = batch_of.copy()
        if conflicts_known_on_arrival:
            _delay_conflicts_until_known(copies, batch_of)
        if partials_after_their_base:
            _delay_partials_after_their_base(copies, batch_of)
        if batch_of == moved:
            break
    deliveries: list[list[Event]] = [[] for _ in range(batches)]
    for e, b in zip(copies, batch_of, strict=True):
        deliveries[b].append(e)
    for d in deliveries:
        rng.shuffle(d)
    return deliveries


def _delay_partials_after_their_base(copies: Sequence[Event], batch_of: list[int]) -> None:
    latest_batch_of_key: dict[int, int] = {}
    for i in sorted(range(len(copies)), key=lambda i: copies[i].lsn):
        e = copies[i]
        if e.key is None:
            continue
        if e.is_partial:
            batch_of[i] = max(batch_of[i], latest_batch_of_key.get(e.key, 0))
        latest_batch_of_key[e.key] = max(latest_batch_of_key.get(e.key, 0), batch_of[i])


def _delay_conflicts_until_known(copies: Sequence[Event], batch_of: list[int]) -> None:
    first_arrival: dict[tuple[int, int], dict[tuple[str, str], int]] = {}
    for e, b in zip(copies, batch_of, strict=True):
        if e.key is not None:
            seen = first_arrival.setdefault((e.key, e.lsn), {})
            seen[e.content()] = min(seen.get(e.content(), b), b)
    known = {group: sorted(seen.values())[1] for group, seen in first_arrival.items() if len(seen) > 1}
    for i, e in enumerate(copies):
        if e.key is not None and (e.key, e.lsn) in known:
            batch_of[i] = max(batch_of[i], known[e.key, e.lsn])


def expected_rows(state: Mapping[int, Scd1Row]) -> list[Row]:
    """Reference state as sorted rows comparable with the target's columns plus op and LSN."""
    return [{**row.values, "_cdc_op": row.op, "_lsn": row.lsn} for _, row in sorted(state.items())]


def expected_versions(history: Iterable[Scd2Version]) -> list[Row]:
    """Reference history as rows comparable with an SCD2 target's columns plus its metadata: validity
    as LSNs and as commit times (epoch ms), flags, and the op, LSN and commit time of the last change."""

    def ms(lsn: int | None) -> int | None:
        return None if lsn is None else COMMIT_MS_AT_LSN_0 + lsn

    return [
        {
            **v.values,
            "_valid_from_lsn": v.valid_from,
            "_valid_to_lsn": v.valid_to,
            "_valid_from_ms": ms(v.valid_from),
            "_valid_to_ms": ms(v.valid_to),
            "_cdc_is_current": v.is_current,
            "_cdc_is_deleted": v.is_deleted,
            "_cdc_op": v.op,
            "_lsn": v.lsn,
            "_commit_ms": ms(v.lsn),
        }
        for v in history
    ]
