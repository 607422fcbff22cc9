"""CRC32C (Castagnoli), as Aurora DSQL uses to check reassembled chunked records.

The ``crc32c`` package (a C extension) is used when importable. Spark executors may run a Python
environment without it (see ``udfs.py``: the UDFs travel to executors by value), so a pure-Python
table implementation stands in; both give identical results.
"""

from __future__ import annotations

from collections.abc import Callable

_POLY = 0x82F63B78


def _make_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c_pure(data: bytes) -> int:
    """CRC32C of ``data`` in pure Python (the fallback when the ``crc32c`` package is absent)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c_function() -> Callable[[bytes], int]:
    """The fastest CRC32C available in this interpreter."""
    try:
        import crc32c as _crc32c_module
    except ImportError:
        return crc32c_pure
    fn: Callable[[bytes], int] = _crc32c_module.crc32c
    return fn


def crc32c_of_text(text: str | None) -> int | None:
    """CRC32C of the UTF-8 bytes of ``text``; None for None."""
    if text is None:
        return None
    return crc32c_function()(text.encode("utf-8"))
