"""A format-neutral reference for the apply engine: random change histories of one source table, and a
plain Python function per target type that applies them in sequence order.

The reference knows nothing of the SQL engine nor of any envelope format (tests/helpers/render.py turns
its events into each connector's messages). It is the specification the randomized suite
(tests/integration/test_apply_reference_formats.py) checks the materializations against, written from
docs/apply_semantics.md and docs/cdc_scd2.md:

- changes of one source table apply in sequence order, however and in whatever batches they arrived;
- an exact redelivery counts once;
- two different changes with the same key and sequence are a conflict: neither applies;
- a partial image (a set of present columns) keeps the absent columns' values of the key's current
  life (null after a delete or truncate, null for a key never seen);
- a delete ends a key's life; a truncate ends every key's life;
- a primary-key change is ONE logical change: the old key is deleted and the new key upserted, at the
  same sequence.

A target type plugs in as one more ``reference_<type>`` function over the same events:
``reference_scd1`` (one row per live key) and ``reference_scd2`` (one row per version of every key).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

Row = dict[str, Any]

#: Columns of the generated table (``id`` is the primary key) and the targets' declared data types.
#: ``doc`` holds a JSON value (a Python JSON value here; None is SQL NULL, never JSON null); the targets
#: declare it ``string`` and hold its JSON text (``json_text``).
COLUMNS: dict[str, str] = {
    "id": "int",
    "name": "string",
    "qty": "bigint",
    "price": "decimal(12,2)",
    "active": "boolean",
    "note": "string",
    "doc": "string",
}
KEY = "id"
VALUE_COLUMNS = tuple(c for c in COLUMNS if c != KEY)

#: Columns a partial image may leave out. Debezium can only leave out TOASTed values (text and JSON
#: columns); the same histories are rendered in every format, so every format leaves out only these.
PARTIAL_COLUMNS = ("name", "note", "doc")

#: Source commit time (epoch milliseconds) of sequence 0: a change's commit time is this plus its
#: sequence, so commit order is sequence order.
COMMIT_MS_AT_SEQ_0 = 1_700_000_000_000

#: Sequence of a history's initial snapshot; every later change has a larger one.
SNAPSHOT_SEQ = 1_008

OPS = ("insert", "update", "delete", "snapshot", "truncate")
UPSERT_OPS = ("insert", "update", "snapshot")


def json_text(value: Any) -> str:
    """The JSON text a target holds for a JSON value: compact, object keys sorted, non-ASCII as is
    (what Spark writes for a VARIANT)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def target_values(values: Row) -> Row:
    """Column values as the target holds them: ``price`` a Decimal, ``doc`` its JSON text."""
    out = dict(values)
    if out.get("price") is not None:
        out["price"] = Decimal(out["price"])
    if out.get("doc") is not None:
        out["doc"] = json_text(out["doc"])
    return out


