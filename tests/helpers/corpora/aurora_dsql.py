"""Aurora DSQL messages: the AWS corpus of integration_tests/data/aurora_dsql and records as the AWS
documentation shows them (test_aurora_dsql.py, the health report and the reliability tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.landing import read_jsonl_messages

DATA = Path(__file__).resolve().parents[3] / "integration_tests" / "data" / "aurora_dsql"
TS_NS = 1705318200000000000


def corpus(name: str) -> list[str]:
    return read_jsonl_messages(str(DATA / name))


def record(
    op: str,
    table: str,
    commit_ns: int,
    after: dict[str, Any] | None,
    before: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A DSQL record as the AWS documentation shows it."""
    return {
        "type": "full",
        "op": op,
        "before": before,
        "after": after,
        "source": {
            "version": "1.0",
            "ts_ms": commit_ns // 1_000_000,
            "ts_ns": commit_ns,
            "txId": f"tx{commit_ns}",
            "schema": "public",
            "table": table,
            "db": "postgres",
            "cluster": "kmabugltfmjdaj2siqr2qbxgju",
        },
        "ts_ms": commit_ns // 1_000_000 + 125,
        "ts_ns": commit_ns + 125_483_291,
        **extra,
    }


def big_order(commit_ns: int, quantity: int, note: str, op: str = "c") -> dict[str, Any]:
    after = {"order_id": 7, "item_id": 1, "quantity": quantity, "price": "10.50", "note": note}
    return record(op, "order_items", commit_ns, after)
