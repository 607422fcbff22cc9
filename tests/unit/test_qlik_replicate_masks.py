"""Qlik Replicate mask rule and message builders (no Spark)."""

from __future__ import annotations

import json

import pytest
from dbt_spark_cdc.qlik_replicate import QlikColumn, data_message, decode_mask, encode_mask, metadata_message


def test_spec_example_0b_marks_ordinals_1_2_4() -> None:
    assert decode_mask("0B") == [1, 2, 4]
    assert encode_mask([1, 2, 4]) == "0B"


@pytest.mark.parametrize(
    ("mask", "ordinals"),
    [
        ("02", [2]),  # corpus message 3 changeMask (NAME)
        ("07", [1, 2, 3]),  # corpus message 3 columnMask
        ("05", [1, 3]),  # corpus message 4 columnMask: FIRST_NAME (2) not captured
        ("00", []),  # corpus message 4 changeMask: nothing changed
        ("008080", [8, 16]),  # corpus message 5: item_desc and load_date_time
        ("00FFFF", list(range(1, 17))),  # corpus message 5 columnMask: all 16 columns
        ("1", [1]),  # michelin README: a single hex digit
    ],
)
def test_corpus_masks(mask: str, ordinals: list[int]) -> None:
    assert decode_mask(mask) == ordinals


def test_missing_mask_is_none_and_bad_hex_raises() -> None:
    assert decode_mask(None) is None
    assert decode_mask("  ") is None
    with pytest.raises(ValueError):
        decode_mask("zz")


def test_wide_masks_round_trip_beyond_64_bits() -> None:
    ordinals = [1, 63, 64, 65, 66, 128, 129, 200]
    mask = encode_mask(ordinals)
    assert len(mask) == 50  # 200 bits -> 25 bytes
    assert mask[-1] == "1" and mask[:2] == "80"
    assert decode_mask(mask) == ordinals
    assert encode_mask([1], width=130) == "0" * 33 + "1"
    with pytest.raises(ValueError):
        encode_mask([0])


def test_builders_follow_the_message_shapes() -> None:
    md = json.loads(
        metadata_message("s", "t", [QlikColumn("id", "INT4", 1), QlikColumn("v")], table_version=3)
    )
    assert (md["magic"], md["type"]) == ("atMSG", "MD")
    assert md["message"]["lineage"]["tableVersion"] == 3
    assert md["message"]["tableStructure"]["tableColumns"]["v"]["ordinal"] == 2
    refresh = json.loads(data_message("REFRESH", {"id": 1}, change_sequence=9, envelope=False))
    assert refresh["headers"]["changeSequence"] == "" and "transactionEventCounter" not in refresh["headers"]
    update = json.loads(data_message("UPDATE", {"id": 1}, change_sequence=9, table=("s", "t")))
    assert update["message"]["headers"]["changeSequence"] == "9"
    assert (update["message"]["schema"], update["message"]["table"]) == ("s", "t")
