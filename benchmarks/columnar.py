"""The benchmark's raw messages, a range of landing positions at a time.

``envelopes.py`` says what each format's messages are, one event at a time, and ``generate.raw_rows``
lands them; that costs about 30 µs of Python per event (the per-column hashes, dicts, ``json.dumps``),
which made generation a tenth of ``make bench``. This module builds the same rows, byte for byte, for a
whole range at once: the event model's hashes in numpy (uint64 arithmetic wraps, as the scalar code's
``& 0xFFFFFFFFFFFFFFFF`` does) and the JSON text with Arrow's string kernels, one template per format.
``tests/unit/test_benchmark_workload.py`` compares every format's rows with ``raw_rows``. What does not
fit a fixed template comes from the per-event code: Aurora DSQL's chunked records and Qlik's table
metadata.

The templates rely on the workload's own values needing no JSON escaping: generated strings are ASCII
letters, digits and ``:``; names (columns, the source table) are encoded with ``json.dumps``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from dbt_spark_cdc.qlik_replicate import encode_mask

from benchmarks import envelopes
from benchmarks.workload import (
    _FILLER,
    BUCKETS,
    OFFSET_STRIDE,
    SourceOrder,
    Workload,
    columns,
    event,
)

Ints = np.ndarray[Any, np.dtype[np.int64]]
Bools = np.ndarray[Any, np.dtype[np.bool_]]
Piece = str | pa.Array

_U64 = 0xFFFFFFFFFFFFFFFF

ARROW_SCHEMA = pa.schema(
    [
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("key", pa.string()),
        ("value", pa.string()),
        ("ingested_at", pa.timestamp("us")),
    ]
)


# The event model (workload.py), over arrays


def _u64(part: int | Ints) -> Any:
    if isinstance(part, np.ndarray):
        return part.astype(np.int64, copy=False).view(np.uint64)
    return np.uint64(part & _U64)


def mix(*parts: int | Ints) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """``workload._mix`` over arrays (at least one part must be an array)."""
    with np.errstate(over="ignore"):
        x: Any = np.uint64(0x9E3779B97F4A7C15)
        for p in parts:
            x = (x ^ _u64(p)) * np.uint64(0xBF58476D1CE4E5B9)
            x = x ^ (x >> np.uint64(31))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(x ^ (x >> np.uint64(31)))


def uniform(*parts: int | Ints) -> np.ndarray[Any, np.dtype[np.float64]]:
    return mix(*parts).astype(np.float64) / 2.0**64


def landed_event_index(wl: Workload, position: Ints) -> Ints:
    key_slot, n = position % wl.keys, position // wl.keys
    swap = uniform(wl.seed, 2, key_slot, n // 2) < wl.out_of_order_fraction
    other = np.where(n % 2 == 0, position + wl.keys, position - wl.keys)
    swap &= (other >= wl.first_event) & (other < wl.first_event + wl.events)
    return np.where(swap, other, position)


def redelivers(wl: Workload, position: Ints) -> Bools:
    return (uniform(wl.seed, 3, position) < wl.duplicate_fraction) & (
        position - wl.redelivery_lag >= wl.first_event
    )


def _draws_delete(wl: Workload, key: Ints, n: Ints) -> Bools:
    return (n > 0) & (uniform(wl.seed, 1, key, n) < wl.delete_fraction)


def _deletes(wl: Workload, key: Ints, n: Ints) -> Bools:
    return _draws_delete(wl, key, n) & ~_draws_delete(wl, key, n - 1)


@dataclass(frozen=True)
class Events(SourceOrder):
    """Events by source index (``workload.event``), as arrays; ``lsn``, ``commit_ms``, ``commit_ns``
    and ``tx_id`` come from ``SourceOrder``, as ``Event``'s do."""

    index: Ints
    key: Ints
    n: Ints
    insert: Bools
    delete: Bools

    @property
    def update(self) -> Bools:
        return ~(self.insert | self.delete)


def events(wl: Workload, index: Ints) -> Events:
    key, n = index % wl.keys + 1, index // wl.keys
    insert = (n == 0) | _deletes(wl, key, n - 1)
    return Events(index, key, n, insert, ~insert & _deletes(wl, key, n))


# Rows (workload.row_of) as JSON values, one Arrow string array per column


def _text(values: np.ndarray[Any, Any]) -> pa.Array:
    return pc.cast(pa.array(values), pa.string())


def _join(*pieces: Piece) -> pa.Array:
    return pc.binary_join_element_wise(*pieces, "")


@dataclass(frozen=True)
class Rows:
    """``row_of(key, n)`` for arrays of (key, n): per column, its JSON value text, and (for the
    comparisons Qlik's change mask needs) the values themselves."""

    values: dict[str, Any]
    texts: dict[str, pa.Array]


