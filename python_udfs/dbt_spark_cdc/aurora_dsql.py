"""Aurora DSQL CDC: build chunked records the way DSQL splits an oversized one.

DSQL replaces an image that does not fit a Kinesis record with a ``chunked`` reference
(``chunk_id``, ``total_fragments``, ``crc32c`` as a decimal string over the image's JSON text) and
sends the text in ``fragment`` records split on character boundaries. spark_cdc reassembles them in
SQL (``reassemble_aurora_dsql_chunks``); this module produces such records for tests, demos and
replays, with a real CRC32C.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dbt_spark_cdc.checksums import crc32c_of_text

IMAGES = ("before", "after")


def split_text(text: str, pieces: int) -> list[str]:
    """``text`` cut into ``pieces`` consecutive non-empty parts on character boundaries.

    >>> split_text("abcdefg", 3)
    ['abc', 'de', 'fg']
    """
    if pieces < 1 or pieces > len(text):
        raise ValueError(f"cannot split {len(text)} characters into {pieces} non-empty pieces")
    size, extra = divmod(len(text), pieces)
    parts: list[str] = []
    start = 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


def chunk_record(
    record: Mapping[str, Any],
    chunk_ids: Mapping[str, str],
    *,
    fragments: int = 3,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Split the images named in ``chunk_ids`` (``before``/``after`` -> chunk_id) out of ``record``.

    Returns the ``chunked`` main record and its ``fragment`` records in index order. Each image's JSON
    text is ``json.dumps(image, ensure_ascii=False)``, so non-ASCII text crosses fragments as
    characters, and ``crc32c`` is the CRC32C of that text's UTF-8 bytes.
    """
    unknown = set(chunk_ids) - set(IMAGES)
    if unknown:
        raise ValueError(f"only before/after images can be chunked, not {sorted(unknown)}")
    main: dict[str, Any] = {**record, "type": "chunked"}
    chunked: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    for image in IMAGES:
        if image not in chunk_ids:
            continue
        value = record.get(image)
        if not isinstance(value, Mapping):
            raise ValueError(f"record has no {image} image object to chunk")
        text = json.dumps(value, ensure_ascii=False)
        chunk_id = chunk_ids[image]
        chunked[image] = {
            "chunk_id": chunk_id,
            "total_fragments": fragments,
            "crc32c": str(crc32c_of_text(text)),
        }
        main[image] = None
        parts.extend(
            {"type": "fragment", "chunk_id": chunk_id, "index": i, "data": piece}
            for i, piece in enumerate(split_text(text, fragments))
        )
    main["chunked"] = chunked
    return main, parts


def dumps(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Records as the JSON text a Kinesis record's Data field carries."""
    return [json.dumps(r, ensure_ascii=False) for r in records]
