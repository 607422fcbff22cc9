"""What a build left, read back: dbt's test results, row counts, and the completeness check every
format's conformance module runs (cdc_records_accounted and its cdc_accounting ledger)."""

from __future__ import annotations

from typing import Any

from tests.helpers.landing import DbtProject, qualified


def dbt_test_results(result: Any, test_name: str) -> list[tuple[str, int, str]]:
    """(status, failures, relation holding the stored failures) of each run of generic test
    `test_name` in a dbtRunner result."""
    return [
        (str(r.status), int(r.failures or 0), str(r.node.relation_name))
        for r in result.result.results
        if r.node.resource_type == "test" and test_name in r.node.name
    ]


def assert_records_accounted(project: DbtProject, schema: str, result: Any, formats: tuple[str, ...]) -> None:
    """The build ran cdc_records_accounted and it passed, and the cdc_accounting ledger gives every
    raw record landed for `formats` one outcome, none of them unaccounted or unstaged.
    (Used by the format conformance modules too.)"""
    assert [r[:2] for r in dbt_test_results(result, "cdc_records_accounted")] == [("pass", 0)]
    ledger = project.rows(f"select cdc_format, outcome, records from `{schema}`.cdc_accounting")
    assert not [r for r in ledger if r["outcome"] in ("unaccounted", "unstaged")], ledger
    for fmt in formats:
        landed = project.rows(f"select count(*) as n from {qualified(f'{schema}_raw', fmt)}")[0]["n"]
        assert sum(r["records"] for r in ledger if r["cdc_format"] == fmt) == landed, (fmt, ledger)


def count(project: DbtProject, schema: str, model: str) -> int:
    return int(project.rows(f"select count(*) as n from `{schema}`.{model}")[0]["n"])


def star_except(project: DbtProject, relation: str, *excluded: str) -> str:
    """The select list of `select * except (...)` (Spark 4 syntax only): every column of `relation`
    but `excluded`, quoted, in table order."""
    columns = [r["col_name"] for r in project.rows(f"describe {relation}")]
    names = columns[: columns.index("")] if "" in columns else columns  # partition info follows a blank
    return ", ".join(f"`{c}`" for c in names if not c.startswith("#") and c not in excluded)
