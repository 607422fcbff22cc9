"""Envelopes: one function per format, turning a benchmark ``Event`` into the messages that carry it,
in the format's own JSON exactly as its connector sends it (see ../shared/seeds and
integration_tests/data/<format>/ for the real messages these follow).

Every ordering value follows the event's source order (``ev.index``): a redelivered or swapped message
carries the same value it had the first time, so the staging models can put it back in place.

``BARE_PARSE`` is the baseline the staging models are measured against: per format, one ``from_json``
of the message value into the envelope fields the staging model reads, nothing more.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from dbt_spark_cdc.aurora_dsql import chunk_record, dumps
from dbt_spark_cdc.qlik_replicate import QlikColumn, encode_mask, kafka_envelope, metadata_message

from benchmarks.workload import Event, Workload, _mix, _uniform, columns

# Envelopes: one function per format, Event -> the (key, value) messages that carry it.

Message = tuple[str | None, str]
Envelope = Callable[[Workload, Event], list[Message]]

_COMPACT = (",", ":")


def _iso_ms(epoch_ms: int) -> str:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def debezium(wl: Workload, ev: Event) -> list[Message]:
    """Debezium PostgreSQL connector, JSON converter with ``schemas.enable=false``, REPLICA IDENTITY
    DEFAULT (a delete's before image holds the key; updates carry no before image)."""
    op = {"insert": "c", "update": "u", "delete": "d"}[ev.op]
    before = {"id": ev.key} if ev.op == "delete" else None
    value = {
        "before": before,
        "after": ev.after,
        "source": {
            "version": "2.7.3.Final",
            "connector": "postgresql",
            "name": "bench",
            "ts_ms": ev.commit_ms,
            "snapshot": "false",
            "db": "shop",
            "sequence": f'["{ev.lsn - 8}","{ev.lsn}"]',
            "schema": wl.source_schema,
            "table": wl.source_table,
            "txId": ev.tx_id,
            "lsn": ev.lsn,
            "xmin": None,
        },
        "transaction": None,
        "op": op,
        "ts_ms": ev.commit_ms + 35,
    }
    return [(json.dumps({"id": ev.key}), json.dumps(value, separators=_COMPACT))]


# Aurora DSQL


def _base32_id(*parts: int) -> str:
    """A 26-character lower-case base32 identifier (DSQL's txId and cluster id look like this)."""
    raw = _mix(*parts).to_bytes(8, "big") + _mix(*parts, 1).to_bytes(8, "big")
    return base64.b32encode(raw).decode("ascii").rstrip("=").lower()


# Memos are plain dicts, not functools caches: the generator ships this module to the executors by
# value, and cloudpickle pickles a functools cache by reference (an import the workers cannot do).
# Consecutive events share a transaction and a commit millisecond, so one entry per memo is enough.
_LAST_TX_ID: dict[tuple[int, int], str] = {}


def _dsql_tx_id(seed: int, tx_id: int) -> str:
    found = _LAST_TX_ID.get((seed, tx_id))
    if found is None:
        _LAST_TX_ID.clear()
        found = _LAST_TX_ID[(seed, tx_id)] = _base32_id(seed, 7, tx_id)
    return found


def _dsql_chunk_id(seed: int, index: int) -> str:
    """A stable chunk id per event (a redelivery carries the same one), UUID-shaped."""
    h = f"{_mix(seed, 5, index):016x}{_mix(seed, 6, index):016x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


#: Processing lag of the CDC system (top-level ts_ns - source.ts_ns), as in the spec's examples.
_DSQL_LAG_NS = 125_483_291


def aurora_dsql(wl: Workload, ev: Event) -> list[Message]:
    """Aurora DSQL CDC (preview) records, one per Kinesis record, as the spec describes them today:
    ``op`` is ``c`` for inserts *and* updates (DSQL does not emit ``u`` yet), ``d`` for deletes with
    ``before`` = the primary-key columns only; ``after`` is the full row; ``source.ts_ns`` (commit time,
    distinct per event) is the order. Values use DSQL's JSON types: bigint and double precision as JSON
    numbers, boolean as JSON true/false, text as strings (only numeric/decimal would be strings; the
    table has none). Kinesis partition keys are random, so no message key is landed.

    A ``wl.chunked_fraction`` of inserts/updates are sent as an oversized record would be: a ``chunked``
    main record whose ``after`` is split into ``wl.chunk_fragments`` ``fragment`` records (the main
    record first, then the fragments; each its own message). Deletes (key-only ``before``) never are.
    """
    record: dict[str, Any] = {
        "type": "full",
        "op": "d" if ev.op == "delete" else "c",
        "before": {"id": ev.key} if ev.op == "delete" else None,
        "after": ev.after,
        "source": {
            "version": "1.0",
            "ts_ms": ev.commit_ms,
            "ts_ns": ev.commit_ns,
            "txId": _dsql_tx_id(wl.seed, ev.tx_id),
            "schema": wl.source_schema,
            "table": wl.source_table,
            "db": "postgres",
            "cluster": _dsql_cluster(wl.seed),
        },
        "ts_ms": (ev.commit_ns + _DSQL_LAG_NS) // 1_000_000,
        "ts_ns": ev.commit_ns + _DSQL_LAG_NS,
    }
    if ev.after is not None and _uniform(wl.seed, 4, ev.index) < wl.chunked_fraction:
        main, fragments = chunk_record(
            record, {"after": _dsql_chunk_id(wl.seed, ev.index)}, fragments=wl.chunk_fragments
        )
        return [(None, text) for text in dumps([main, *fragments])]
    return [(None, json.dumps(record, separators=_COMPACT))]


_CLUSTERS: dict[int, str] = {}


def _dsql_cluster(seed: int) -> str:
    found = _CLUSTERS.get(seed)
    if found is None:
        found = _CLUSTERS[seed] = _base32_id(seed, 8)
    return found


# Qlik Replicate

#: Replicate's data types for the workload's Spark column types.
_QLIK_TYPES = {"bigint": "INT8", "double": "REAL8", "boolean": "BOOLEAN", "string": "STRING"}


_QLIK_MASKS: dict[int, tuple[list[str], str, str]] = {}


def _qlik_masks(payload_width: int) -> tuple[list[str], str, str]:
    """(column names by ordinal, all-columns mask, key-only mask)."""
    found = _QLIK_MASKS.get(payload_width)
    if found is None:
        names = [c.name for c in columns(Workload(payload_width=payload_width))]
        width = len(names)
        found = (names, encode_mask(range(1, width + 1), width), encode_mask([1], width))
        _QLIK_MASKS[payload_width] = found
    return found


_LAST_QLIK_TIMES: dict[int, tuple[str, str]] = {}


def _qlik_times(commit_ms: int) -> tuple[str, str]:
    """(changeSequence prefix: commit time as yyyyMMddHHmmss + hundredths, headers.timestamp)."""
    found = _LAST_QLIK_TIMES.get(commit_ms)
    if found is None:
        t = dt.datetime.fromtimestamp(commit_ms / 1000, dt.timezone.utc)
        found = (f"{t:%Y%m%d%H%M%S}{commit_ms % 1000 // 10:02d}", t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3])
        _LAST_QLIK_TIMES.clear()
        _LAST_QLIK_TIMES[commit_ms] = found
    return found