def rows(wl: Workload, key: Ints, n: Ints, *, integral_doubles_as_ints: bool = False) -> Rows:
    """``integral_doubles_as_ints``: ``5`` rather than Python's ``5.0`` (CockroachDB's encoder)."""
    key_text = _text(key)
    values: dict[str, Any] = {"id": key, "bucket": (key - 1) * BUCKETS // wl.keys}
    texts = {"id": key_text, "bucket": _text(values["bucket"])}
    base = mix(wl.seed, key, n)
    head: pa.Array | None = None
    # _FILLER[s : s + payload_bytes] for each start s a hash can pick
    fillers = pa.array([_FILLER[s : s + wl.payload_bytes] for s in range(36)])
    for i, col in enumerate(columns(wl)[2:]):
        with np.errstate(over="ignore"):
            h = base * np.uint64(2 * i + 1) + np.uint64(i * 0x9E3779B97F4A7C15 & _U64)
            h ^= h >> np.uint64(29)
        if col.spark_type == "string":
            if head is None:
                head = _join("k", key_text, "n", _text(n), ":")
            whole = _join(head, pc.take(fillers, pa.array((h % np.uint64(36)).astype(np.int64))))
            # head + _FILLER[s : s + max(payload_bytes - len(head), 0)]
            short = pc.less(pc.utf8_length(head), wl.payload_bytes)
            text = pc.if_else(short, pc.utf8_slice_codeunits(whole, 0, wl.payload_bytes), head)
            values[col.name] = text
            texts[col.name] = _join('"', text, '"')
        elif col.spark_type == "bigint":
            values[col.name] = (h % np.uint64(1_000_000_007)).astype(np.int64)
            texts[col.name] = _text(values[col.name])
        elif col.spark_type == "double":
            hundredths = (h % np.uint64(10_000_000)).astype(np.int64)
            values[col.name] = hundredths
            # Arrow writes the shortest round-trip digits, as repr() does, but an integral value
            # without its fraction (checked for every value this column can take).
            text = _text(hundredths / 100)
            if not integral_doubles_as_ints:
                text = pc.if_else(pa.array(hundredths % 100 == 0), _join(text, ".0"), text)
            texts[col.name] = text
        else:
            values[col.name] = (h & np.uint64(1)).astype(np.bool_)
            texts[col.name] = pc.if_else(pa.array(values[col.name]), "true", "false")
    return Rows(values, texts)


def json_object(
    names: Sequence[str], texts: dict[str, pa.Array], *, item: str = ",", colon: str = ":"
) -> pa.Array:
    """``{"name":value,...}`` of the columns ``names``, in that order."""
    pieces: list[Piece] = []
    for i, name in enumerate(names):
        pieces += [("{" if i == 0 else item) + json.dumps(name) + colon, texts[name]]
    return _join(*pieces, "}")


def _nullable(present: Bools, text: pa.Array) -> pa.Array:
    return pc.if_else(pa.array(present), text, "null")


def _names(wl: Workload) -> list[str]:
    return [c.name for c in columns(wl)]


# One template per format: Events -> (message keys or None, values, events left to envelopes.py)

Encoded = tuple[pa.Array | None, pa.Array, Bools]


def _previous(wl: Workload, ev: Events, **kw: bool) -> Rows:
    return rows(wl, ev.key, np.maximum(ev.n - 1, 0), **kw)


def debezium(wl: Workload, ev: Events) -> Encoded:
    names = _names(wl)
    key = _text(ev.key)
    after = _nullable(~ev.delete, json_object(names, rows(wl, ev.key, ev.n).texts))
    before = _nullable(ev.delete, _join('{"id":', key, "}"))
    op = pc.if_else(pa.array(ev.insert), "c", pc.if_else(pa.array(ev.delete), "d", "u"))
    lsn = _text(ev.lsn)
    value = _join(
        '{"before":', before, ',"after":', after,
        ',"source":{"version":"2.7.3.Final","connector":"postgresql","name":"bench","ts_ms":',
        _text(ev.commit_ms), ',"snapshot":"false","db":"shop","sequence":"[\\"', _text(ev.lsn - 8),
        '\\",\\"', lsn, '\\"]","schema":', json.dumps(wl.source_schema), ',"table":',
        json.dumps(wl.source_table), ',"txId":', _text(ev.tx_id), ',"lsn":', lsn,
        ',"xmin":null},"transaction":null,"op":"', op, '","ts_ms":', _text(ev.commit_ms + 35), "}",
    )  # fmt: skip
    return _join('{"id": ', key, "}"), value, np.zeros(len(ev.index), np.bool_)


def _base32_ids(seed: int, tag: int, ids: Ints) -> pa.Array:
    """``envelopes._base32_id(seed, tag, id)`` per id, computed once per distinct id."""
    distinct, where = np.unique(ids, return_inverse=True)
    texts = [envelopes._base32_id(seed, tag, int(i)) for i in distinct]
    return pc.take(pa.array(texts), pa.array(where.astype(np.int64)))


def aurora_dsql(wl: Workload, ev: Events) -> Encoded:
    names = _names(wl)
    commit_ns = ev.commit_ns
    delivered_ns = commit_ns + envelopes._DSQL_LAG_NS
    value = _join(
        '{"type":"full","op":"', pc.if_else(pa.array(ev.delete), "d", "c"),
        '","before":', _nullable(ev.delete, _join('{"id":', _text(ev.key), "}")),
        ',"after":', _nullable(~ev.delete, json_object(names, rows(wl, ev.key, ev.n).texts)),
        ',"source":{"version":"1.0","ts_ms":', _text(ev.commit_ms), ',"ts_ns":', _text(commit_ns),
        ',"txId":"', _base32_ids(wl.seed, 7, ev.tx_id), '","schema":', json.dumps(wl.source_schema),
        ',"table":', json.dumps(wl.source_table), ',"db":"postgres","cluster":"',
        envelopes._dsql_cluster(wl.seed), '"},"ts_ms":', _text(delivered_ns // 1_000_000),
        ',"ts_ns":', _text(delivered_ns), "}",
    )  # fmt: skip
    chunked = ~ev.delete & (uniform(wl.seed, 4, ev.index) < wl.chunked_fraction)
    return None, value, chunked


def qlik_replicate(wl: Workload, ev: Events) -> Encoded:
    names, all_mask, key_mask = envelopes._qlik_masks(wl.payload_width)
    current, previous = rows(wl, ev.key, ev.n), _previous(wl, ev)
    image, prev_image = json_object(names, current.texts), json_object(names, previous.texts)
    # UPDATE: the columns whose value changed, as a bit mask, then its text once per distinct mask.
    bits = np.zeros(len(ev.index), np.int64)
    for i, name in enumerate(names):
        now, then = current.values[name], previous.values[name]
        if isinstance(now, pa.Array):
            changed = pc.not_equal(now, then).to_numpy(zero_copy_only=False)
        else:
            changed = now != then
        bits |= changed.astype(np.int64) << i
    width = len(names)
    masks = {int(b): encode_mask([i + 1 for i in range(width) if b >> i & 1], width) for b in np.unique(bits)}
    change_mask = pc.if_else(
        pa.array(ev.insert),
        all_mask,
        pc.if_else(pa.array(ev.delete), key_mask, pa.array([masks[b] for b in bits.tolist()])),
    )
    distinct_ms, where = np.unique(ev.commit_ms, return_inverse=True)
    times = [envelopes._qlik_times(int(ms)) for ms in distinct_ms]
    take = pa.array(where.astype(np.int64))
    prefix, timestamp = (pc.take(pa.array([t[i] for t in times]), take) for i in (0, 1))
    position = ev.index % 4
    tx_id = ev.tx_id.tolist()
    lsn = ev.lsn.tolist()
    stream = [f"00000000.{at:08x}.00000001.0000.02.0000:{tx}." for at, tx in zip(lsn, tx_id, strict=True)]
    value = _join(
        '{"magic":"atMSG","type":"DT","headers":null,"messageSchemaId":null,"messageSchema":null,'
        '"message":{"data":', pc.if_else(pa.array(ev.delete), prev_image, image),
        ',"beforeData":', _nullable(ev.update, prev_image),
        ',"headers":{"operation":"',
        pc.if_else(pa.array(ev.insert), "INSERT", pc.if_else(pa.array(ev.delete), "DELETE", "UPDATE")),
        '","changeSequence":"', prefix, pc.utf8_lpad(_text(ev.index), 19, "0"),
        '","timestamp":"', timestamp, '","streamPosition":"', pa.array(stream), _text(position),
        '.16","transactionId":"', pa.array([f"{tx:032X}" for tx in tx_id]),
        '","changeMask":"', change_mask, '","columnMask":"', all_mask,
        '","transactionEventCounter":', _text(position + 1),
        ',"transactionLastEvent":', pc.if_else(pa.array(position == 3), "true", "false"), "}}}",
    )  # fmt: skip
    return _text(ev.key), value, np.zeros(len(ev.index), np.bool_)


def ydb(wl: Workload, ev: Events) -> Encoded:
    names = _names(wl)[1:]  # images leave out the key column
    image = json_object(names, rows(wl, ev.key, ev.n).texts)
    old = json_object(names, _previous(wl, ev).texts)
    key = _join("[", _text(ev.key), "]")
    ts = _join(',"ts":[', _text(ev.commit_ms), ",", _text(envelopes._YDB_TX_BASE + ev.tx_id), "]}")
    upsert = _join('{"update":{},"newImage":', image, ',"key":', key)
    value = pc.if_else(
        pa.array(ev.delete),
        _join('{"erase":{},"key":', key, ',"oldImage":', old, ts),
        pc.if_else(pa.array(ev.update), _join(upsert, ',"oldImage":', old, ts), _join(upsert, ts)),
    )
    return None, value, np.zeros(len(ev.index), np.bool_)


def cockroachdb(wl: Workload, ev: Events) -> Encoded:
    names = sorted(_names(wl))  # json.dumps(sort_keys=True)
    spaced = {"item": ", ", "colon": ": "}
    after = json_object(names, rows(wl, ev.key, ev.n, integral_doubles_as_ints=True).texts, **spaced)
    before = json_object(names, _previous(wl, ev, integral_doubles_as_ints=True).texts, **spaced)
    has_before = ~ev.insert & (ev.n > 0)
    value = _join(
        '{"after": ', _nullable(~ev.delete, after), ', "before": ', _nullable(has_before, before),
        ', "updated": "', _text(ev.commit_ns), '.0000000000"}',
    )  # fmt: skip
    return _join("[", _text(ev.key), "]"), value, np.zeros(len(ev.index), np.bool_)


ENCODERS: dict[str, Callable[[Workload, Events], Encoded]] = {
    "debezium": debezium,
    "aurora_dsql": aurora_dsql,
    "qlik_replicate": qlik_replicate,
    "ydb": ydb,
    "cockroachdb": cockroachdb,
}


# Landing: the messages of each position, then its redelivery (generate.raw_rows's order)


def raw_batch(fmt: str, wl: Workload, positions: range, ingested_at: dt.datetime) -> pa.RecordBatch:
    """The rows ``generate.raw_rows(fmt, wl, positions, ingested_at)`` yields, as one record batch."""
    position = np.arange(positions.start, positions.stop, dtype=np.int64)
    landed = landed_event_index(wl, position)
    partition = (landed % wl.keys + 1) % wl.kafka_partitions
    again = redelivers(wl, position)
    # One message per event, first each position's own event, then the redelivered ones.
    at = np.concatenate([position, position[again]])
    index = np.concatenate([landed, landed_event_index(wl, position[again] - wl.redelivery_lag)])
    keys, values, special = ENCODERS[fmt](wl, events(wl, index))
    # Rows from envelopes.py: the log's first messages (Qlik's table metadata), before the first
    # change's offset, and the messages of events the template left out (DSQL's chunked records).
    # A redelivery comes after all of its position's own messages (several for a chunked record).
    first = envelopes.preamble(fmt, wl) if positions.start == 0 else []
    extra = [(0, i - len(first), k, v) for i, (k, v) in enumerate(first)]
    own = np.ones(len(position), np.int64)
    for i in np.flatnonzero(special).tolist():
        messages = envelopes.ENVELOPES[fmt](wl, event(wl, int(index[i])))
        slot = i if i < len(position) else int(np.searchsorted(position, at[i]))
        base = int(position[slot]) * OFFSET_STRIDE + (0 if i < len(position) else int(own[slot]))
        if i < len(position):
            own[i] = len(messages)
        extra += [(int(partition[slot]), base + j, k, v) for j, (k, v) in enumerate(messages)]
    sub = np.concatenate([np.zeros(len(position), np.int64), own[again]])
    keep = pa.array(~special)
    columns_: list[Any] = [
        np.concatenate(
            [
                np.concatenate([partition, partition[again]])[~special],
                np.array([e[0] for e in extra], np.int64),
            ]
        ),
        np.concatenate([(at * OFFSET_STRIDE + sub)[~special], np.array([e[1] for e in extra], np.int64)]),
        pa.concat_arrays(
            [
                pc.filter(keys if keys is not None else pa.nulls(len(index), pa.string()), keep),
                pa.array([e[2] for e in extra], pa.string()),
            ]
        ),
        pa.concat_arrays([pc.filter(values, keep), pa.array([e[3] for e in extra], pa.string())]),
    ]
    order = pa.array(np.argsort(columns_[1], kind="stable"))
    n = len(columns_[1])
    at_time = np.full(n, np.datetime64(ingested_at.replace(tzinfo=None), "us"))
    return pa.RecordBatch.from_arrays(
        [
            pc.take(pa.array(columns_[0].astype(np.int32)), order),
            pc.take(pa.array(columns_[1]), order),
            pc.take(columns_[2], order),
            pc.take(columns_[3], order),
            pa.array(at_time, pa.timestamp("us")),
        ],
        schema=ARROW_SCHEMA,
    )
