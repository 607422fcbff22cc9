"""Qlik Replicate (Kafka target, JSON) message helpers: mask encoding and message builders.

The staging model decodes masks in SQL (``spark_cdc._qlik_mask_ordinals``); this module is the
independent Python statement of the same rule, used to build test and demo messages and to check
the SQL against it. A mask is hex text of a little-endian bitmask over column ordinals: bit 0 (the
lowest bit of the *last* hex digit) is ordinal 1, so ``"0B"`` (binary 1011) marks ordinals 1, 2, 4.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPERATIONS = ("INSERT", "UPDATE", "DELETE", "REFRESH")


def decode_mask(mask: str | None) -> list[int] | None:
    """The 1-based ordinals whose bits ``mask`` sets, ascending; None for a missing mask.

    Raises ValueError for text that is not hexadecimal.
    """
    if mask is None or mask.strip() == "":
        return None
    value = int(mask.strip(), 16)
    return [bit + 1 for bit in range(value.bit_length()) if value >> bit & 1]


def encode_mask(ordinals: Iterable[int], width: int | None = None) -> str:
    """Upper-case hex mask setting the bits of ``ordinals`` (1-based), zero-padded to an even number
    of digits, or to ``width`` columns (rounded up to whole bytes) when given."""
    value = 0
    for ordinal in ordinals:
        if ordinal < 1:
            raise ValueError(f"ordinal must be >= 1, got {ordinal}")
        value |= 1 << (ordinal - 1)
    bits = max(value.bit_length(), width or 0, 1)
    digits = 2 * ((bits + 7) // 8)
    return f"{value:0{digits}X}"


@dataclass(frozen=True)
class QlikColumn:
    """A column of a Qlik metadata message (ordinal is its position in the list, from 1)."""

    name: str
    type: str = "STRING"
    primary_key_position: int = 0
    length: int = 0
    precision: int = 0
    scale: int = 0


def metadata_message(
    schema: str, table: str, columns: Sequence[QlikColumn], *, table_version: int = 1, envelope: bool = True
) -> str:
    """A metadata (MD) message announcing ``columns`` as version ``table_version`` of ``schema.table``."""
    table_columns = {
        c.name: {
            "ordinal": i,
            "type": c.type,
            "length": c.length,
            "precision": c.precision,
            "scale": c.scale,
            "primaryKeyPosition": c.primary_key_position,
            "nullable": c.primary_key_position == 0,
        }
        for i, c in enumerate(columns, start=1)
    }
    data_fields = [{"name": c.name, "type": [{"type": "null"}, {"type": "string"}]} for c in columns]
    message = {
        "schemaId": f"{table}-v{table_version}",
        "lineage": {
            "server": "replicate-test",
            "task": "test-task",
            "schema": schema,
            "table": table,
            "tableVersion": table_version,
            "timestamp": "2024-01-01T00:00:00.000",
        },
        "tableStructure": {"tableColumns": table_columns},
        "dataSchema": json.dumps({"type": "record", "name": "DataRecord", "fields": data_fields}),
    }
    return _wrap("MD", message, envelope)


def data_message(
    operation: str,
    data: Mapping[str, Any] | None,
    *,
    before: Mapping[str, Any] | None = None,
    change_sequence: str | int | None = None,
    event_counter: int | None = 1,
    change_mask: str | None = None,
    column_mask: str | None = None,
    transaction_id: str = "00000000000000000000000000000001",
    timestamp: str = "2024-01-01T00:00:01.000",
    table: tuple[str, str] | None = None,
    envelope: bool = True,
) -> str:
    """A data (DT) message; REFRESH rows get Replicate's blank change headers.

    ``table`` = (schema, table) adds the message-level table name the spec lists (real messages
    usually leave it to the topic).
    """
    refresh = operation == "REFRESH"
    headers: dict[str, Any] = {
        "operation": operation,
        "changeSequence": "" if refresh or change_sequence is None else str(change_sequence),
        "timestamp": "" if refresh else timestamp,
        "streamPosition": "" if refresh else "00000000.00bb2531.00000001.0000.02.0000:154.6963.16",
        "transactionId": "" if refresh else transaction_id,
        "changeMask": change_mask,
        "columnMask": column_mask,
    }
    if not refresh and event_counter is not None:
        headers["transactionEventCounter"] = event_counter
        headers["transactionLastEvent"] = True
    message: dict[str, Any] = {"data": data, "beforeData": before, "headers": headers}
    if table is not None:
        message["schema"], message["table"] = table
    return _wrap("DT", message, envelope)


def kafka_envelope(kind: str, message: dict[str, Any]) -> dict[str, Any]:
    """Replicate's Kafka message envelope (``magic`` ``atMSG``) around ``message`` of type ``kind``
    (``DT`` data, ``MD`` metadata), unserialized: callers choose the JSON spacing."""
    return {
        "magic": "atMSG",
        "type": kind,
        "headers": None,
        "messageSchemaId": None,
        "messageSchema": None,
        "message": message,
    }


def _wrap(kind: str, message: dict[str, Any], envelope: bool) -> str:
    return json.dumps(kafka_envelope(kind, message) if envelope else message)
