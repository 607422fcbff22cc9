"""CRC32C: standard check values, the pure-Python fallback against the C extension, text handling."""

import sys

import crc32c as crc32c_c
import pytest
from dbt_spark_cdc.checksums import crc32c_function, crc32c_of_text, crc32c_pure
from hypothesis import given
from hypothesis import strategies as st

# The CRC catalogue's check value for CRC-32C (CRC-32/ISCSI).
CHECK_INPUT = b"123456789"
CHECK_VALUE = 0xE3069283

# RFC 3720 (iSCSI), appendix B.4: 32-byte test vectors.
RFC3720_VECTORS = [
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


def test_pure_check_value():
    assert crc32c_pure(CHECK_INPUT) == CHECK_VALUE


def test_selected_function_check_value():
    assert crc32c_function()(CHECK_INPUT) == CHECK_VALUE


@pytest.mark.parametrize(("data", "expected"), RFC3720_VECTORS)
def test_pure_rfc3720_vectors(data, expected):
    assert crc32c_pure(data) == expected


def test_empty_input_is_zero():
    assert crc32c_pure(b"") == 0
    assert crc32c_function()(b"") == 0


def test_c_extension_preferred_when_installed():
    assert crc32c_function() is crc32c_c.crc32c


def test_pure_fallback_when_c_extension_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "crc32c", None)  # makes `import crc32c` raise ImportError
    assert crc32c_function() is crc32c_pure
    assert crc32c_of_text("123456789") == CHECK_VALUE


@given(st.binary(max_size=4096))
def test_pure_matches_c_extension(data):
    assert crc32c_pure(data) == crc32c_c.crc32c(data)


@given(st.binary(min_size=4, max_size=256), st.data())
def test_pure_detects_every_burst_error_up_to_32_bits(data, draw):
    # A degree-32 CRC detects every error burst of at most 32 bits: flip bits within 4 bytes.
    start = draw.draw(st.integers(min_value=0, max_value=len(data) - 4))
    mask = draw.draw(st.integers(min_value=1, max_value=0xFFFFFFFF)).to_bytes(4, "big")
    corrupted = bytearray(data)
    for i in range(4):
        corrupted[start + i] ^= mask[i]
    assert 0 <= crc32c_pure(data) <= 0xFFFFFFFF
    assert crc32c_pure(bytes(corrupted)) != crc32c_pure(data)


def test_of_text_none_is_none():
    assert crc32c_of_text(None) is None


def test_of_text_empty_is_zero():
    assert crc32c_of_text("") == 0


def test_of_text_uses_utf8():
    text = "Grüße, 東京 🚀"
    assert crc32c_of_text(text) == 0xE5D45379  # CRC32C of text.encode("utf-8")
    assert crc32c_of_text(text) == crc32c_pure(text.encode("utf-8"))
    assert crc32c_of_text(text) != crc32c_pure(text.encode("utf-16-le"))
