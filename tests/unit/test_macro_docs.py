"""Every public macro of the package is documented in macros/macros.yml, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MACRO = re.compile(r"{%-?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def public_macros() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "macros").rglob("*.sql"):
        for name in MACRO.findall(path.read_text()):
            if not name.startswith("_") and "__" not in name:
                names.add(name)
    return names


def documented() -> dict[str, dict[str, object]]:
    doc = yaml.safe_load((ROOT / "macros" / "macros.yml").read_text())
    return {m["name"]: m for m in doc["macros"]}


def test_every_public_macro_is_documented_and_every_entry_exists() -> None:
    public, docs = public_macros(), documented()
    assert public - docs.keys() == set(), "public macros missing from macros/macros.yml"
    assert docs.keys() - public == set(), "macros/macros.yml documents macros that do not exist"
    assert all(str(m.get("description", "")).strip() for m in docs.values())


def test_documented_arguments_match_the_signatures() -> None:
    docs = documented()
    for path in (ROOT / "macros").rglob("*.sql"):
        text = path.read_text()
        for match in re.finditer(r"{%-?\s*macro\s+([A-Za-z0-9_]+)\s*\(([^)]*)\)", text):
            name, params = match.group(1), match.group(2)
            if name not in docs:
                continue
            expected = [p.split("=")[0].strip() for p in params.split(",") if p.strip()]
            arguments = docs[name].get("arguments") or []
            assert isinstance(arguments, list)
            assert [a["name"] for a in arguments] == expected, name