@dataclass(frozen=True)
class Event:
    """One change of the source table, format-neutral.

    ``after``: the new row (insert, update, snapshot), every column's value at the source after the
    change. ``present``: for a partial image, the columns the message carries (the key among them);
    None when it carries all. ``before``: the old-row image the message carries (the whole old row, or
    only its key, or none). ``old``: the whole old row at the source (None when the key did not exist);
    renderers of connectors that always send whole old rows use it.

    A primary-key change is one event: op ``update`` whose ``before`` carries the OLD key and whose
    ``after`` carries the new one (``old_key``). Truncates have no key.
    """

    op: str
    seq: int
    key: int | None = None
    after: Row | None = None
    present: frozenset[str] | None = None
    before: Row | None = None
    old: Row | None = None
    tx_id: int = 0

    @property
    def old_key(self) -> int | None:
        """The key the row had before a primary-key change (None for any other change)."""
        if self.op == "update" and self.before is not None and self.before.get(KEY) != self.key:
            return int(self.before[KEY])
        return None

    @property
    def is_key_change(self) -> bool:
        return self.old_key is not None

    @property
    def is_partial(self) -> bool:
        """The image leaves out columns of the row (columns a row holds that ``present`` lacks)."""
        return (
            self.after is not None
            and self.present is not None
            and any(c not in self.present for c in self.after)
        )

    def image(self) -> Row:
        """The values the after image carries: the present columns only."""
        assert self.after is not None, self
        return {c: v for c, v in self.after.items() if self.present is None or c in self.present}

    def changes(self) -> list[Change]:
        """What the event does to each key: a delete of the old key and an upsert of the new one for a
        primary-key change, one change otherwise, none for a truncate."""
        if self.op == "truncate" or self.key is None:
            return []
        if self.op == "delete":
            return [Change(self.key, self.seq, "delete", self.before, self)]
        old_key = self.old_key
        upsert = Change(self.key, self.seq, "upsert", self.image(), self)
        if old_key is not None:
            return [Change(old_key, self.seq, "delete", self.before, self), upsert]
        return [upsert]

    def ident(self) -> str:
        """Stable text of every field: a redelivery has the same, any other event another."""
        present = None if self.present is None else sorted(self.present)
        fields = [self.op, self.seq, self.key, self.after, present, self.before, self.old, self.tx_id]
        return json.dumps(fields, sort_keys=True, default=str)


@dataclass(frozen=True, eq=False)
class Change:
    """One key's part of an event: an upsert of the image it carries, or a delete (``image`` is then
    the before image, which may hold only the key, or be None)."""

    key: int
    seq: int
    effect: str  # "upsert" | "delete"
    image: Row | None
    event: Event = field(repr=False)

    @property
    def op(self) -> str:
        """The change's op: delete, or the event's (a key change's upsert is an ``update``)."""
        return "delete" if self.effect == "delete" else self.event.op

    def content(self) -> tuple[str, str]:
        """What makes two deliveries of the same key and sequence the same change: the same effect.

        Upserts (insert, update, snapshot) of the same image are the same; the before image decides
        nothing (docs/apply_semantics.md, "Sequence conflicts")."""
        if self.effect == "delete":
            return ("delete", "")
        return ("upsert", json.dumps(self.image, sort_keys=True, default=str))


OpName = Callable[[Change], str]


def default_op_name(change: Change) -> str:
    return change.op


def changes_of(events: Iterable[Event]) -> list[Change]:
    return [c for e in events for c in e.changes()]


def sequence_conflicts(events: Iterable[Event]) -> set[tuple[int, int]]:
    """(key, seq) pairs that carry more than one distinct change (truncates have no key)."""
    contents: dict[tuple[int, int], set[tuple[str, str]]] = {}
    for c in changes_of(events):
        contents.setdefault((c.key, c.seq), set()).add(c.content())
    return {group for group, seen in contents.items() if len(seen) > 1}


def applicable(events: Iterable[Event]) -> list[Change]:
    """The changes a target applies, in sequence order: exact redeliveries once, conflicts never.

    Changes of one sequence (a snapshot, or the two halves of a primary-key change) touch different
    keys, so their relative order does not matter."""
    events = list(events)
    conflicts = sequence_conflicts(events)
    unique: dict[tuple[int, int, tuple[str, str]], Change] = {}
    for c in changes_of(events):
        if (c.key, c.seq) not in conflicts:
            unique.setdefault((c.key, c.seq, c.content()), c)
    return sorted(unique.values(), key=lambda c: c.seq)


def truncate_seqs(events: Iterable[Event]) -> list[int]:
    """Sequences of the truncates, each once (a redelivered truncate is the same truncate)."""
    return sorted({e.seq for e in events if e.op == "truncate"})


def _timeline(events: Iterable[Event]) -> list[tuple[int, Change | None]]:
    """Applicable changes and truncates (None) in sequence order."""
    events = list(events)
    items: list[tuple[int, Change | None]] = [(c.seq, c) for c in applicable(events)]
    items.extend((s, None) for s in truncate_seqs(events))
    return sorted(items, key=lambda item: item[0])