def qlik_replicate(wl: Workload, ev: Event) -> list[Message]:
    """Qlik Replicate Kafka target, JSON message format with the Replicate envelope (``atMSG``), data
    messages (``DT``) of a table's topic (they name no table: the project configures ``bench.items``).

    - ``changeSequence``: 35 digits, the commit time (yyyyMMddHHmmss + hundredths) then a 19-digit
      counter (``ev.index``), so it grows with source order; ``transactionEventCounter`` is the event's
      position in its transaction (``transactionLastEvent`` on the last).
    - INSERT: ``data`` = the row, ``beforeData`` null, changeMask = every column.
    - UPDATE: ``data`` = new row, ``beforeData`` = previous row, changeMask = the columns whose value
      changed (never the key).
    - DELETE: ``data`` = the deleted row (Replicate sends the deleted row's values in ``data``;
      ``beforeData`` is documented for UPDATE only), changeMask = the primary-key columns.
    - columnMask: every column (all captured). Values keep their JSON types (numbers, booleans).
    - Message key: the primary-key value (the endpoint's "Primary key columns" message key).

    Serialized compactly, as Replicate does (the builder ``dbt_spark_cdc.qlik_replicate.data_message``
    has the same fields, but fixed stream positions and spaced JSON).
    """
    names, all_mask, key_mask = _qlik_masks(wl.payload_width)
    if ev.op == "insert":
        operation, data, before, change_mask = "INSERT", ev.after, None, all_mask
    elif ev.op == "update":
        after, prev = ev.after, ev.before
        assert after is not None and prev is not None
        changed = [i for i, name in enumerate(names, start=1) if after[name] != prev[name]]
        operation, data, before, change_mask = "UPDATE", after, prev, encode_mask(changed, len(names))
    else:
        operation, data, before, change_mask = "DELETE", ev.before, None, key_mask
    prefix, timestamp = _qlik_times(ev.commit_ms)
    position = ev.index % 4
    headers = {
        "operation": operation,
        "changeSequence": f"{prefix}{ev.index:019d}",
        "timestamp": timestamp,
        "streamPosition": f"00000000.{ev.lsn:08x}.00000001.0000.02.0000:{ev.tx_id}.{position}.16",
        "transactionId": f"{ev.tx_id:032X}",
        "changeMask": change_mask,
        "columnMask": all_mask,
        "transactionEventCounter": position + 1,
        "transactionLastEvent": position == 3,
    }
    value = kafka_envelope("DT", {"data": data, "beforeData": before, "headers": headers})
    return [(str(ev.key), json.dumps(value, separators=_COMPACT))]


