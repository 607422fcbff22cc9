"""Renderers: one per envelope format, turning a format-neutral event (tests/helpers/reference.py) into
the raw messages (value, and the Kafka key where the format has one) exactly as that connector sends
them, so the package's staging turns them back into the same changes.

Every renderer is a pure function of the event: a redelivery is byte for byte the message it repeats,
and the choices a connector leaves open (Qlik's two spellings of a masked-out column, DSQL's ``c`` or
``u`` for an update, chunking, YDB's mode) are drawn from a random generator seeded by the event.

Each renderer also says what a target built from its messages records for a change (``op_name``), how
to read the event's sequence back from the target's canonical ``_cdc_seq`` (``seq_from``), and the
commit time the target records (``commit_ms``). ``adapt`` gives the format's view of a history: the
images its connector can express (no partial images from DSQL or CockroachDB, whole old rows where
the connector always sends them).

The formats' specifications: /work/shared/seeds/*.txt and docs/formats/*.md; real messages:
integration_tests/data/<format>/.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from dbt_spark_cdc.aurora_dsql import chunk_record, dumps
from dbt_spark_cdc.qlik_replicate import QlikColumn, encode_mask, kafka_envelope, metadata_message

from tests.helpers.landing import RawMessage
from tests.helpers.reference import (
    COLUMNS,
    COMMIT_MS_AT_SEQ_0,
    KEY,
    SNAPSHOT_SEQ,
    Change,
    Event,
    Row,
    json_text,
    truncates_as_deletes,
)

#: What Debezium writes in place of an unchanged TOASTed value it did not read.
TOAST_PLACEHOLDER = "__debezium_unavailable_value"

_COMPACT = (",", ":")


def _commit_ms(seq: int) -> int:
    return COMMIT_MS_AT_SEQ_0 + seq


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("|".join(parts).encode()).digest()


class Renderer:
    """How one connector sends the changes of one source table."""

    fmt: str = ""
    #: The source table as staging names it (a target's ``source_table``).
    source_table: str = ""
    #: The connector can send an image without some columns.
    partial_images: bool = False
    #: The connector sends truncates.
    truncates: bool = False

    def adapt(self, events: Sequence[Event]) -> list[Event]:
        """The history as this connector can express it: a connector that sends no truncates sends
        the deletes of ``DELETE FROM`` instead (``truncates_as_deletes``)."""
        if self.truncates:
            return list(events)
        return truncates_as_deletes(events, random.Random(_digest(self.fmt, self.source_table, "truncates")))

    def conflict_eligible(self, event: Event) -> bool:
        """Whether a rival with the same key and sequence is a sequence conflict in this format."""
        return True

    def preamble(self) -> list[RawMessage]:
        """Messages the connector sends before any change (none, or Qlik's table metadata)."""
        return []

    def render(self, event: Event) -> list[RawMessage]:
        raise NotImplementedError

    def op_name(self, change: Change) -> str:
        """The canonical op a target records for ``change`` of a message this renderer wrote."""
        raise NotImplementedError

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        """The event's sequence, read back from a target's canonical ``_cdc_seq``."""
        raise NotImplementedError

    def commit_ms(self, seq: int) -> int | None:
        """The commit time (epoch ms) a target records for a change of sequence ``seq``."""
        return _commit_ms(seq)

    def draw(self, event: Event, choice: str) -> float:
        """A number in [0, 1) fixed by the format, the event and the choice it decides."""
        return random.Random(_digest(self.fmt, self.source_table, choice, event.ident())).random()


# --- Debezium --------------------------------------------------------------------------------------


def _debezium_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "price":
        return f"{Decimal(value):.2f}"  # decimal.handling.mode=string
    if column == "doc":
        return json_text(value)  # io.debezium.data.Json: the JSON text, as a string
    return value


_DEBEZIUM_OPS = {"insert": "c", "update": "u", "snapshot": "r", "delete": "d", "truncate": "t"}


@dataclass
class Debezium(Renderer):
    """Debezium PostgreSQL connector, JSON converter with ``schemas.enable=false``.

    ``source.lsn`` is the sequence; with ``with_sequence`` (Debezium 1.5 and later) also
    ``source.sequence`` = ``["<last committed LSN>", "<LSN>"]`` (a JSON string). Ops ``c``, ``u``, ``d``,
    ``r`` (snapshot), ``t`` (truncate). A column left out of an update's image is the unchanged-TOAST
    placeholder. A primary-key change is a delete of the old key and a create of the new key at the
    same LSN, as Debezium emits it. Kafka key ``{"id": k}``; a ``tombstone_rate`` share of deletes is
    followed by a tombstone (null value). The before image is the one the event carries (REPLICA
    IDENTITY FULL: the whole old row; DEFAULT: the key of a delete, nothing for an update)."""

    schema: str = "reference"
    table: str = "items"
    with_sequence: bool = True
    tombstone_rate: float = 0.3

    fmt = "debezium"
    partial_images = True
    truncates = True

    def __post_init__(self) -> None:
        self.source_table = f"{self.schema}.{self.table}"

    def _image(self, row: Row | None, present: frozenset[str] | None = None) -> dict[str, Any] | None:
        if row is None:
            return None
        return {
            c: TOAST_PLACEHOLDER if present is not None and c not in present else _debezium_value(c, v)
            for c, v in row.items()
        }

    def _value(self, event: Event, op: str, before: Row | None, after: dict[str, Any] | None) -> str:
        seq = event.seq
        source: dict[str, Any] = {
            "version": "2.7.3.Final",
            "connector": "postgresql",
            "name": "reference",
            "ts_ms": _commit_ms(seq),
            "snapshot": "true" if op == "r" else "false",
            "db": "shop",
        }
        if self.with_sequence:
            # During the snapshot there is no last committed LSN yet.
            last = None if op == "r" else str(seq - 8)
            source["sequence"] = json.dumps([last, str(seq)], separators=_COMPACT)
        source |= {"schema": self.schema, "table": self.table, "txId": event.tx_id, "lsn": seq, "xmin": None}
        value = {
            "before": before,
            "after": after,
            "source": source,
            "transaction": None,
            "op": op,
            "ts_ms": _commit_ms(seq) + 35,
        }
        return json.dumps(value, separators=_COMPACT, ensure_ascii=False)

    @staticmethod
    def _key(key: int) -> str:
        return json.dumps({KEY: key}, separators=_COMPACT)

    def render(self, event: Event) -> list[RawMessage]:
        if event.op == "truncate":
            return [RawMessage(self._value(event, "t", None, None))]
        out: list[RawMessage] = []
        old_key = event.key if event.op == "delete" else event.old_key
        if old_key is not None:
            out.append(
                RawMessage(self._value(event, "d", self._image(event.before), None), self._key(old_key))
            )
            if self.draw(event, "tombstone") < self.tombstone_rate:
                out.append(RawMessage(None, self._key(old_key)))
            if event.op == "delete":
                return out
        assert event.key is not None
        op = "c" if event.is_key_change else _DEBEZIUM_OPS[event.op]
        before = None if event.is_key_change else self._image(event.before)
        after = self._image(event.after, event.present)
        out.append(RawMessage(self._value(event, op, before, after), self._key(event.key)))
        return out

    def op_name(self, change: Change) -> str:
        if change.effect == "delete":
            return "delete"
        return "insert" if change.event.is_key_change else change.event.op

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        return int(s2)


# --- Aurora DSQL -----------------------------------------------------------------------------------

#: Processing lag of the CDC system (top-level ts_ns - source.ts_ns), as in the spec's examples.
_DSQL_LAG_NS = 125_483_291


def _dsql_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "price":
        return f"{Decimal(value):.2f}"  # numeric as a JSON string
    if column == "doc":
        return json_text(value)  # json: a JSON string holding the raw JSON text
    return value


def _base32_id(*parts: str) -> str:
    """A 26-character lower-case base32 identifier (DSQL's txId and cluster id look like this)."""
    return base64.b32encode(_digest(*parts)[:16]).decode("ascii").rstrip("=").lower()


@dataclass
class AuroraDsql(Renderer):
    """Amazon Aurora DSQL CDC records (the Kinesis ``Data`` text), ``type: full``: ``op`` ``c`` for
    inserts and updates (a ``u_rate`` share of updates as the announced ``u``), ``d`` for deletes with
    ``before`` = the key only; ``after`` the whole row (DSQL sends no partial images and no before image
    of an update); ``source.ts_ns`` (commit time) the sequence; numeric as strings, json as a string
    holding the JSON text. A ``chunk_rate`` share of records with an after image are sent as an
    oversized record is: a ``chunked`` main record and its ``fragment`` records. A primary-key change is
    a delete of the old key and an insert of the new one, same ``ts_ns``. No message key."""

    schema: str = "reference"
    table: str = "dsql_items"
    u_rate: float = 0.25
    chunk_rate: float = 0.12

    fmt = "aurora_dsql"

    def __post_init__(self) -> None:
        self.source_table = f"{self.schema}.{self.table}"

    def adapt(self, events: Sequence[Event]) -> list[Event]:
        out = []
        for e in super().adapt(events):
            if e.op == "delete":
                out.append(replace(e, before={KEY: e.key}))
            elif e.is_key_change:
                out.append(replace(e, before={KEY: e.old_key}, present=None))
            elif e.op in ("insert", "update", "snapshot"):
                out.append(replace(e, present=None, before=None))
            else:
                out.append(e)
        return out

    def _record(self, event: Event, op: str, before: Row | None, after: Row | None) -> dict[str, Any]:
        ts_ns = _commit_ms(event.seq) * 1_000_000

        def image(row: Row | None) -> dict[str, Any] | None:
            return None if row is None else {c: _dsql_value(c, v) for c, v in row.items()}

        return {
            "type": "full",
            "op": op,
            "before": image(before),
            "after": image(after),
            "source": {
                "version": "1.0",
                "ts_ms": ts_ns // 1_000_000,
                "ts_ns": ts_ns,
                "txId": _base32_id("tx", str(event.tx_id)),
                "schema": self.schema,
                "table": self.table,
                "db": "postgres",
                "cluster": _base32_id("cluster", self.table),
            },
            "ts_ms": (ts_ns + _DSQL_LAG_NS) // 1_000_000,
            "ts_ns": ts_ns + _DSQL_LAG_NS,
        }

    def _messages(self, event: Event, record: dict[str, Any]) -> list[RawMessage]:
        if record["after"] is not None and self.draw(event, "chunked") < self.chunk_rate:
            h = _digest("chunk", self.source_table, event.ident()).hex()
            chunk_id = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
            pieces = 2 + int(self.draw(event, "fragments") * 3)
            main, fragments = chunk_record(record, {"after": chunk_id}, fragments=pieces)
            return [RawMessage(text) for text in dumps([main, *fragments])]
        return [RawMessage(json.dumps(record, separators=_COMPACT, ensure_ascii=False))]

    def _uses_u(self, event: Event) -> bool:
        return event.op == "update" and not event.is_key_change and self.draw(event, "u") < self.u_rate

    def render(self, event: Event) -> list[RawMessage]:
        assert event.key is not None, "DSQL has no truncates"
        if event.op == "delete":
            return self._messages(event, self._record(event, "d", {KEY: event.key}, None))
        out: list[RawMessage] = []
        if event.old_key is not None:
            out += self._messages(event, self._record(event, "d", {KEY: event.old_key}, None))
        op = "u" if self._uses_u(event) else "c"
        return out + self._messages(event, self._record(event, op, None, event.after))

    def op_name(self, change: Change) -> str:
        if change.effect == "delete":
            return "delete"
        return "update" if self._uses_u(change.event) else "upsert"

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        return int(s1) // 1_000_000 - COMMIT_MS_AT_SEQ_0


# --- Qlik Replicate --------------------------------------------------------------------------------

#: The table's columns as Replicate's metadata describes them, in ordinal order (LOBs: note, doc).
QLIK_COLUMNS = (
    QlikColumn("id", "INT4", primary_key_position=1),
    QlikColumn("name", "STRING", length=100),
    QlikColumn("qty", "INT8"),
    QlikColumn("price", "NUMERIC", precision=12, scale=2),
    QlikColumn("active", "BOOLEAN"),
    QlikColumn("note", "NCLOB"),
    QlikColumn("doc", "NCLOB"),
)
_QLIK_ORDINAL = {c.name: i for i, c in enumerate(QLIK_COLUMNS, start=1)}
_QLIK_LOBS = {c.name for c in QLIK_COLUMNS if c.type.endswith("LOB")}
assert list(_QLIK_ORDINAL) == list(COLUMNS)


def _qlik_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column in ("qty", "price"):
        return f"{Decimal(value):.2f}" if column == "price" else str(value)  # INT8, NUMERIC as text
    if column == "doc":
        return json_text(value)
    return value


@dataclass
class QlikReplicate(Renderer):
    """Qlik Replicate Kafka target, JSON with the Replicate envelope (``atMSG``): the table's metadata
    message first, then data messages (they name no table: the project configures ``source_table``).

    ``headers.changeSequence`` (35 digits: the commit time, yyyyMMddHHmmss + hundredths, then the
    sequence in 19 digits) and ``transactionEventCounter`` order the changes. INSERT: ``data`` the row.
    UPDATE: ``data`` the new row and ``beforeData`` the old one; a partial image's ``columnMask`` leaves
    out the columns not captured, which ``data`` either omits or carries as null (both happen).
    ``changeMask`` marks the changed non-LOB columns. DELETE: the deleted row (whole, or only the key)
    in ``beforeData`` or in ``data`` (Replicate versions differ). REFRESH (full load, the snapshot):
    ``data`` with blank change headers, so no sequence nor commit time (staging orders them before
    every change, by landing order). A primary-key change is ONE UPDATE whose ``beforeData`` carries
    the old key and whose ``data`` the new one. Message key: the primary-key value."""

    schema: str = "reference"
    table: str = "qlik_items"

    fmt = "qlik_replicate"
    partial_images = True

    def __post_init__(self) -> None:
        self.source_table = f"{self.schema}.{self.table}"

    def adapt(self, events: Sequence[Event]) -> list[Event]:
        # A primary-key change's UPDATE carries the whole old row in beforeData.
        return [replace(e, before=e.old) if e.is_key_change else e for e in super().adapt(events)]

    def conflict_eligible(self, event: Event) -> bool:
        # A REFRESH row's sequence is its landing position: a rival is just a later REFRESH row.
        return event.op != "snapshot"

    def preamble(self) -> list[RawMessage]:
        return [RawMessage(metadata_message(self.schema, self.table, QLIK_COLUMNS))]

    @staticmethod
    def _mask(columns: Sequence[str]) -> str:
        return encode_mask([_QLIK_ORDINAL[c] for c in columns], len(QLIK_COLUMNS))

    def _headers(
        self, event: Event, operation: str, change_mask: str | None, column_mask: str | None
    ) -> dict[str, Any]:
        if operation == "REFRESH":
            return {
                "operation": "REFRESH",
                "changeSequence": "",
                "timestamp": "",
                "streamPosition": "",
                "transactionId": "",
                "changeMask": None,
                "columnMask": None,
                "externalSchemaId": None,
            }
        t = dt.datetime.fromtimestamp(_commit_ms(event.seq) / 1000, dt.timezone.utc)
        return {
            "operation": operation,
            "changeSequence": f"{t:%Y%m%d%H%M%S}{t.microsecond // 10_000:02d}{event.seq:019d}",
            "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3],
            "streamPosition": f"00000000.{event.seq:08x}.00000001.0000.02.0000:{event.tx_id}.{event.seq}.16",
            "transactionId": f"{event.tx_id:032X}",
            "changeMask": change_mask,
            "columnMask": column_mask,
            "externalSchemaId": None,
            "transactionEventCounter": 1,
            "transactionLastEvent": True,
        }

    def _message(
        self, event: Event, operation: str, data: Any, before: Any, masks: tuple[str | None, str | None]
    ) -> RawMessage:
        headers = self._headers(event, operation, *masks)
        value = kafka_envelope("DT", {"data": data, "beforeData": before, "headers": headers})
        return RawMessage(json.dumps(value, separators=_COMPACT, ensure_ascii=False), str(event.key))

    def _image(self, row: Row | None, present: frozenset[str] | None, omit: bool) -> dict[str, Any] | None:
        if row is None:
            return None
        out: dict[str, Any] = {}
        for c, v in row.items():
            if present is None or c in present:
                out[c] = _qlik_value(c, v)
            elif not omit:
                out[c] = None  # carried, but the columnMask says it was not captured
        return out

    def render(self, event: Event) -> list[RawMessage]:
        assert event.key is not None, "Replicate sends no truncates here"
        all_columns = list(COLUMNS)
        if event.op == "snapshot":
            return [self._message(event, "REFRESH", self._image(event.after, None, True), None, (None, None))]
        if event.op == "delete":
            image = self._image(event.before, None, True)
            assert image is not None
            in_before = self.draw(event, "delete in beforeData") < 0.5
            masks = (self._mask([KEY]), self._mask(list(image)))
            data, before = (None, image) if in_before else (image, None)
            return [self._message(event, "DELETE", data, before, masks)]
        assert event.after is not None
        present = event.present if event.is_partial else None
        omit = self.draw(event, "omit masked-out columns") < 0.5
        data = self._image(event.after, present, omit)
        carried = all_columns if present is None else [c for c in all_columns if c in present]
        if event.op == "insert":
            masks = (self._mask([c for c in all_columns if c not in _QLIK_LOBS]), self._mask(carried))
            return [self._message(event, "INSERT", data, None, masks)]
        old = event.old
        changed = [
            c for c in carried if c not in _QLIK_LOBS and (old is None or old.get(c) != event.after.get(c))
        ]
        before = self._image(old, present, omit)
        return [self._message(event, "UPDATE", data, before, (self._mask(changed), self._mask(carried)))]

    def op_name(self, change: Change) -> str:
        return change.op

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        # REFRESH rows: (0, 0, landing order).
        return SNAPSHOT_SEQ if int(s1) == 0 else int(s1) % 10**19

    def commit_ms(self, seq: int) -> int | None:
        return None if seq == SNAPSHOT_SEQ else _commit_ms(seq)


# --- YDB -------------------------------------------------------------------------------------------

#: YDB transaction ids are large (the docs' example: 562949953607163); the event's tx id rides on it.
_YDB_TX_BASE = 562_949_953_421_312


def _ydb_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "price":
        return f"{Decimal(value):.2f}"  # Decimal(12,2) as text
    return value  # Json columns: the JSON value itself


def _without_key(row: Row) -> dict[str, Any]:
    return {c: _ydb_value(c, v) for c, v in row.items() if c != KEY}


@dataclass
class Ydb(Renderer):
    """YDB changefeed, ``FORMAT = 'JSON'``, ``VIRTUAL_TIMESTAMPS = TRUE`` (``ts: [step, txId]``, step =
    the commit time in ms): full images as ``MODE = 'NEW_AND_OLD_IMAGES'`` writes them (``"update": {}``,
    ``newImage``, and ``oldImage`` when the row existed; a ``updates_rate`` share in ``UPDATES`` mode,
    every column written), partial images as ``UPDATES`` mode (``update`` holds the written columns
    only). ``erase`` for deletes, with the ``oldImage`` when the event carries the whole old row. Images
    leave out the key columns (``key`` is the positional key array). ``doc`` is a ``Json`` column: its
    value is embedded in the image. A primary-key change is an erase of the old key and an upsert of the
    new one, same ``ts``. YDB records name no table: one raw relation holds this table's changefeed."""

    table: str = "/Root/reference/items"
    updates_rate: float = 0.2

    fmt = "ydb"
    partial_images = True

    def __post_init__(self) -> None:
        self.source_table = self.table

    def _ts(self, event: Event) -> list[int]:
        return [_commit_ms(event.seq), _YDB_TX_BASE + event.tx_id]

    def _with_old_image(self, event: Event) -> bool:
        """Rendered as NEW_AND_OLD_IMAGES with the old image: a full update of an existing row."""
        return (
            event.op == "update"
            and not event.is_key_change
            and not event.is_partial
            and event.old is not None
            and self.draw(event, "UPDATES mode") >= self.updates_rate
        )

    def _dumps(self, value: dict[str, Any]) -> RawMessage:
        return RawMessage(json.dumps(value, separators=_COMPACT, ensure_ascii=False))

    def _erase(self, event: Event, key: int) -> RawMessage:
        value: dict[str, Any] = {"erase": {}, "key": [key]}
        before = event.before or {}
        if any(c != KEY for c in before):
            value["oldImage"] = _without_key(before)
        value["ts"] = self._ts(event)
        return self._dumps(value)

    def render(self, event: Event) -> list[RawMessage]:
        assert event.key is not None, "no truncates in a changefeed"
        if event.op == "delete":
            return [self._erase(event, event.key)]
        out: list[RawMessage] = []
        if event.old_key is not None:
            out.append(self._erase(event, event.old_key))
        assert event.after is not None
        value: dict[str, Any]
        if event.is_partial or (
            not self._with_old_image(event) and self.draw(event, "UPDATES mode") < self.updates_rate
        ):
            value = {"update": _without_key(event.image()), "key": [event.key]}
        else:
            value = {"update": {}, "newImage": _without_key(event.after), "key": [event.key]}
            if self._with_old_image(event):
                assert event.old is not None
                value["oldImage"] = _without_key(event.old)
        value["ts"] = self._ts(event)
        return [*out, self._dumps(value)]

    def op_name(self, change: Change) -> str:
        if change.effect == "delete":
            return "delete"
        # Without an old image YDB does not tell an insert from an update.
        return "update" if self._with_old_image(change.event) else "upsert"

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        return int(s1) - COMMIT_MS_AT_SEQ_0


# --- CockroachDB -----------------------------------------------------------------------------------


def _crdb_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "price":
        return float(Decimal(value))  # DECIMAL as a JSON number (two decimals: its repr is exact)
    return value  # JSONB: the JSON value itself


@dataclass
class CockroachDb(Renderer):
    """CockroachDB changefeed into a Kafka sink: ``format=json, envelope=wrapped, updated, diff``.

    ``{"after": {...}, "before": {...}, "updated": "<wall ns>.<logical, 10 digits>"}``: ``after`` null
    for a delete, ``before`` the whole old row (``diff``), null for an insert. Kafka key ``[id]``; the
    table only in the topic (the project configures ``source_table``). Keys sorted and spaced, non-ASCII
    escaped, as CockroachDB's encoder writes them. ``doc`` is JSONB: its value embedded in the image.
    No partial images. A primary-key change is a delete of the old key and an insert of the new one at
    the same HLC."""

    table: str = "reference_items"

    fmt = "cockroachdb"

    def __post_init__(self) -> None:
        self.source_table = self.table

    def adapt(self, events: Sequence[Event]) -> list[Event]:
        out = []
        for e in super().adapt(events):
            if e.op == "delete" or e.is_key_change:
                out.append(replace(e, before=e.old, present=None))
            elif e.op in ("insert", "update", "snapshot"):
                out.append(replace(e, present=None, before=e.old if e.op == "update" else None))
            else:
                out.append(e)
        return out

    def _updated(self, event: Event) -> str:
        return f"{_commit_ms(event.seq) * 1_000_000}.{event.seq % 7:010d}"

    def _message(self, event: Event, key: int, after: Row | None, before: Row | None) -> RawMessage:
        def image(row: Row | None) -> dict[str, Any] | None:
            return None if row is None else {c: _crdb_value(c, v) for c, v in row.items()}

        value = {"after": image(after), "before": image(before), "updated": self._updated(event)}
        return RawMessage(json.dumps(value, sort_keys=True), json.dumps([key]))

    def render(self, event: Event) -> list[RawMessage]:
        assert event.key is not None, "no truncates in a changefeed"
        if event.op == "delete":
            return [self._message(event, event.key, None, event.before)]
        out: list[RawMessage] = []
        if event.old_key is not None:
            out.append(self._message(event, event.old_key, None, event.before))
        before = None if event.is_key_change else event.before
        return [*out, self._message(event, event.key, event.after, before)]

    def op_name(self, change: Change) -> str:
        if change.effect == "delete":
            return "delete"
        e = change.event
        return "update" if e.before is not None and not e.is_key_change else "insert"

    def seq_from(self, s1: Any, s2: Any, s3: Any) -> int:
        return int(s1) // 1_000_000 - COMMIT_MS_AT_SEQ_0
