"""Spark 4's VARIANT reading of JSON text, for Spark 3.5, which has no VARIANT type.

On Spark 4 the package reads change images with ``from_json(text, 'map<string, variant>')`` and
``try_parse_json``; on Spark 3.5 the same SQL calls the pandas UDFs built from these functions
(macros choose once per run from the Spark version). Each function returns, as text, exactly what
Spark 4 writes for the VARIANT value (``to_json``):

* integers that fit a bigint as such (``-0`` is ``0``); other numbers without an exponent, of at most
  38 digits and 38 decimals, as a decimal without trailing zeros (``1.10`` is ``1.1``, ``100.00`` is
  ``100``); every other number as a double in Java's text (``1e5`` is ``100000.0``, ``1e400`` is
  ``"Infinity"``);
* strings with JSON's escapes as Spark's writer emits them; object keys sorted (by UTF-16 code units,
  as Java compares strings), no whitespace;
* duplicate keys and lone surrogates make the value invalid (null), as do NaN and Infinity, except
  where ``from_json`` accepts them (see :func:`image_members`), and nesting deeper than 1,000 objects
  and arrays (Jackson's limit, which Spark 4's parser applies). Text after the first JSON value is
  ignored, as Spark 4 does.

Known differences, both outside what CDC formats emit: Java 17 prints a few doubles with more digits
than the shortest text (JDK-4511638), and Spark 4's from_json also accepts single-quoted JSON.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Context, Decimal
from typing import Any

_INTEGER = re.compile(r"-?[0-9]+")
_WHITESPACE = " \t\n\r"
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_TO_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_EXACT = Context(prec=80)
#: The deepest nesting of objects and arrays Spark 4 parses (Jackson's StreamReadConstraints default:
#: 1,000 accepted, 1,001 refused, as `try_parse_json` on Spark 4.1 shows). Python's default recursion
#: limit (1,000 frames, two per level when writing) would refuse values from about 500 levels on.
_MAX_DEPTH = 1000
_RECURSION_LIMIT = 3 * _MAX_DEPTH + 500


@contextmanager
def _room_for_max_depth() -> Iterator[None]:
    """Python recursion deep enough to parse and write values nested _MAX_DEPTH deep (a deeper value
    still ends in RecursionError or _InvalidJsonError: null)."""
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(old)


class _InvalidJsonError(ValueError):
    """The text is not a value Spark 4's VARIANT reader accepts."""


class _Number(str):
    """A JSON number's text, rendered by the variant rules only when written."""


class _NonFinite(str):
    """NaN / Infinity / -Infinity (accepted by from_json, not by try_parse_json)."""


class _Object(list[tuple[str, Any]]):
    """A JSON object's members in document order, duplicates included."""


def _escape(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate (\ud800)
        raise _InvalidJsonError("lone surrogate") from e
    body = _TO_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), text)
    return f'"{body}"'


def _java_double(value: float) -> str:
    """Java's Double.toString for a finite double (shortest round-trip digits)."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    if abs(value) == 5e-324:  # Double.MIN_VALUE: Java keeps two digits
        return "-4.9E-324" if value < 0 else "4.9E-324"
    sign = "-" if value < 0 else ""
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    point = len(text) + int(exponent)  # position of the decimal point in `text`
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{text}"
        if point >= len(text):
            return f"{sign}{text}{'0' * (point - len(text))}.0"
        return f"{sign}{text[:point]}.{text[point:]}"
    return f"{sign}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _number(text: str) -> str:
    if _INTEGER.fullmatch(text) and _LONG_MIN <= int(text) <= _LONG_MAX:
        return str(int(text))
    if "e" not in text and "E" not in text:
        scale = len(text.split(".")[1]) if "." in text else 0
        precision = len(text.lstrip("-").replace(".", "").lstrip("0")) or 1
        if precision <= 38 and scale <= 38:
            plain = format(Decimal(text).normalize(_EXACT), "f")
            return "0" if plain in ("0", "-0") else plain
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    return _java_double(value)


def _write(value: Any, *, non_finite: bool, depth: int = 0) -> str:
    """``value`` as VARIANT writes it; ``depth``: the objects and arrays it is nested in."""
    if isinstance(value, list) and depth >= _MAX_DEPTH:
        raise _InvalidJsonError("nested too deep")
    if isinstance(value, _Object):
        members = dict(value)
        if len(members) != len(value):
            raise _InvalidJsonError("duplicate key")
        keys = sorted(members, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        inner = depth + 1
        return (
            "{"
            + ",".join(f"{_escape(k)}:{_write(members[k], non_finite=non_finite, depth=inner)}" for k in keys)
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(_write(v, non_finite=non_finite, depth=depth + 1) for v in value) + "]"
    if isinstance(value, _NonFinite):
        if not non_finite:
            raise _InvalidJsonError("NaN or Infinity")
        return f'"{value}"'
    if isinstance(value, _Number):
        return _number(value)
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    return "true" if value else "false"


def _first_value(text: str) -> Any:
    # A decoder per call: the UDFs ship this module by value, and a module-level decoder (its C
    # scanner) cannot be pickled.
    decoder = json.JSONDecoder(
        object_pairs_hook=_Object, parse_float=_Number, parse_int=_Number, parse_constant=_NonFinite
    )
    start = len(text) - len(text.lstrip(_WHITESPACE))
    value, _ = decoder.raw_decode(text, start)
    return value


def canonical_json(text: str | None) -> str | None:
    """``to_json(try_parse_json(text))`` of Spark 4: the JSON value as VARIANT writes it, or null."""
    if text is None:
        return None
    try:
        with _room_for_max_depth():
            return _write(_first_value(text), non_finite=False)
    except (ValueError, RecursionError):
        return None


def image_members(text: str | None) -> dict[str, str] | None:
    """``transform_values(from_json(text, 'map<string, variant>'), (k, v) -> to_json(v))`` of Spark 4.

    Null unless ``text`` is a JSON object. A top-level name given twice keeps its last value (a name
    twice inside a member makes the whole image null), and NaN / Infinity members are read as the
    strings Spark 4 writes for them, as from_json does.
    """
    if text is None:
        return None
    try:
        with _room_for_max_depth():
            value = _first_value(text)
            if not isinstance(value, _Object):
                return None
            members: dict[str, str] = {}
            for key, member in value:
                _escape(key)
                members[key] = _write(member, non_finite=True, depth=1)
        # The entry order Spark 4 gives: by name when a name repeats, else JSON nulls last.
        if len(members) != len(value):
            order = sorted(members, key=lambda k: k.encode("utf-16-be"))
        else:
            order = sorted(members, key=lambda k: members[k] == "null")
        return {k: members[k] for k in order}
    except (ValueError, RecursionError):
        return None


def array_elements(text: str | None) -> list[str] | None:
    """``transform(try_variant_get(try_parse_json(text), '$', 'array<variant>'), v -> to_json(v))``
    of Spark 4: each element of a JSON array as VARIANT writes it; null unless a valid JSON array."""
    if text is None:
        return None
    try:
        with _room_for_max_depth():
            value = _first_value(text)
            if not isinstance(value, list) or isinstance(value, _Object):
                return None
            return [_write(v, non_finite=False, depth=1) for v in value]
    except (ValueError, RecursionError):
        return None