# --- SCD1 ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scd1Row:
    """A live key of an SCD1 target: its column values, last applied op and its sequence."""

    values: Row
    op: str
    seq: int


def reference_scd1(events: Iterable[Event], op_name: OpName = default_op_name) -> dict[int, Scd1Row]:
    """The SCD1 state after applying ``events`` in sequence order: live keys only.

    A column absent from a partial image keeps the key's value (null when the key was deleted or
    truncated since, or never seen), whatever the order the changes arrived in: an older full image
    arriving after a newer partial one fills the columns the partial one did not carry. ``op_name``
    names a change's op as the target records it (formats differ: tests/helpers/render.py)."""
    state: dict[int, Scd1Row] = {}
    for _, c in _timeline(events):
        if c is None:
            state.clear()
        elif c.effect == "delete":
            state.pop(c.key, None)
        else:
            assert c.image is not None
            previous = state[c.key].values if c.key in state else {}
            values = {col: c.image[col] if col in c.image else previous.get(col) for col in COLUMNS}
            values[KEY] = c.key
            state[c.key] = Scd1Row(values=values, op=op_name(c), seq=c.seq)
    return state


# --- SCD2 ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scd2Version:
    """One version of a key in an SCD2 target; validity given by the sequences of the changes that
    opened it and the key's next version."""

    key: int
    values: Row
    valid_from: int
    valid_to: int | None
    is_current: bool
    is_deleted: bool
    op: str  # op of the last change applied to the version
    seq: int  # sequence of that change


def reference_scd2(
    events: Iterable[Event], tracked: Sequence[str] | None = None, op_name: OpName = default_op_name
) -> list[Scd2Version]:
    """The history a ``cdc_scd2`` target (``delete_handling='new_record'``) holds after ``events``:
    every version of every key, sorted by key and valid-from (docs/cdc_scd2.md, "Semantics").

    Per key, the applicable changes and the table's truncates are played in sequence order:

    - an upsert sets the key's values (a column absent from a partial image keeps its value of the
      key's current life; a life ends with a delete or truncate, so after one the column is null). It
      opens a version when it is the key's first change, follows a deleted version, or changes a
      ``tracked`` column (default: every non-key column); otherwise it updates the open version in
      place (values, op and sequence change; valid-from stays);
    - a delete of a key that is not deleted opens a deleted version: the previous values, overridden
      by the columns its before image carries. A delete of a deleted key changes nothing;
    - a truncate opens a deleted version (op ``truncate``, previous values) of every key that exists
      at the source just before it (its last change is an upsert); other keys do not see it.

    A version is valid until the next version of its key opens; the last one is current.
    """
    tracked_columns = list(VALUE_COLUMNS) if tracked is None else list(tracked)
    timeline = _timeline(events)
    truncates: list[tuple[int, Change | None]] = [(s, c) for s, c in timeline if c is None]
    by_key: dict[int, list[tuple[int, Change | None]]] = {}
    for s, c in timeline:
        if c is not None:
            by_key.setdefault(c.key, []).append((s, c))
    history: list[Scd2Version] = []
    for key, items in sorted(by_key.items()):
        key_timeline = sorted(items + truncates, key=lambda item: item[0])
        history.extend(_key_history(key, key_timeline, tracked_columns, op_name))
    return history