def _qlik_metadata(wl: Workload) -> str:
    """The table's metadata (MD) message: column types from the Spark types, ``id`` the primary key."""
    cols = [
        QlikColumn(
            c.name,
            _QLIK_TYPES[c.spark_type],
            primary_key_position=1 if c.name == "id" else 0,
            length=wl.payload_bytes if c.spark_type == "string" else 0,
        )
        for c in columns(wl)
    ]
    return metadata_message(wl.source_schema, wl.source_table, cols, table_version=1)


# YDB

#: YDB transaction ids are large (the docs' example: 562949953607163); the event's tx_id rides on it.
_YDB_TX_BASE = 562_949_953_421_312


def _without_key(row: dict[str, Any]) -> dict[str, Any]:
    image = dict(row)
    del image["id"]
    return image


def ydb(wl: Workload, ev: Event) -> list[Message]:
    """YDB changefeed, ``FORMAT = 'JSON', MODE = 'NEW_AND_OLD_IMAGES', VIRTUAL_TIMESTAMPS = TRUE``.

    NEW_AND_OLD_IMAGES is the mode that carries full rows both ways (the new image for every upsert,
    the old one for updates and erases), the usual choice for a consumer that maintains a copy of the
    table; virtual timestamps are what orders changes across partitions and redeliveries.
    ``{"update": {}, "newImage": {...}, "key": [id], "oldImage": {...}, "ts": [step, txId]}``: images
    leave out the key columns; an insert has no ``oldImage`` (the row did not exist), an erase has
    ``{"erase": {}}`` and only the ``oldImage``. ``step`` is the commit time in ms, ``txId`` grows with
    the transaction. The Kafka key is not set (YDB only keys Debezium-compatible records).
    """
    ts = [ev.commit_ms, _YDB_TX_BASE + ev.tx_id]
    value: dict[str, Any]
    if ev.op == "delete":
        assert ev.before is not None
        value = {"erase": {}, "key": [ev.key], "oldImage": _without_key(ev.before), "ts": ts}
    else:
        assert ev.after is not None
        value = {"update": {}, "newImage": _without_key(ev.after), "key": [ev.key]}
        if ev.before is not None and ev.op == "update":
            value["oldImage"] = _without_key(ev.before)
        value["ts"] = ts
    return [(None, json.dumps(value, separators=_COMPACT))]


# CockroachDB


_DOUBLES: dict[int, tuple[str, ...]] = {}


def _double_columns(payload_width: int) -> tuple[str, ...]:
    found = _DOUBLES.get(payload_width)
    if found is None:
        cols = columns(Workload(payload_width=payload_width))
        found = _DOUBLES[payload_width] = tuple(c.name for c in cols if c.spark_type == "double")
    return found


def _crdb_image(row: dict[str, Any], doubles: tuple[str, ...]) -> dict[str, Any]:
    """CockroachDB writes a FLOAT with an integral value without a fraction (``5``, not ``5.0``)."""
    out = row
    for name in doubles:
        v = row[name]
        if v.is_integer():
            if out is row:
                out = dict(row)
            out[name] = int(v)
    return out


def cockroachdb(wl: Workload, ev: Event) -> list[Message]:
    """CockroachDB changefeed into a Kafka sink: ``format=json, envelope=wrapped, updated, diff``.

    The value is ``{"after": {...}, "before": {...}, "updated": "<wall ns>.<logical:010d>"}``: ``after``
    null for a delete, ``before`` null for an insert (``diff`` sends the previous row, which tells
    inserts from updates), keys sorted and spaced as CockroachDB's JSON encoder writes them. A Kafka
    sink puts the key array (``[id]``) in the message key, not the value, and names the table only by
    the topic (the project configures ``items``). No resolved messages are generated.
    """
    doubles = _double_columns(wl.payload_width)
    value = {
        "after": None if ev.after is None else _crdb_image(ev.after, doubles),
        "before": None if ev.op == "insert" or ev.before is None else _crdb_image(ev.before, doubles),
        "updated": f"{ev.commit_ns}.0000000000",
    }
    return [(f"[{ev.key}]", json.dumps(value, sort_keys=True))]


ENVELOPES: dict[str, Envelope] = {
    "debezium": debezium,
    "aurora_dsql": aurora_dsql,
    "qlik_replicate": qlik_replicate,
    "ydb": ydb,
    "cockroachdb": cockroachdb,
}


