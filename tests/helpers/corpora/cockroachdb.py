"""CockroachDB messages: the changefeed corpora of integration_tests/data/cockroachdb (records of the
upstream changefeed tests) and a record as a Kafka sink lands it (test_cockroachdb.py and the
reliability tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.landing import RawMessage

DATA = Path(__file__).resolve().parents[3] / "integration_tests" / "data" / "cockroachdb"


def records(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def message(record: dict[str, Any], **extra: Any) -> RawMessage:
    """A corpus record as a Kafka sink lands it: the value text verbatim, the key array as JSON."""
    value = record["value_raw"]
    if extra:
        value = json.dumps({**json.loads(value), **extra})
    key = record.get("key")
    return RawMessage(value, None if key is None else json.dumps(key))


def corpus(source_test: str, envelope_note: str | None = None) -> list[dict[str, Any]]:
    return [
        r
        for r in records("changefeed_tests.jsonl")
        if r["source_test"] == source_test and envelope_note in (None, r["envelope_note"])
    ]
