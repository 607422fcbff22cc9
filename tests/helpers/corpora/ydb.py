"""YDB messages: the changefeed corpus of integration_tests/data/ydb (records of the upstream tests,
one Kafka partition per scenario) with the upstream wildcards replaced by real values (test_ydb.py
and the reliability tests)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[3] / "integration_tests" / "data" / "ydb"

#: Upstream scenario -> (raw partition it is landed in, conformance model).
SCENARIOS = {
    "UpdatesLog": (0, "ydb_cf_updates_log"),
    "KeysOnlyLog": (1, "ydb_cf_keys_only_log"),
    "UuidExchange": (2, "ydb_cf_uuid_exchange"),
    "NewAndOldImagesLog": (3, "ydb_cf_new_and_old_images_log"),
    "VirtualTimestamps": (4, "ydb_cf_virtual_timestamps"),
    "NaN[Double]": (5, "ydb_cf_nan_double"),
    "NaN[Float]": (6, "ydb_cf_nan_float"),
    "AddColumn": (7, "ydb_cf_add_column"),
    "DropColumn": (8, "ydb_cf_drop_column"),
    "KeysOnlyLogDebezium": (9, "ydb_cf_keys_only_log_debezium"),
    "NewAndOldImagesLogDebezium": (10, "ydb_cf_new_and_old_images_log_debezium"),
    "OldImageLogDebezium": (11, "ydb_cf_old_image_log_debezium"),
    "NewImageLogDebezium": (12, "ydb_cf_new_image_log_debezium"),
    "LocalTableWriter/SupportedTypes": (13, "ydb_cf_supported_types"),
    "LocalTableWriter/ConsistentWrite": (14, "ydb_cf_consistent_write"),
}


def jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def synthetic_tx(partition: int, n: int) -> int:
    """A txId for message ``n`` of the scenario landed in ``partition``. Each scenario stands for a
    table of its own but all are replayed as /Root/Table, so their virtual timestamps must not
    coincide (one key at one timestamp with two different images is a sequence conflict)."""
    return 5_000 * (partition + 1) + n


def unwildcard(message: dict[str, Any], n: int, partition: int) -> dict[str, Any]:
    """The upstream tests match step/txId/ts_ms/ts with the wildcard "***": put real, increasing
    values in their place (step in ms, like the coordinator's)."""
    msg = copy.deepcopy(message)
    if msg.get("ts") == "***":
        msg["ts"] = [1_700_000_000_000 + n, synthetic_tx(partition, n)]
    source = msg.get("payload", {}).get("source")
    if source:
        for field, value in (
            ("step", 1_700_000_000_000 + n),
            ("txId", synthetic_tx(partition, n)),
            ("ts_ms", 1_700_000_000_000 + n),
        ):
            if source.get(field) == "***":
                source[field] = value
    return msg
