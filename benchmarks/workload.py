"""The benchmark event model: one source table and its change history, shared by every envelope format.

One source table (``bench.items``: ``id`` plus ``payload_width`` value columns) changes ``events``
times over ``keys`` keys. Event ``e`` (its position in source commit order) changes key
``e % keys + 1``; it is that key's change number ``n = e // keys``: the first is an insert, later ones
updates, a fraction of them deletes, and the change after a delete re-inserts the key. Every value is a
pure function of (key, n), so any slice of the log can be generated on its own, by any executor, in
any order, and a second batch (``first_event``) continues the same histories.

Landing order is not source order:
- ``out_of_order_fraction`` of a key's consecutive change pairs land swapped (the later change first,
  ``keys`` positions apart, often in another batch);
- after ``duplicate_fraction`` of the messages the sink redelivers the message ``redelivery_lag``
  positions back (an at-least-once consumer restarting);
- Kafka partitions by key (``key % kafka_partitions``); offsets grow with landing order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SOURCE_SCHEMA = "bench"
SOURCE_TABLE = "items"
#: Offsets: landing position * OFFSET_STRIDE + the message's place among those it produced (a
#: chunked DSQL record and its fragments, a redelivery).
OFFSET_STRIDE = 64
LSN_BASE = 24_023_128
TS_BASE_MS = 1_700_000_000_000
BUCKETS = 100
#: Events per millisecond of source commit time (so commit times are realistic, not all equal).
EVENTS_PER_MS = 10


@dataclass(frozen=True)
class Workload:
    """What to generate; every field is a benchmark knob (benchmarks/README.md)."""

    events: int = 1_000_000
    keys: int = 200_000
    first_event: int = 0
    delete_fraction: float = 0.05
    out_of_order_fraction: float = 0.05
    duplicate_fraction: float = 0.02
    redelivery_lag: int = 1_000
    payload_width: int = 8
    payload_bytes: int = 32
    chunked_fraction: float = 0.01
    chunk_fragments: int = 3
    kafka_partitions: int = 4
    seed: int = 20261123
    #: Source tables (YDB, CockroachDB, Qlik name it per relation rather than per message).
    source_schema: str = SOURCE_SCHEMA
    source_table: str = SOURCE_TABLE


def _mix(*parts: int) -> int:
    """A 64-bit hash of integers (splitmix64 finaliser over a running combination)."""
    x = 0x9E3779B97F4A7C15
    for p in parts:
        x = (x ^ (p & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 31
    x = (x ^ (x >> 30)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def _uniform(*parts: int) -> float:
    return _mix(*parts) / 2.0**64


# The event model


@dataclass(frozen=True)
class Column:
    name: str
    spark_type: str


_KINDS = ("string", "bigint", "double", "boolean")


# A plain dict, not functools.cache: generate.py ships this module to the executors by value, and
# cloudpickle pickles a functools cache by reference (an import the workers cannot do).
_COLUMNS: dict[int, tuple[Column, ...]] = {}


def _columns(payload_width: int) -> tuple[Column, ...]:
    if payload_width in _COLUMNS:
        return _COLUMNS[payload_width]
    values = (Column(f"c{i:02d}_{_KINDS[i % 4]}", _KINDS[i % 4]) for i in range(payload_width))
    _COLUMNS[payload_width] = (Column("id", "bigint"), Column("bucket", "bigint"), *values)
    return _COLUMNS[payload_width]


def columns(wl: Workload) -> list[Column]:
    """``id``, ``bucket``, then the value columns, cycling string, bigint, double, boolean.

    ``bucket`` (0-99) groups keys in creation order, like a creation date: the partition column of
    the partitioned targets, so a batch of changes to recent keys touches few partitions."""
    return list(_columns(wl.payload_width))


def _draws_delete(wl: Workload, key: int, n: int) -> bool:
    return n > 0 and _uniform(wl.seed, 1, key, n) < wl.delete_fraction


def _deletes(wl: Workload, key: int, n: int) -> bool:
    """Change ``n`` deletes when it draws a delete and change ``n - 1`` did not draw one (so two
    deletes never follow each other, without a recursion over the key's history)."""
    return _draws_delete(wl, key, n) and not _draws_delete(wl, key, n - 1)


def op_of(wl: Workload, key: int, n: int) -> str:
    """insert, update or delete: change ``n`` of ``key``; the change after a delete re-inserts."""
    if n == 0 or _deletes(wl, key, n - 1):
        return "insert"
    return "delete" if _deletes(wl, key, n) else "update"


_FILLER = "abcdefghijklmnopqrstuvwxyz0123456789" * 64


def row_of(wl: Workload, key: int, n: int) -> dict[str, Any]:
    """The row of ``key`` after its change ``n`` (a pure function: every envelope agrees)."""
    row: dict[str, Any] = {"id": key, "bucket": (key - 1) * BUCKETS // wl.keys}
    base = _mix(wl.seed, key, n)
    for i, col in enumerate(_columns(wl.payload_width)[2:]):
        # One hash per row; columns differ by an odd multiplier (cheap, and still well spread).
        h = (base * (2 * i + 1) + i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 29
        if col.spark_type == "string":
            head = f"k{key}n{n}:"
            row[col.name] = head + _FILLER[h % 36 : h % 36 + max(wl.payload_bytes - len(head), 0)]
        elif col.spark_type == "bigint":
            row[col.name] = h % 1_000_000_007
        elif col.spark_type == "double":
            row[col.name] = (h % 10_000_000) / 100
        else:
            row[col.name] = bool(h & 1)
    return row


class SourceOrder:
    """The ordering values every envelope derives from an event's source index (``index``): the
    same arithmetic for one event (``Event``) and for an array of them (``columnar.Events``)."""

    index: Any

    @property
    def lsn(self) -> Any:
        return LSN_BASE + 8 * self.index

    @property
    def commit_ms(self) -> Any:
        return TS_BASE_MS + self.index // EVENTS_PER_MS

    @property
    def commit_ns(self) -> Any:
        # Distinct per event: DSQL orders by ts_ns alone.
        return self.commit_ms * 1_000_000 + self.index % EVENTS_PER_MS * 1_000

    @property
    def tx_id(self) -> Any:
        return 100_000 + self.index // 4


@dataclass(frozen=True)
class Event(SourceOrder):
    """Change ``index`` of the source (its commit order) and everything an envelope needs."""

    index: int
    key: int
    n: int
    op: str
    after: dict[str, Any] | None
    before: dict[str, Any] | None


def event(wl: Workload, index: int) -> Event:
    key = index % wl.keys + 1
    n = index // wl.keys
    op = op_of(wl, key, n)
    previous = row_of(wl, key, n - 1) if n > 0 else None
    if op == "delete":
        return Event(index, key, n, op, None, previous)
    return Event(index, key, n, op, row_of(wl, key, n), previous)


def landed_event_index(wl: Workload, position: int) -> int:
    """The event landing at ``position``: swapped with its key's next (or previous) change for the
    chosen fraction of change pairs, when both belong to this workload's range of events."""
    key_slot, n = position % wl.keys, position // wl.keys
    if _uniform(wl.seed, 2, key_slot, n // 2) < wl.out_of_order_fraction:
        other = position + wl.keys if n % 2 == 0 else position - wl.keys
        if wl.first_event <= other < wl.first_event + wl.events:
            return other
    return position


def redelivers(wl: Workload, position: int) -> bool:
    return (
        _uniform(wl.seed, 3, position) < wl.duplicate_fraction
        and position - wl.redelivery_lag >= wl.first_event
    )


def expected_current_rows(wl: Workload, events_through: int) -> dict[int, dict[str, Any]]:
    """The source table after events ``0 .. events_through - 1`` (whatever order they landed in):
    key -> row, deleted keys absent. For checks at test scale (it walks every key)."""
    rows: dict[int, dict[str, Any]] = {}
    for slot in range(min(wl.keys, events_through)):
        key = slot + 1
        last = (events_through - 1 - slot) // wl.keys
        if op_of(wl, key, last) != "delete":
            rows[key] = row_of(wl, key, last)
    return rows
