"""Spark 4's VARIANT text of JSON, as the Spark 3.5 path reads it (dbt_spark_cdc.json_variant).

Expected values are what Spark 4.3 returns for the same text (to_json of try_parse_json and of each
member of from_json(text, 'map<string, variant>')), recorded from a 4.3 session.
"""

import pandas as pd
import pytest
from dbt_spark_cdc.json_variant import array_elements, canonical_json, image_members
from dbt_spark_cdc.udfs import _json_canonical_series, _json_elements_series, _json_members_series


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"a":-0,"b":-0.0,"c":0e0,"d":1.10,"e":100.00}',
            {"a": "0", "b": "0", "c": "0.0", "d": "1.1", "e": "100"},
        ),
        (
            '{"a":1.0E5,"b":123456789012345678901234567890123456789,"c":1.5e-7,"d":5e-324,"e":1e22,'
            '"f":1.7976931348623157e308,"g":0.001,"h":12345678.9e0}',
            {
                "a": "100000.0",
                "b": "1.2345678901234568E38",
                "c": "1.5E-7",
                "d": "4.9E-324",
                "e": "1.0E22",
                "f": "1.7976931348623157E308",
                "g": "0.001",
                "h": "1.23456789E7",
            },
        ),
        ('{"a":12345678901234567890123456789012345678}', {"a": "12345678901234567890123456789012345678"}),
        ('{"a":1234567890123456789.0123456789012345678}', {"a": "1234567890123456789.0123456789012345678"}),
        ('{"a":[1,{"y":1,"x":2}]}', {"a": '[1,{"x":2,"y":1}]'}),
        ('{"o":{"n":-0.0,"m":1E+400,"l":"\\u0001\\t"}}', {"o": '{"l":"\\u0001\\t","m":"Infinity","n":0}'}),
        ('{"s":"\\/","t":"a\\"b\\u00e9"}', {"s": '"/"', "t": '"a\\"bé"'}),
        ('{"a": true, "b": false, "c": null}', {"a": "true", "b": "false", "c": "null"}),
        # from_json reads NaN / Infinity and keeps a repeated name's last value (then orders by name).
        ('{"a":NaN,"b":Infinity}', {"a": '"NaN"', "b": '"Infinity"'}),
        ('{"b":1,"a":2,"b":3}', {"a": "2", "b": "3"}),
        # Only the first JSON value counts.
        ('{"a":1}} x', {"a": "1"}),
        (' {"a":1}', {"a": "1"}),
        # Not an object, a repeated name inside a member, a lone surrogate, not JSON: null.
        ("[1,2]", None),
        ('{"a":{"b":1,"b":2}}', None),
        ('{"a":"\\ud800"}', None),
        ("{a:1}", None),
        (None, None),
    ],
)
def test_image_members(text, expected):
    assert image_members(text) == expected


def test_image_members_entry_order():
    # Spark 4's map order: document order with JSON nulls last.
    assert list(image_members('{"n1":null,"n2":[null],"n3":{"x":null}}') or {}) == ["n2", "n3", "n1"]
    assert list(image_members('{"t":true,"f":false}') or {}) == ["t", "f"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1,"a":2}', None),
        ('{"a":NaN}', None),
        ("5", "5"),
        ('"str"', '"str"'),
        # Keys in UTF-16 order: U+1F600 (a surrogate pair, D83D...) sorts before U+FFFF.
        ('{"o":{"a":2,"\\uffff":4,"\\ud83d\\ude00":5}}', '{"o":{"a":2,"\U0001f600":5,"\uffff":4}}'),
        ('{"c":"\\u001f"}', '{"c":"\\u001F"}'),
        ("", None),
    ],
)
def test_canonical_json(text, expected):
    assert canonical_json(text) == expected


def test_series_wrappers():
    members = _json_members_series(pd.Series(['{"a":1.50}', None], dtype="object"))
    assert members.tolist() == [{"a": "1.5"}, None]
    canonical = _json_canonical_series(pd.Series(['{"b":1,"a":2}', "x"], dtype="object"))
    assert canonical.tolist() == ['{"a":2,"b":1}', None]


def test_array_elements():
    assert array_elements('[1.50, "a", {"b":1,"a":[1e2]}, null]') == [
        "1.5",
        '"a"',
        '{"a":[100.0],"b":1}',
        "null",
    ]
    assert array_elements('{"a":1}') is None
    assert array_elements('[{"a":1,"a":2}]') is None
    assert _json_elements_series(pd.Series(["[1]", None], dtype="object")).tolist() == [["1"], None]


def _nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [600, 999, 1000])
def test_nesting_up_to_sparks_limit_is_read(levels: int) -> None:
    # Spark 4.1's try_parse_json and from_json(.., 'map<string, variant>') accept 1,000 levels.
    assert canonical_json(_nested(levels)) == _nested(levels)
    assert image_members(_nested(levels)) == {"a": _nested(levels - 1)}
    assert array_elements("[" + _nested(levels - 1) + "]") == [_nested(levels - 1)]


@pytest.mark.parametrize("levels", [1001, 1500, 100_000])
def test_nesting_past_sparks_limit_is_invalid(levels: int) -> None:
    # ... and refuse 1,001 (Jackson's limit); far deeper text ends as null, not a crash.
    import sys

    limit = sys.getrecursionlimit()
    assert canonical_json(_nested(levels)) is None
    assert image_members(_nested(levels)) is None
    assert array_elements("[" + _nested(levels - 1) + "]") is None
    assert sys.getrecursionlimit() == limit  # raised only while a value is read
