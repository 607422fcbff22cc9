"""Value decoders for envelope encodings that Spark SQL cannot express on its own."""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal, localcontext

# Kafka Connect decimals travel as base64 big-endian two's-complement unscaled integers. Spark's
# widest decimal holds 38 digits; anything longer cannot be represented and is reported as None
# (the caller quarantines or nulls it) instead of raising mid-batch.
MAX_DECIMAL_DIGITS = 38
_MAX_ENCODED_CHARS = 64


def decode_connect_decimal(encoded: str | None, scale: int | None) -> str | None:
    """Decode an ``org.apache.kafka.connect.data.Decimal`` value to its exact decimal text.

    >>> decode_connect_decimal("AdTA", 2)
    '1200.00'
    >>> decode_connect_decimal("CfY=", 2)
    '25.50'
    """
    if encoded is None or scale is None or len(encoded) > _MAX_ENCODED_CHARS:
        return None
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw:
        return None
    unscaled = int.from_bytes(raw, byteorder="big", signed=True)
    if len(str(abs(unscaled))) > MAX_DECIMAL_DIGITS or not 0 <= scale <= MAX_DECIMAL_DIGITS:
        return None
    with localcontext() as ctx:
        ctx.prec = MAX_DECIMAL_DIGITS + 2
        value = Decimal(unscaled).scaleb(-scale)
    return f"{value:.{scale}f}"
