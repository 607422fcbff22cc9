"""Mutations of valid CDC messages for test_reliability_fuzz.py (hypothesis strategies, no Spark).

A case is the bytes a connector could land (not necessarily UTF-8) plus what was done to it. The
mutations are the hostile inputs issue 7 lists: truncated and invalid JSON, wrong JSON types for
every field, huge and deeply nested values, invalid UTF-8, missing and extra fields, unknown ops,
negative and overflowing numbers, the attacker's values of hostile_values (Spark variable syntax,
backticks, duplicate and case-colliding names, numbers beyond double range, a second JSON value),
and (format-specific, built by the test) CRC mismatches, fragment
indexes out of range, conflicting duplicate fragments and Qlik masks of the wrong length.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Path = tuple[str | int, ...]

#: Values that stress numeric fields: negative, beyond bigint and decimal(38,0), float edge cases.
EDGE_NUMBERS: tuple[Any, ...] = (-1, 0, -(2**63) - 1, 2**64, 10**40, -(10**40), 1e308, -0.0, 0.5)
#: One value of each JSON type (the wrong type for most fields).
ONE_OF_EACH_TYPE: tuple[Any, ...] = (None, True, -7, 2.5, "x", [], {}, [1, "a"], {"z": None})
MATCHED = "matched"
INVALID_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80")


@dataclass(frozen=True)
class Case:
    """One hostile message: its bytes, the Kafka key bytes, a label of the mutation, and, where the
    outcome follows from the mutation, what it must be: a reason code, or MATCHED (neither
    quarantined for want of metadata nor as an invalid envelope: read against its table's columns)."""

    value: bytes | None
    key: bytes | None
    mutation: str
    expect: str | None = None

    @property
    def is_json_object_text(self) -> bool:
        """True when the value is UTF-8 text of a JSON object (the only thing that may stage)."""
        if self.value is None:
            return False
        try:
            return isinstance(json.loads(self.value.decode("utf-8")), dict)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return False


def paths(doc: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path in a JSON document (objects by key, arrays by index), root excluded."""
    if isinstance(doc, dict):
        items: list[tuple[str | int, Any]] = list(doc.items())
    elif isinstance(doc, list):
        items = list(enumerate(doc))
    else:
        return
    for k, v in items:
        yield (*prefix, k)
        yield from paths(v, (*prefix, k))


def _parent(doc: Any, path: Path) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


def replaced(doc: Any, path: Path, value: Any) -> Any:
    out = copy.deepcopy(doc)
    _parent(out, path)[path[-1]] = value
    return out


def dropped(doc: Any, path: Path) -> Any:
    out = copy.deepcopy(doc)
    del _parent(out, path)[path[-1]]
    return out


def encode(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def systematic(text: str, key: str | None = None) -> list[Case]:
    """Every field of `text`: dropped, and replaced by one value of each JSON type and by each edge
    number (the wrong JSON type for every field, negative and overflowing sequences)."""
    doc = json.loads(text)
    k = None if key is None else key.encode()
    cases: list[Case] = []
    for path in paths(doc):
        label = "/".join(map(str, path))
        cases.append(Case(encode(dropped(doc, path)), k, f"drop {label}"))
        for value in (*ONE_OF_EACH_TYPE, *EDGE_NUMBERS):
            cases.append(Case(encode(replaced(doc, path, value)), k, f"set {label}={json.dumps(value)}"))
    return cases


_MARKER = "\u2063spark-cdc-fuzz-nested\u2063"


def spliced(doc: Any, path: Path, raw_json: str) -> bytes:
    """`doc` with the value at `path` replaced by `raw_json`, spliced as text (for what Python's
    encoder cannot write: very deep nesting, duplicate keys, numbers beyond double range)."""
    text = json.dumps(replaced(doc, path, _MARKER), ensure_ascii=False)
    return text.replace(json.dumps(_MARKER, ensure_ascii=False), raw_json, 1).encode("utf-8")


def with_nested(doc: Any, path: Path, depth: int) -> bytes:
    """`doc` with the value at `path` replaced by arrays and objects nested `depth` deep."""
    return spliced(doc, path, '{"n":[' * (depth // 2) + "1" + "]}" * (depth // 2))


#: Strings an attacker who controls a source row can put in a value or a column name: Spark's
#: variable syntax, quotes and backticks, escapes, U+0000, the empty string, Hive's default partition.
HOSTILE_STRINGS: tuple[str, ...] = (
    "${env:HOME}",
    "${spark.sql.shuffle.partitions}",
    "a`b",
    "x'y\\z\"w",
    "nul\u0000byte",
    "",
    "__HIVE_DEFAULT_PARTITION__",
)
#: Numbers Spark's JSON reader cannot hold exactly: beyond double range, beyond decimal(38).
HOSTILE_NUMBERS: tuple[str, ...] = ("1e400", "-1e400", "123456789012345678901234567890123456789012")


def _value(doc: Any, path: Path) -> Any:
    return _parent(doc, path)[path[-1]]


def hostile_values(text: str, key: str | None = None) -> list[Case]:
    """The attacker's classes, on every place of `text` they fit: hostile strings in each string
    value, hostile and case-colliding names added to each object, each object with its first name
    given twice, numbers beyond double range in each number, and a second JSON value after the
    message (the one-value check)."""
    doc = json.loads(text)
    k = None if key is None else key.encode()
    cases: list[Case] = []
    where = list(paths(doc))
    for path in where:
        value, label = _value(doc, path), "/".join(map(str, path))
        if isinstance(value, str):
            cases += [Case(encode(replaced(doc, path, v)), k, f"set {label}={v!r}") for v in HOSTILE_STRINGS]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            cases += [Case(spliced(doc, path, n), k, f"set {label}={n}") for n in HOSTILE_NUMBERS]
        elif isinstance(value, dict) and value:
            for name in ("${env:HOME}", "back`tick", "Dup", "dup"):
                cases.append(
                    Case(encode(replaced(doc, path, {**value, name: "v"})), k, f"name {name!r} in {label}")
                )
            first = json.dumps(next(iter(value)))
            twice = json.dumps(value, ensure_ascii=False)[:-1] + f", {first}: null}}"
            cases.append(Case(spliced(doc, path, twice), k, f"name {first} twice in {label}"))
    raw = text.encode("utf-8")
    cases += [Case(raw + tail, k, f"second JSON value {tail!r}") for tail in (b" 1", b"{}", b" []", b' "x"')]
    return cases


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def random_case(draw: Callable[..., Any], text: str, key: str | None, huge_bytes: int) -> Case:
    """One random mutation of a valid message (hypothesis chooses kind, place and value)."""
    raw = text.encode("utf-8")
    k = None if key is None else key.encode()
    doc = json.loads(text)
    where = list(paths(doc))
    kind = draw(
        st.sampled_from(
            [
                "truncate",
                "garbage",
                "invalid_utf8",
                "replace",
                "drop",
                "extra",
                "deep",
                "huge",
                "key",
                "twice",
            ]
        )
    )
    if kind == "truncate":
        cut = draw(st.integers(min_value=0, max_value=len(raw) - 1))
        return Case(raw[:cut], k, f"truncate at {cut}")
    if kind == "garbage":
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        junk = draw(st.text(min_size=1, max_size=6)).encode("utf-8", "surrogatepass")
        return Case(raw[:at] + junk + raw[at:], k, f"garbage at {at}")
    if kind == "invalid_utf8":
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        bad = draw(st.sampled_from(INVALID_UTF8))
        return Case(raw[:at] + bad + raw[at:], k, f"invalid utf-8 {bad!r} at {at}")
    if kind == "key":
        value = draw(st.one_of(st.none(), st.binary(max_size=20), json_values.map(encode)))
        return Case(raw, value, "message key replaced")
    if kind == "twice":
        return Case(raw + raw, k, "two messages in one value")
    if not where:
        return Case(raw, k, "unchanged")
    path = draw(st.sampled_from(where))
    label = "/".join(map(str, path))
    if kind == "replace":
        value = draw(json_values)
        return Case(encode(replaced(doc, path, value)), k, f"set {label}")
    if kind == "drop":
        return Case(encode(dropped(doc, path)), k, f"drop {label}")
    if kind == "extra":
        objects = [p for p in [(), *where] if isinstance(_parent(doc, (*p, "")), dict)]
        at = draw(st.sampled_from(objects))
        name = draw(st.text(min_size=1, max_size=10))
        out = copy.deepcopy(doc)
        _parent(out, (*at, "")).setdefault(name, draw(json_values))
        return Case(encode(out), k, f"extra field under {'/'.join(map(str, at)) or 'root'}")
    if kind == "deep":
        depth = draw(st.sampled_from([64, 600, 1100, 5000]))
        return Case(with_nested(doc, path, depth), k, f"nested {depth} deep at {label}")
    # huge: a string that makes the value exactly max_payload_bytes long (parsed) or one byte
    # longer (quarantined payload_too_large, unparsed)
    room = huge_bytes - len(encode(replaced(doc, path, "")))
    size = draw(st.sampled_from([room, room + 1]))
    value = encode(replaced(doc, path, "x" * size))
    return Case(value, k, f"{len(value)}-byte value ({size}-byte string at {label})")
