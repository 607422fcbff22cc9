"""The SQL decoder of Kafka Connect decimals (spark_cdc._connect_decimal_text, used by
decode_debezium_value) gives exactly what the Python reference gives
(dbt_spark_cdc.decoders.decode_connect_decimal, behind the spark_cdc_decode_connect_decimal UDF),
on known wire values, edges (38 digits, sign extension, scales 0 and 38, both sides of every power
of two to 2^128), invalid input and a few hundred random values, all in one query."""

from __future__ import annotations

import base64
import random

import pytest
from dbt_spark_cdc.decoders import decode_connect_decimal

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration

LARGEST = 10**38 - 1


def encode(n: int, width: int | None = None) -> str:
    length = width if width is not None else (n.bit_length() + 8) // 8
    return base64.b64encode(n.to_bytes(length, byteorder="big", signed=True)).decode("ascii")


def cases() -> list[tuple[str | None, int | None]]:
    fixed: list[tuple[str | None, int | None]] = [
        ("AdTA", 2),
        ("CfY=", 2),
        ("AdTA", 0),
        ("CfY=", 5),
        ("AA==", 0),
        ("AA==", 3),
        ("AP8=", 0),
        ("/w==", 0),
        ("/w==", 2),
        (encode(LARGEST), 0),
        (encode(LARGEST), 2),
        (encode(-LARGEST), 38),
        (encode(5), 38),
        (encode(LARGEST + 1), 0),
        (encode(-LARGEST - 1), 2),
        (encode(1, width=48), 0),
        (encode(1, width=49), 0),
        (encode(-1, width=48), 3),
        ("A" * 10_000, 0),
        ("AdTA", -1),
        ("AdTA", 39),
        ("not base64!", 2),
        ("AdT", 2),
        ("Ad-A", 2),
        ("AdTA\n", 2),
        (" AdTA", 2),
        ("ÄdTA", 2),
        ("", 2),
        (None, 2),
        ("AdTA", None),
        ("====", 0),
        ("AdTA====", 0),
    ]
    # Around every power of two up to 2^127, both signs: where the magnitude's high and low 64 bits
    # meet, where inverting a negative's bytes and adding 1 carries across them, at 32 hex digits.
    for k in range(128):
        for n in (2**k - 1, 2**k, 2**k + 1):
            fixed += [(encode(n), k % 39), (encode(-n), 38 - k % 39)]
    rng = random.Random(20261123)
    for _ in range(300):
        digits = rng.randint(1, 39)
        n = rng.randint(0, 10**digits - 1) * rng.choice((1, -1))
        width = None if rng.random() < 0.7 else (n.bit_length() + 8) // 8 + rng.randint(0, 8)
        fixed.append((encode(n, width), rng.randint(0, 38)))
    return fixed


def literal(value: str | int | None, sql_type: str) -> str:
    if value is None:
        return f"cast(null as {sql_type})"
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def test_sql_decoder_equals_the_python_reference(project: DbtProject) -> None:
    rows = ", ".join(
        f"({i}, {literal(encoded, 'string')}, {literal(scale, 'int')})"
        for i, (encoded, scale) in enumerate(cases())
    )
    sql = (
        "select i, {{ spark_cdc._connect_decimal_text('encoded', 'scale') }} as decoded "
        f"from (values {rows}) as t(i, encoded, scale)"
    )
    # dbt renders the macro; Spark runs the SQL (values stay text, as the decoder returns them).
    compiled = project.dbt("compile", "--inline", sql, "--quiet").result.results[0].node.compiled_code
    got = {r["i"]: r["decoded"] for r in project.rows(compiled)}
    expected = {i: decode_connect_decimal(encoded, scale) for i, (encoded, scale) in enumerate(cases())}
    mismatches = {i: (cases()[i], got[i], expected[i]) for i in expected if got[i] != expected[i]}
    assert not mismatches
    assert sum(v is not None for v in expected.values()) > 250
