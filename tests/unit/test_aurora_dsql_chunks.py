"""The Aurora DSQL chunked-record builder: splits like DSQL, checksums with a real CRC32C."""

from __future__ import annotations

import json

import pytest
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps, split_text
from dbt_spark_cdc.checksums import crc32c_pure


def test_split_text_keeps_every_character_in_order() -> None:
    text = "Ünïcødé 😀 text"
    for pieces in range(1, len(text) + 1):
        parts = split_text(text, pieces)
        assert "".join(parts) == text
        assert len(parts) == pieces and all(parts)


@pytest.mark.parametrize("pieces", [0, 4])
def test_split_text_refuses_impossible_splits(pieces: int) -> None:
    with pytest.raises(ValueError, match="cannot split"):
        split_text("abc", pieces)


def test_chunk_record_reassembles_to_the_image_and_its_declared_crc32c() -> None:
    after = {"order_id": 1001, "item_id": 42, "note": "Grüße 😀" * 5}
    before = {"order_id": 1001, "item_id": 42}
    record = {"type": "full", "op": "c", "before": before, "after": after, "source": {"ts_ns": 1}}
    main, fragments = chunk_record(record, {"after": "A", "before": "B"}, fragments=2)

    assert main["type"] == "chunked" and main["after"] is None and main["before"] is None
    assert main["source"] == {"ts_ns": 1} and record["after"] is after  # input untouched
    for image, chunk_id, value in (("after", "A", after), ("before", "B", before)):
        ref = main["chunked"][image]
        assert ref["chunk_id"] == chunk_id and ref["total_fragments"] == 2
        parts = sorted((f for f in fragments if f["chunk_id"] == chunk_id), key=lambda f: f["index"])
        assert [f["index"] for f in parts] == [0, 1]
        assert all(f["type"] == "fragment" for f in parts)
        text = "".join(f["data"] for f in parts)
        assert json.loads(text) == value
        assert ref["crc32c"] == str(crc32c_pure(text.encode("utf-8")))


def test_chunk_record_rejects_unknown_or_missing_images() -> None:
    with pytest.raises(ValueError, match="only before/after"):
        chunk_record({"after": {}}, {"source": "x"})
    with pytest.raises(ValueError, match="no before image"):
        chunk_record({"before": None}, {"before": "x"})


def test_dumps_keeps_non_ascii_text() -> None:
    assert dumps([{"a": "ü"}]) == ['{"a": "ü"}']
