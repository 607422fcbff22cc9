"""Every model and seed the package ships is described in yml, and so is every one of its columns,
with a data_type: `dbt docs` then shows a complete contract (issue: data contracts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def yml_entries(folder: str, kind: str) -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for path in sorted((ROOT / folder).rglob("*.yml")):
        for entry in yaml.safe_load(path.read_text()).get(kind) or []:
            assert entry["name"] not in entries, f"{entry['name']} described twice ({path})"
            entries[entry["name"]] = entry
    return entries


def model_files() -> set[str]:
    return {p.stem for p in (ROOT / "models").rglob("*") if p.suffix in {".sql", ".py"}}


def test_every_model_has_a_yml_entry_and_every_entry_a_model() -> None:
    described = yml_entries("models", "models")
    assert model_files() - described.keys() == set(), "models without a yml description"
    assert described.keys() - model_files() == set(), "yml describes models that do not exist"


@pytest.mark.parametrize(("folder", "kind"), [("models", "models"), ("seeds", "seeds")])
def test_every_column_has_a_data_type_and_a_description(folder: str, kind: str) -> None:
    missing = []
    for name, entry in yml_entries(folder, kind).items():
        if not str(entry.get("description", "")).strip():
            missing.append(f"{name}: no description")
        columns = entry.get("columns") or []
        if not columns:
            missing.append(f"{name}: no columns")
        for column in columns:
            for field in ("data_type", "description"):
                if not str(column.get(field, "")).strip():
                    missing.append(f"{name}.{column.get('name')}: no {field}")
    assert missing == []
