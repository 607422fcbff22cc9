"""Every YAML file of the repository parses, without duplicate keys.

PyYAML (and so dbt) silently keeps the last of two equal keys in a mapping: a second `columns:` or a
repeated model name in a schema file would drop documentation or tests without a word. Anchors and
merge keys (`<<: *landing`) are allowed; an explicit key repeated in one mapping is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".venv", ".venv-matrix", ".spark", "dbt_packages", "target", "logs", ".git", "node_modules"}
# dbt's anonymous user id, written next to a profiles.yml by a run (git-ignored; the examples, the
# test and the benchmark projects): counting it made the number of tests depend on which of these
# the working tree held at collection (up to 7 more: 414 at 34a1220, 409 at 3dff968, 407 without).
WRITTEN_BY_DBT = {".user.yml"}


def yaml_files() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*")):
        if (
            path.suffix in (".yml", ".yaml")
            and path.name not in WRITTEN_BY_DBT
            and not SKIP.intersection(path.relative_to(ROOT).parts)
        ):
            found.append(path)
    return found


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (merge keys excepted)."""


def _mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def test_the_repository_has_yaml_files_to_check() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in yaml_files()}
    assert {"dbt_project.yml", "integration_tests/dbt_project.yml", "macros/macros.yml"} <= names
    assert len(names) > 30


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_yaml_file_parses_without_duplicate_keys(path: Path) -> None:
    with path.open(encoding="utf-8") as handle:
        for _document in yaml.load_all(handle, Loader=StrictLoader):
            pass


def test_a_duplicate_key_is_refused() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key 'columns'"):
        yaml.load("models:\n  - name: a\n    columns: []\n    columns: []\n", Loader=StrictLoader)
    merged = yaml.load("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n", Loader=StrictLoader)
    assert merged["use"] == {"x": 1, "y": 2}