def _key_history(
    key: int, timeline: list[tuple[int, Change | None]], tracked: list[str], op_name: OpName
) -> list[Scd2Version]:
    versions: list[dict[str, Any]] = []
    life: Row = {}  # values of the key since its last delete or truncate
    live = False  # the key exists at the source after the changes played so far

    def open_version(seq: int, values: Row, op: str, deleted: bool) -> None:
        versions.append(
            {"values": {KEY: key, **values}, "valid_from": seq, "op": op, "seq": seq, "deleted": deleted}
        )

    for seq, c in timeline:
        if c is None:
            if live:
                open_version(seq, {col: life.get(col) for col in VALUE_COLUMNS}, "truncate", deleted=True)
            live, life = False, {}
        elif c.effect == "delete":
            if not versions or not versions[-1]["deleted"]:
                before = c.image or {}
                values = {col: before[col] if col in before else life.get(col) for col in VALUE_COLUMNS}
                open_version(seq, values, op_name(c), deleted=True)
            live, life = False, {}
        else:
            assert c.image is not None
            life = {col: c.image[col] if col in c.image else life.get(col) for col in VALUE_COLUMNS}
            live = True
            current = versions[-1] if versions else None
            if current is None or current["deleted"] or any(current["values"][t] != life[t] for t in tracked):
                open_version(seq, life, op_name(c), deleted=False)
            else:
                current.update(values={KEY: key, **life}, op=op_name(c), seq=seq)
    return [
        Scd2Version(
            key=key,
            values=v["values"],
            valid_from=v["valid_from"],
            valid_to=versions[i + 1]["valid_from"] if i + 1 < len(versions) else None,
            is_current=i + 1 == len(versions),
            is_deleted=v["deleted"],
            op=v["op"],
            seq=v["seq"],
        )
        for i, v in enumerate(versions)
    ]


# --- random histories ---------------------------------------------------------------------------


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


#: Keys of consecutive scenarios start this far apart (a scenario has at most 3 keys).
SCENARIO_STRIDE = 10


@dataclass
class History:
    """The events of one source table in commit order, and the scenarios that produced them."""

    events: list[Event]
    scenarios: list[Scenario]

    def scenario_of(self, key: int) -> Scenario | None:
        i = (key - self.scenarios[0].first_key) // SCENARIO_STRIDE if self.scenarios else -1
        if 0 <= i < len(self.scenarios) and key in self.scenarios[i].keys:
            return self.scenarios[i]
        return None


#: JSON values of ``doc``: JSON strings (some that read as a number or a boolean), numbers, booleans,
#: nested objects and arrays. Numbers are integers and short decimals whose Python repr is their JSON
#: text. Never JSON null at the top (SQL NULL is None).
DOC_VALUES: tuple[Any, ...] = (
    "mañana",
    "118",
    "true",
    "",
    'say "hi"',
    118,
    -3,
    0,
    1.5,
    -0.25,
    2**40,
    True,
    False,
    {"b": 1, "a": [1, "x", True, None]},
    {"nested": {"z": "mañana", "k": [2.5, {"deep": False}]}, "empty": {}},
    [],
    ["a", 1, {"c": "d"}],
    {},
)


