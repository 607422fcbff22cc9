"""The seed of stable reason codes: unique, complete, and every code the SQL can emit is in it."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORMATS = {"debezium", "aurora_dsql", "qlik_replicate", "ydb", "cockroachdb"}


def seed() -> list[dict[str, str]]:
    with open(ROOT / "seeds" / "cdc_reason_codes.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_codes_are_unique_and_fully_described() -> None:
    rows = seed()
    codes = [r["reason_code"] for r in rows]
    assert len(codes) == len(set(codes))
    for row in rows:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", row["reason_code"]), row
        assert row["record_status"] in ("quarantined", "skipped"), row
        formats = set(row["formats"].split())
        assert formats == {"all"} or (formats and formats <= FORMATS), row
        assert row["description"].strip(), row


def test_the_seed_and_the_sql_agree_on_the_codes() -> None:
    """Codes the SQL writes in its common spellings are in the seed (an unknown one would fail
    cdc_reason_codes_valid at run time, and only for the input that reaches it), and every seed code
    is written somewhere (no dead code in the list users read)."""
    known = {r["reason_code"] for r in seed()}
    sql = "\n".join(p.read_text() for d in ("macros", "models") for p in (ROOT / d).rglob("*.sql"))
    written = set(re.findall(r"reason_code\s*=\s*'([a-z_]+)'", sql))
    written |= set(re.findall(r"'([a-z_]+)'\s+as\s+reason_code", sql))
    written |= set(re.findall(r"'code',\s*'([a-z_]+)'", sql))
    assert len(written) >= 10, "the patterns no longer find the codes the SQL writes"
    # 'pending' is the DSQL reassembly's own state of a chunk still waiting for fragments: such a
    # record is not emitted (parse_aurora_dsql.sql, judged/emitted), so it is no reason code.
    assert written - {"pending"} <= known, written - known
    quoted = set(re.findall(r"'([a-z_]+)'", sql))
    assert known <= quoted, known - quoted
