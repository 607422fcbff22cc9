"""Who imports what (read with ast, nothing imported): no file under tests/ imports a test module
(shared code lives in tests/helpers), the helpers import nothing from tests/integration or tests/unit,
and the runtime package (the wheel, python_udfs/dbt_spark_cdc) imports nothing from tests/ or
benchmarks/."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
RUNTIME = ROOT / "python_udfs" / "dbt_spark_cdc"


def imported_modules(source: str) -> Iterator[str]:
    """Every module an import statement of `source` names, at any depth (imports inside functions
    too): `import a.b` gives a.b, `from a.b import c` gives a.b and a.b.c (c may be a module),
    `from . import c` gives c."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if base:
                yield base
            yield from (f"{base}.{alias.name}" if base else alias.name for alias in node.names)


def imports_of_test_modules(source: str) -> list[str]:
    """The test modules (a dotted part named test_*) `source` imports, or imports from."""
    found = set()
    for name in imported_modules(source):
        parts = name.split(".")
        for i, part in enumerate(parts):
            if part.startswith("test_"):
                found.add(".".join(parts[: i + 1]))
                break
    return sorted(found)


def python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from test_debezium_merge import batches", ["test_debezium_merge"]),
        ("import test_ydb", ["test_ydb"]),
        ("def f():\n    from test_aurora_dsql import TS_NS as t\n", ["test_aurora_dsql"]),
        ("from tests.integration.test_ydb import SCENARIOS", ["tests.integration.test_ydb"]),
        ("from tests.integration import test_ydb", ["tests.integration.test_ydb"]),
        ("from . import test_ydb", ["test_ydb"]),
        ("from tests.helpers.landing import DbtProject", []),
        ("from tests.helpers.results import assert_records_accounted", []),
        ("import pytest\nfrom crash_harness import install", []),
    ],
)
def test_the_scan_finds_test_module_imports(source: str, found: list[str]) -> None:
    assert imports_of_test_modules(source) == found


def test_no_file_under_tests_imports_a_test_module() -> None:
    files = python_files(TESTS)
    assert len(files) > 50 and TESTS / "integration" / "test_reliability_fuzz.py" in files
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in files
        if (found := imports_of_test_modules(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "move what they share to tests/helpers"


def test_helpers_import_nothing_from_the_test_directories() -> None:
    # Modules of tests/integration and tests/unit are importable by their bare names under pytest
    # (crash_harness, fuzz_messages): the helpers must not depend on them either.
    local = {p.stem for d in ("integration", "unit") for p in python_files(TESTS / d)}
    assert {"crash_harness", "fuzz_messages", "conftest"} <= local
    offenders = {}
    for path in python_files(TESTS / "helpers"):
        names = set(imported_modules(path.read_text(encoding="utf-8")))
        bad = sorted(
            n for n in names if n.split(".")[0] in local or n.startswith(("tests.integration", "tests.unit"))
        )
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}


def test_the_runtime_package_imports_nothing_from_tests_or_benchmarks() -> None:
    files = python_files(RUNTIME)
    assert RUNTIME / "udfs.py" in files and not (RUNTIME / "testing.py").exists()
    offenders = {}
    for path in files:
        names = set(imported_modules(path.read_text(encoding="utf-8")))
        bad = sorted(n for n in names if n.split(".")[0] in ("tests", "benchmarks"))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}