def preamble(fmt: str, wl: Workload) -> list[Message]:
    """Messages a format sends before any change (Qlik's table metadata); landed with batch one."""
    if fmt == "qlik_replicate":
        return [(None, _qlik_metadata(wl))]
    return []


# The bare from_json baseline: (schema DDL of the message value, select expressions over `j`). Each
# reads the envelope fields the format's staging model reads from one message, with images as JSON
# text and scalars as strings, for the envelope shape the benchmark sends (the staging schemas' other
# branches — Debezium's schema/payload wrapper, Qlik's envelope-less message, YDB's
# Debezium-compatible payload, CockroachDB's bare/sinkless shapes — and the corrupt-record column are
# left out).

BARE_PARSE: dict[str, tuple[str, list[str]]] = {
    "debezium": (
        "before string, after string, "
        "source struct<ts_ms: string, ts_us: string, ts_ns: string, snapshot: string, db: string, "
        "sequence: string, `schema`: string, `table`: string, txId: string, lsn: string>, "
        "op string, ts_ms string, ts_us string, transaction struct<id: string>",
        [
            "j.before",
            "j.after",
            "j.op",
            "j.ts_ms",
            "j.ts_us",
            "j.transaction.id",
            "j.source.ts_ms",
            "j.source.ts_us",
            "j.source.ts_ns",
            "j.source.snapshot",
            "j.source.db",
            "j.source.sequence",
            "j.source.`schema`",
            "j.source.`table`",
            "j.source.txId",
            "j.source.lsn",
        ],
    ),
    "aurora_dsql": (
        "type string, op string, before string, after string, "
        "source struct<version: string, ts_ms: string, ts_ns: string, txId: string, `schema`: string, "
        "`table`: string, db: string, cluster: string>, "
        "chunked struct<before: struct<chunk_id: string, total_fragments: string, crc32c: string>, "
        "after: struct<chunk_id: string, total_fragments: string, crc32c: string>>, "
        "ts_ms string, ts_ns string, chunk_id string, index string, data string",
        [
            "j.type",
            "j.op",
            "j.before",
            "j.after",
            "j.source.version",
            "j.source.ts_ms",
            "j.source.ts_ns",
            "j.source.txId",
            "j.source.`schema`",
            "j.source.`table`",
            "j.source.db",
            "j.source.cluster",
            "j.chunked.before.chunk_id",
            "j.chunked.before.total_fragments",
            "j.chunked.before.crc32c",
            "j.chunked.after.chunk_id",
            "j.chunked.after.total_fragments",
            "j.chunked.after.crc32c",
            "j.ts_ms",
            "j.ts_ns",
            "j.chunk_id",
            "j.index",
            "j.data",
        ],
    ),
    "qlik_replicate": (
        "magic string, type string, messageSchemaId string, message struct<data: string, beforeData: string, "
        "headers: struct<operation: string, changeSequence: string, timestamp: string, "
        "streamPosition: string, transactionId: string, changeMask: string, columnMask: string, "
        "externalSchemaId: string, "
        "transactionEventCounter: string, transactionLastEvent: string>, `schema`: string, `table`: string, "
        "schemaId: string, lineage: struct<server: string, task: string, `schema`: string, `table`: string, "
        "tableVersion: string, timestamp: string>, tableStructure: struct<tableColumns: map<string, "
        "struct<ordinal: string, type: string, length: string, precision: string, scale: string, "
        "primaryKeyPosition: string, nullable: string>>>, dataSchema: string>",
        [
            "j.magic",
            "j.type",
            "j.messageSchemaId",
            "j.message.data",
            "j.message.beforeData",
            "j.message.headers.operation",
            "j.message.headers.changeSequence",
            "j.message.headers.timestamp",
            "j.message.headers.streamPosition",
            "j.message.headers.transactionId",
            "j.message.headers.changeMask",
            "j.message.headers.columnMask",
            "j.message.headers.externalSchemaId",
            "j.message.headers.transactionEventCounter",
            "j.message.headers.transactionLastEvent",
            "j.message.`schema`",
            "j.message.`table`",
            "j.message.schemaId",
            "j.message.lineage",
            "j.message.tableStructure.tableColumns",
            "j.message.dataSchema",
        ],
    ),
    "ydb": (
        "key array<string>, `update` string, `reset` string, erase string, newImage string, oldImage string, "
        "ts array<string>, resolved array<string>",
        [
            "j.key",
            "j.`update`",
            "j.`reset`",
            "j.erase",
            "j.newImage",
            "j.oldImage",
            "j.ts[0]",
            "j.ts[1]",
            "j.resolved",
        ],
    ),
    "cockroachdb": (
        "after string, before string, key string, updated string, resolved string, topic string, op string, "
        "ts_ns string, source string",
        ["j.after", "j.before", "j.key", "j.updated", "j.resolved", "j.topic", "j.op", "j.ts_ns", "j.source"],
    ),
}
