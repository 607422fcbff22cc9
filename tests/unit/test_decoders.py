"""decode_connect_decimal: Kafka Connect Decimal (base64 big-endian two's complement) to exact text."""

import base64
from decimal import Context, Decimal

import pytest
from dbt_spark_cdc.decoders import MAX_DECIMAL_DIGITS, decode_connect_decimal
from hypothesis import given
from hypothesis import strategies as st

LARGEST = 10**MAX_DECIMAL_DIGITS - 1  # 38 nines


def encode(n: int, width: int | None = None) -> str:
    """Base64 of n's big-endian two's-complement bytes (minimal width unless given)."""
    length = width if width is not None else (n.bit_length() + 8) // 8
    return base64.b64encode(n.to_bytes(length, byteorder="big", signed=True)).decode("ascii")


def test_encode_helper_matches_known_wire_values():
    assert encode(120000) == "AdTA"
    assert encode(2550) == "CfY="
    assert encode(-1) == "/w=="


@pytest.mark.parametrize(
    ("encoded", "scale", "expected"),
    [
        ("AdTA", 2, "1200.00"),
        ("CfY=", 2, "25.50"),
        ("AdTA", 0, "120000"),
        ("CfY=", 0, "2550"),
        ("CfY=", 5, "0.02550"),
        ("AA==", 0, "0"),
        ("AA==", 3, "0.000"),
        ("AP8=", 0, "255"),  # 0x00FF: the leading zero byte keeps it positive
    ],
)
def test_known_values(encoded, scale, expected):
    assert decode_connect_decimal(encoded, scale) == expected


@pytest.mark.parametrize(
    ("raw", "scale", "expected"),
    [
        (b"\xff", 2, "-0.01"),
        (b"\xff", 0, "-1"),
        (b"\x80", 1, "-12.8"),
        (b"\xff\x00", 0, "-256"),
        (b"\xff\xff\xff\xff\xff", 3, "-0.001"),  # sign-extended, not minimal
    ],
)
def test_negative_twos_complement_bytes(raw, scale, expected):
    assert decode_connect_decimal(base64.b64encode(raw).decode("ascii"), scale) == expected


@pytest.mark.parametrize(
    ("n", "scale", "expected"),
    [
        (-150, 2, "-1.50"),
        (-12345, 0, "-12345"),
        (-5, 4, "-0.0005"),
        (-(2**63), 0, str(-(2**63))),
    ],
)
def test_negative_values_from_int_to_bytes(n, scale, expected):
    assert decode_connect_decimal(encode(n), scale) == expected


def test_widest_values_at_both_extreme_scales():
    assert decode_connect_decimal(encode(LARGEST), 0) == "9" * 38
    assert decode_connect_decimal(encode(LARGEST), 2) == "9" * 36 + ".99"
    assert decode_connect_decimal(encode(-LARGEST), 38) == "-0." + "9" * 38
    assert decode_connect_decimal(encode(5), 38) == "0." + "0" * 37 + "5"


@pytest.mark.parametrize("n", [10**38, -(10**38), 2**127 - 1, -(2**127)])
def test_more_than_38_digits_is_none(n):
    assert decode_connect_decimal(encode(n), 0) is None
    assert decode_connect_decimal(encode(n), 2) is None


@pytest.mark.parametrize("scale", [-1, 39, 1000])
def test_scale_outside_spark_range_is_none(scale):
    assert decode_connect_decimal("AdTA", scale) is None


@pytest.mark.parametrize(
    "encoded",
    [
        "not base64!",
        "AdT",  # bad padding
        "Ad-A",  # URL-safe alphabet is not accepted
        "AdTA\n",  # no whitespace inside the value
        " AdTA",
        "ÄdTA",  # non-ASCII
    ],
)
def test_invalid_base64_is_none(encoded):
    assert decode_connect_decimal(encoded, 2) is None


def test_empty_is_none():
    assert decode_connect_decimal("", 2) is None
    assert decode_connect_decimal("", 0) is None


def test_none_inputs_are_none():
    assert decode_connect_decimal(None, 2) is None
    assert decode_connect_decimal("AdTA", None) is None
    assert decode_connect_decimal(None, None) is None


def test_overly_long_input_is_none():
    # Non-minimal sign extension: the value is 1 either way, only the text length differs.
    at_limit = encode(1, width=48)
    over_limit = encode(1, width=49)
    assert len(at_limit) == 64
    assert len(over_limit) == 68
    assert decode_connect_decimal(at_limit, 0) == "1"
    assert decode_connect_decimal(over_limit, 0) is None
    assert decode_connect_decimal("A" * 10_000, 0) is None


@given(
    st.integers(min_value=-LARGEST, max_value=LARGEST),
    st.integers(min_value=0, max_value=10),
)
def test_roundtrip_is_exact(n, scale):
    result = decode_connect_decimal(encode(n), scale)
    assert result is not None
    # A wide context: the default 28-digit one would round the expected value itself.
    expected = Decimal(n).scaleb(-scale, context=Context(prec=MAX_DECIMAL_DIGITS + 10))
    assert Decimal(result) == expected
    assert "E" not in result.upper()
    assert Decimal(result).as_tuple().exponent == -scale  # exactly `scale` fractional digits


@given(st.integers(min_value=-LARGEST, max_value=LARGEST), st.integers(min_value=0, max_value=38))
def test_roundtrip_is_exact_at_any_spark_scale(n, scale):
    result = decode_connect_decimal(encode(n), scale)
    assert result is not None
    digits = result.lstrip("-").replace(".", "").lstrip("0") or "0"
    assert int(digits) == abs(n)
    assert result.startswith("-") == (n < 0)
    assert Decimal(result).as_tuple().exponent == -scale
