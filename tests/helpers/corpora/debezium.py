"""Debezium messages: the flink corpus of integration_tests/data/debezium_postgres, hand-made
changes of inventory.products, and the history the storage strategies are compared over (batches():
test_debezium_storage.py, test_debezium_partitions.py, test_lakehouse_merge.py and the reliability
tests)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.helpers.landing import read_jsonl_messages

CORPUS = Path(__file__).resolve().parents[3] / "integration_tests" / "data" / "debezium_postgres" / "flink"


def corpus(name: str) -> list[str]:
    return read_jsonl_messages(str(CORPUS / f"debezium-postgres-data-{name}.txt"))


def envelope(
    op: str,
    lsn: int,
    after: dict[str, Any] | None,
    before: dict[str, Any] | None = None,
    *,
    ts_ms: int | None = None,
) -> str:
    """A Debezium change of inventory.products at LSN `lsn`, committed at `ts_ms` (default: derived
    from the LSN) and emitted 100 ms later."""
    committed = 1596000000000 + lsn if ts_ms is None else ts_ms
    return json.dumps(
        {
            "before": before,
            "after": after,
            "source": {
                "version": "1.2.1.Final",
                "connector": "postgresql",
                "name": "fullfillment",
                "ts_ms": committed,
                "snapshot": "false",
                "db": "postgres",
                "schema": "inventory",
                "table": "products",
                "txId": 700,
                "lsn": lsn,
            },
            "op": op,
            "ts_ms": committed + 100,
        }
    )


def truncate(lsn: int) -> str:
    return json.dumps(
        {
            "source": {
                "version": "1.2.1.Final",
                "connector": "postgresql",
                "ts_ms": 1596000000000 + lsn,
                "schema": "inventory",
                "table": "products",
                "txId": 800,
                "lsn": lsn,
            },
            "op": "t",
            "ts_ms": 1596000000001 + lsn,
        }
    )


def product(pid: int, name: str, description: str | None, weight: float) -> dict[str, Any]:
    return {"id": pid, "name": name, "description": description, "weight": weight}


def batches() -> list[list[str]]:
    shuffled = corpus("schema-exclude") * 2
    random.Random(20261124).shuffle(shuffled)
    scooter = product(101, "scooter", "Small 2-wheel scooter", 3.14)
    kite = product(300, "kite", "red kite", 0.3)
    return [
        shuffled[:11],
        shuffled[11:22],
        [*shuffled[22:], envelope("d", 34300000, None, kite)],
        [
            # Older than 106's applied update: splits its snapshot version (SCD2), stale (SCD1).
            envelope("u", 34100000, product(106, "hammer", "17oz carpenter hammer", 1.0)),
            # Older than 300's delete: history gains the insert, the key stays deleted.
            envelope("c", 34200000, kite),
            # Unchanged TOAST column keeps its value.
            envelope("u", 34300000, product(104, "mallet", "__debezium_unavailable_value", 0.7)),
            # A primary-key update 101 -> 401.
            envelope("d", 34310000, None, scooter),
            envelope("c", 34310000, {**scooter, "id": 401}),
            # A redelivery of an applied change.
            corpus("schema-include")[10],
            # Older than 107's applied update, with its values: 107's update no longer opens a
            # version (SCD2: that stored version is removed, the new one absorbs it).
            envelope("u", 34132000, product(107, "rocks", "box of assorted rocks", 5.1)),
        ],
        [
            truncate(34400000),
            envelope("c", 34500000, product(200, "bike", "after truncate", 9.0)),
            envelope("c", 34350000, product(201, "sled", "before truncate", 4.0)),
        ],
        [
            envelope("u", 34600000, product(200, "bike", "blue bike", 9.5)),
            envelope("c", 34390000, product(202, "ski", "older than the truncate", 2.0)),
        ],
    ]


def plain_envelope(op: str, lsn: int, after: dict[str, Any]) -> str:
    """A Debezium change without the schema block (schemas.enable=false)."""
    source = {"version": "1.2.1.Final", "connector": "postgresql", "ts_ms": 1596012000000}
    source |= {"schema": "inventory", "table": "products", "txId": 900, "lsn": lsn}
    return json.dumps({"before": None, "after": after, "source": source, "op": op, "ts_ms": 1596012000001})
