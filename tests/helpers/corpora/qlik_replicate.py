"""Qlik Replicate messages: the corpus of integration_tests/data/qlik_replicate, and its data messages
of unknown tables named as a per-table topic would, with their tables' metadata
(test_qlik_replicate.py and the reliability tests)."""

from __future__ import annotations

import json
from pathlib import Path

from dbt_spark_cdc.qlik_replicate import QlikColumn, metadata_message

from tests.helpers.landing import read_jsonl_messages

CORPUS = Path(__file__).resolve().parents[3] / "integration_tests" / "data" / "qlik_replicate"


def corpus() -> list[str]:
    return read_jsonl_messages(str(CORPUS / "messages.jsonl"))


def with_table(message: str, schema: str, table: str) -> str:
    """A real message with only the message-level schema/table names added (what a per-table topic
    tells a consumer); its data, headers and masks are untouched."""
    doc = json.loads(message)
    doc["message"]["schema"], doc["message"]["table"] = schema, table
    return json.dumps(doc)


def named_corpus() -> tuple[list[str], list[str]]:
    """The corpus with its three data messages of unknown tables given the names a per-table topic
    would (KAFKA.KIT, SALES.CUSTOMER, ISERIES.ITEM), and those tables' metadata messages, hand-made
    from their data (ordinals in the order the data object lists the columns; the corpus has none).
    Returns (the corpus's five messages, the three metadata messages)."""
    md, refresh, kit, customer, item = corpus()
    named = [
        md,
        refresh,
        with_table(kit, "KAFKA", "KIT"),
        with_table(customer, "SALES", "CUSTOMER"),
        with_table(item, "ISERIES", "ITEM"),
    ]
    hand_made_md = [
        metadata_message(
            "KAFKA", "KIT", [QlikColumn("ID", "NUMERIC", 1), QlikColumn("NAME"), QlikColumn("tableName")]
        ),
        metadata_message(
            "SALES",
            "CUSTOMER",
            [QlikColumn("CUSTOMER_ID", "NUMERIC", 1), QlikColumn("FIRST_NAME"), QlikColumn("LAST_NAME")],
        ),
        metadata_message(
            "ISERIES",
            "ITEM",
            [QlikColumn("item_no", "STRING", 1)]
            + [QlikColumn(name) for name in json.loads(item)["message"]["data"] if name != "item_no"],
        ),
    ]
    return named, hand_made_md
