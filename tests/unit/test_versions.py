"""One version number: dbt_project.yml, pyproject.toml, dbt_spark_cdc.__version__ and the newest
CHANGELOG entry agree, and the dbt-core range dbt_project.yml requires is the one pyproject pins."""

from __future__ import annotations

import re
from pathlib import Path

import dbt_spark_cdc
import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _dbt_project() -> dict:
    return yaml.safe_load((ROOT / "dbt_project.yml").read_text())


def test_one_version_number() -> None:
    version = _pyproject()["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert _dbt_project()["version"] == version
    assert dbt_spark_cdc.__version__ == version
    # The newest CHANGELOG entry (Keep a Changelog: "## [x.y.z] - date", after "## [Unreleased]").
    entries = re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M
    )
    assert entries and entries[0] == version, entries


def test_require_dbt_version_matches_the_python_pin() -> None:
    required = _dbt_project()["require-dbt-version"]
    pins = [d for d in _pyproject()["project"]["dependencies"] if d.startswith("dbt-core")]
    assert len(pins) == 1
    # dbt-core>=1.10,<1.12 <-> [">=1.10.0", "<1.12.0"]
    bounds = re.findall(r"([<>]=?)(\d+\.\d+)", pins[0])
    assert [f"{op}{v}.0" for op, v in bounds] == required, (pins[0], required)


def test_integration_project_installs_the_package_from_this_checkout() -> None:
    lock = yaml.safe_load((ROOT / "integration_tests" / "packages.yml").read_text())
    assert lock["packages"] == [{"local": "../"}]
