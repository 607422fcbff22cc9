"""The SQL decoder of Qlik Replicate change and column masks (spark_cdc._qlik_mask_ordinals, used
by Qlik staging) gives exactly what the Python reference gives (dbt_spark_cdc.qlik_replicate.
decode_mask): the corpus masks, both letter cases, and a few hundred random masks up to 300 hex
digits (1,200 columns), all in one query. Staging admits only hex text to the decoder
(masks_valid), so only hex text is asked here."""

from __future__ import annotations

import random

import pytest
from dbt_spark_cdc.qlik_replicate import decode_mask

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration


def cases() -> list[str]:
    fixed = ["0B", "02", "07", "05", "00", "008080", "00FFFF", "1", "0b", "00ffff", "aBcDeF", "F" * 300]
    rng = random.Random(20261126)
    for _ in range(300):
        digits = rng.choice((1, 2, 3, 4, 8, 16, 17, 64, rng.randint(1, 300)))
        text = "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(digits))
        fixed.append(text)
    return fixed


def test_sql_mask_decoder_equals_the_python_reference(project: DbtProject) -> None:
    masks = cases()
    rows = ", ".join(f"({i}, '{mask}')" for i, mask in enumerate(masks))
    sql = (
        "select i, {{ spark_cdc._qlik_mask_ordinals('mask') }} as ordinals "
        f"from (values {rows}) as t(i, mask)"
    )
    compiled = project.dbt("compile", "--inline", sql, "--quiet").result.results[0].node.compiled_code
    got = {r["i"]: list(r["ordinals"]) for r in project.rows(compiled)}
    expected = {i: decode_mask(mask) for i, mask in enumerate(masks)}
    mismatches = {i: (masks[i], got[i], expected[i]) for i in expected if got[i] != expected[i]}
    assert not mismatches
    assert sum(len(v or []) for v in expected.values()) > 10_000


def test_masked_column_names_by_lookup_equal_a_scan_of_the_columns(project: DbtProject) -> None:
    """_qlik_names_of_ordinals over a version's ordinal table (_qlik_ordinal_names) names the
    columns whose ordinals a mask sets, as a scan of the columns does: compact ordinals (the table)
    and sparse ones (no table, the scan), ordinals past the last column, and a column missing."""
    versions = {
        "compact": [(1, "id"), (2, "name"), (3, "qty"), (5, "note")],
        "sparse": [(1, "id"), (900, "far")],
    }
    masks = {"compact": [1, 3, 4, 5, 9], "sparse": [1, 2, 900, 901]}
    rows = []
    for name, cols in versions.items():
        columns = ", ".join(f"named_struct('ordinal', {o}, 'name', '{n}')" for o, n in cols)
        ordinals = ", ".join(str(o) for o in masks[name])
        rows.append(f"select '{name}' as v, array({columns}) as columns, array({ordinals}) as ordinals")
    table = "{{ spark_cdc._qlik_ordinal_names('columns') }}"
    md = f"named_struct('columns', columns, 'ordinal_names', {table}) as md"
    sql = (
        "select v, {{ spark_cdc._qlik_names_of_ordinals('md', 'ordinals') }} as names,"
        " md.ordinal_names is not null as has_table"
        f" from (select v, ordinals, {md} from ({' union all '.join(rows)}))"
    )
    compiled = project.dbt("compile", "--inline", sql, "--quiet").result.results[0].node.compiled_code
    got = {r["v"]: (list(r["names"]), r["has_table"]) for r in project.rows(compiled)}
    assert got == {"compact": (["id", "qty", "note"], True), "sparse": (["id", "far"], False)}
