"""Every macro of the package is documented once: a public macro in a yml file under macros/ (what
`dbt docs` shows; arguments as in its signature), a private helper (name starting with `_`) by the
Jinja comment right above its definition, and nothing else is.
Generic tests (`{% test name(...) %}` blocks) are macros named `test_<name>` to dbt and are
documented under that name."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MACRO = re.compile(r"{%-?\s*(macro|test)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)")


def macro_signatures() -> dict[str, list[str]]:
    """Every macro defined under macros/, by the name dbt gives it, with its parameter names."""
    found: dict[str, list[str]] = {}
    for path in (ROOT / "macros").rglob("*.sql"):
        for kind, name, params in MACRO.findall(path.read_text()):
            full = f"test_{name}" if kind == "test" else name
            found[full] = [p.split("=")[0].strip() for p in params.split(",") if p.strip()]
    return found


MATERIALIZATION = re.compile(r"{%-?\s*materialization\s+([A-Za-z_][A-Za-z0-9_]*)\s*,\s*adapter\s*=\s*'(\w+)'")


def package_macros() -> set[str]:
    """Every public macro but the dispatch implementations (`default__x`, documented by `x`)."""
    names = {name for name in macro_signatures() if "__" not in name and not name.startswith("_")}
    for path in (ROOT / "macros").rglob("*.sql"):
        names |= {f"materialization_{m}_{a}" for m, a in MATERIALIZATION.findall(path.read_text())}
    return names


def documented() -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = {}
    for path in sorted((ROOT / "macros").rglob("*.yml")):
        for entry in yaml.safe_load(path.read_text()).get("macros") or []:
            assert entry["name"] not in entries, f"{entry['name']} documented twice ({path})"
            entries[entry["name"]] = entry
    return entries


def test_every_macro_is_documented_and_every_entry_exists() -> None:
    macros, docs = package_macros(), documented()
    assert macros - docs.keys() == set(), "macros missing from macros/**/*.yml"
    assert docs.keys() - macros == set(), "macros/**/*.yml documents macros that do not exist"
    assert all(str(m.get("description", "")).strip() for m in docs.values())


def test_documented_arguments_match_the_signatures() -> None:
    docs = documented()
    for name, expected in macro_signatures().items():
        if name not in docs:
            continue
        arguments = docs[name].get("arguments") or []
        assert isinstance(arguments, list)
        assert [a["name"] for a in arguments] == expected, name


def test_every_private_macro_has_a_comment_above_it() -> None:
    undocumented = []
    for path in (ROOT / "macros").rglob("*.sql"):
        text = path.read_text()
        for match in MACRO.finditer(text):
            name = match.group(2)
            if name.startswith("_") and not text[: match.start()].rstrip().endswith("#}"):
                undocumented.append(f"{path.relative_to(ROOT)}: {name}")
    assert undocumented == [], "private macros without a {#- ... -#} comment right above them"