def _random_row(rng: random.Random, key: int) -> Row:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    return {
        "id": key,
        "name": maybe(rng.choice(["anvil", "rope", "tent", "lamp", "stove"]) + f"-{rng.randrange(1000)}"),
        "qty": maybe(rng.randrange(-(2**40), 2**40)),
        "price": maybe(Decimal(rng.randrange(-(10**8), 10**8)) / 100),
        "active": maybe(rng.random() < 0.5),
        "note": maybe("n" * rng.randrange(0, 5) + rng.choice(["", " ", "é", "\u2028", "x" * 300])),
        "doc": maybe(rng.choice(DOC_VALUES)),
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
    for its keys: insert of an absent key (a re-insert when it existed before); full update, partial
    update (some of PARTIAL_COLUMNS left out), update that changes nothing (sometimes partial),
    delete (before image: the whole row or only the key), or primary-key change (to an absent key of
    the scenario) of a present key. ``truncates`` truncates of the whole table fall at random points;
    with ``snapshot``, the history starts with a snapshot (one sequence, SNAPSHOT_SEQ) of some keys.
    """
    rows: dict[int, Row] = {}  # the source table while the history is generated
    groups = [
        Scenario(first_scenario + i, first_key + SCENARIO_STRIDE * i, width=rng.randint(1, 3), steps_left=0)
        for i in range(scenarios)
    ]
    for g in groups:
        g.steps_left = rng.randint(2, 9)
    events: list[Event] = []
    seq = SNAPSHOT_SEQ
    tx = 500
    if snapshot:
        for g in groups:
            for key in g.keys:
                if rng.random() < 0.3:
                    row = _random_row(rng, key)
                    rows[key] = row
                    events.append(Event("snapshot", seq, key, after=row, tx_id=tx))

    total_steps = sum(g.steps_left for g in groups)
    # Not in the last steps, so some keys outlive the last truncate.
    truncate_at = set(rng.sample(range(total_steps * 4 // 5), truncates)) if truncates else set()
    step = 0
    while any(g.steps_left for g in groups):
        g = rng.choice([g for g in groups if g.steps_left])
        g.steps_left -= 1
        tx += 1
        seq += rng.randint(8, 64)
        events.append(_scenario_step(rng, g, rows, seq, tx))
        if step in truncate_at:
            tx += 1
            seq += rng.randint(8, 64)
            events.append(Event("truncate", seq, None, tx_id=tx))
            rows.clear()
        step += 1
    return History(events=events, scenarios=groups)


def _scenario_step(rng: random.Random, g: Scenario, rows: dict[int, Row], seq: int, tx: int) -> Event:
    key = rng.choice(list(g.keys))
    if key not in rows:
        row = _random_row(rng, key)
        rows[key] = row
        return Event("insert", seq, key, after=row, tx_id=tx)
    current = rows[key]
    absent = [k for k in g.keys if k not in rows]
    kinds = ["update", "partial", "unchanged", "delete", "key_change"]
    kind = rng.choices(kinds, weights=[4, 3, 1, 2, 4 if absent else 0])[0]
    # REPLICA IDENTITY FULL (and the like) sends the whole old row, DEFAULT only its key.
    full_before = rng.random() < 0.5
    if kind == "delete":
        del rows[key]
        before = dict(current) if full_before else {KEY: key}
        return Event("delete", seq, key, before=before, old=dict(current), tx_id=tx)
    if kind == "key_change":
        new_key = rng.choice(absent)
        del rows[key]
        row = {**current, KEY: new_key, **({"qty": rng.randrange(100)} if rng.random() < 0.5 else {})}
        rows[new_key] = row
        before = dict(current) if full_before else {KEY: key}
        return Event("update", seq, new_key, after=row, before=before, old=dict(current), tx_id=tx)
    before_image = dict(current) if full_before else None
    # Only values the source stored out of line can be left out (a TOASTed value is never null).
    leavable = [c for c in PARTIAL_COLUMNS if current[c] is not None]
    if kind == "unchanged":
        # An UPDATE that sets every column to its value still emits a change (an SCD2 target updates
        # its open version in place), sometimes with stored-out-of-line columns not read.
        left_out = {c for c in leavable if rng.random() < 0.5}
        present = frozenset(c for c in current if c not in left_out) if left_out else None
        return Event(
            "update",
            seq,
            key,
            after=dict(current),
            present=present,
            before=before_image,
            old=dict(current),
            tx_id=tx,
        )
    row = _random_row(rng, key)
    present = None
    if kind == "partial" and leavable:
        # The left-out columns keep their value at the source; the image does not carry them.
        left_out = set(rng.sample(leavable, rng.randint(1, len(leavable))))
        for c in left_out:
            row[c] = current[c]
        present = frozenset(c for c in row if c not in left_out)
    rows[key] = row
    return Event(
        "update", seq, key, after=row, present=present, before=before_image, old=dict(current), tx_id=tx
    )


def truncates_as_deletes(events: Sequence[Event], rng: random.Random | None = None) -> list[Event]:
    """``events`` with each truncate replaced by what ``DELETE FROM`` the table sends: a delete of
    every row that exists just before it, in the truncate's transaction and at its sequence (for
    connectors that send no truncates). Before images: the whole row, or with ``rng`` sometimes only
    the key."""
    rows: dict[int, Row] = {}
    out: list[Event] = []
    for e in sorted(events, key=lambda e: e.seq):
        if e.op == "truncate":
            for key, row in sorted(rows.items()):
                before = {KEY: key} if rng is not None and rng.random() < 0.5 else dict(row)
                out.append(Event("delete", e.seq, key, before=before, old=dict(row), tx_id=e.tx_id))
            rows.clear()
            continue
        out.append(e)
        for c in e.changes():
            if c.effect == "delete":
                rows.pop(c.key, None)
            else:
                assert e.after is not None
                rows[c.key] = dict(e.after)
    return out


def add_sequence_conflicts(
    rng: random.Random,
    events: Sequence[Event],
    rate: float,
    eligible: Callable[[Event], bool] | None = None,
) -> list[Event]:
    """``events`` plus, for a ``rate`` share of the keyed ones, a rival: a different change of the
    same key with the same sequence (what a broken connector or a replayed, edited topic produces).

    Primary-key changes get no rival, nor events ``eligible`` refuses (a format whose snapshot rows
    carry no source sequence cannot put them in conflict)."""
    out = list(events)
    for e in events:
        if e.key is None or e.is_key_change or (eligible is not None and not eligible(e)):
            continue
        if rng.random() >= rate:
            continue
        if e.op == "delete":
            # A delete's rival upserts the key at the delete's sequence.
            row = {c: None for c in COLUMNS} | {KEY: e.key, "qty": rng.randrange(1000)}
            rival = Event("update", e.seq, e.key, after=row, tx_id=e.tx_id)
        else:
            assert e.after is not None
            rival = replace(e, after={**e.after, "qty": rng.randrange(1000)})
        if rival.changes()[0].content() != e.changes()[0].content():
            out.append(rival)
    return sorted(out, key=lambda e: e.seq)


# --- delivery -----------------------------------------------------------------------------------


def deliver(
    rng: random.Random, events: Sequence[Event], *, batches: int, duplicate_rate: float = 0.15
) -> list[list[Event]]:
    """``events`` plus exact redeliveries (the same objects again), split into ``batches``
    deliveries at random, each in random order.

    Nothing is held back: a partial image may arrive in an earlier batch than an older full image of
    its key (which must still fill the columns the partial one did not carry), and a member of a
    sequence conflict may be applied in one run before its rival arrives in a later one (the target
    takes it back)."""
    copies: list[Event] = []
    for e in events:
        copies.append(e)
        while rng.random() < duplicate_rate:
            copies.append(e)
    deliveries: list[list[Event]] = [[] for _ in range(batches)]
    for e in copies:
        deliveries[rng.randrange(batches)].append(e)
    for d in deliveries:
        rng.shuffle(d)
    return deliveries


def first_arrival(deliveries: Sequence[Sequence[Event]]) -> dict[int, int]:
    """Batch of each event's first delivery, by ``id``."""
    first: dict[int, int] = {}
    for b, batch in enumerate(deliveries):
        for e in batch:
            first.setdefault(id(e), b)
    return first


def early_partials(deliveries: Sequence[Sequence[Event]]) -> int:
    """Partial images first delivered in an earlier batch than some older change of their key."""
    first = first_arrival(deliveries)
    events = {id(e): e for batch in deliveries for e in batch}.values()
    arrivals: dict[int, list[tuple[int, int]]] = {}  # key -> (seq, batch)
    for e in events:
        for c in e.changes():
            arrivals.setdefault(c.key, []).append((c.seq, first[id(e)]))
    count = 0
    for e in events:
        if e.is_partial and e.key is not None:
            mine = first[id(e)]
            count += any(s < e.seq and b > mine for s, b in arrivals[e.key])
    return count
