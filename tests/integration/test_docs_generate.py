"""`dbt docs generate` runs clean in integration_tests/ (warnings are errors), and the generated
manifest documents every model, column and macro the package ships."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration


def test_docs_generate_is_clean_and_documents_the_package(
    project: DbtProject, schema: str, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    project.dbt("--warn-error", "docs", "generate", "--write-json", "--target-path", str(target))
    manifest = json.loads((target / "manifest.json").read_text())
    assert (target / "catalog.json").exists() and (target / "index.html").exists()

    undocumented = []
    package_nodes = [
        n
        for n in manifest["nodes"].values()
        if n["package_name"] == "spark_cdc" and n["resource_type"] in ("model", "seed")
    ]
    assert {"cdc_changes", "cdc_quarantine", "stg_cdc__debezium"} <= {n["name"] for n in package_nodes}
    for node in package_nodes:
        if not node["description"].strip():
            undocumented.append(node["name"])
        assert node["columns"], node["name"]
        for column in node["columns"].values():
            # Descriptions that use {{ doc() }} are rendered into the manifest: none may stay empty.
            if not column["description"].strip() or not column.get("data_type"):
                undocumented.append(f"{node['name']}.{column['name']}")
    for macro in manifest["macros"].values():
        name = macro["name"]
        # Dispatch implementations (default__x) are documented by the macro they implement;
        # private macros (_x) by their header comment (tests/unit/test_macro_docs.py).
        dispatched = "__" in name.lstrip("_")
        public = not name.startswith("_") and not dispatched
        if macro["package_name"] == "spark_cdc" and public and not macro["description"].strip():
            undocumented.append(f"macro {name}")
    assert undocumented == []
    # The embedded metastore (Derby) stores a view's text in a column of at most 32,700 characters; the
    # package's views, with every format enabled, must fit (cdc_accounting inlines each raw relation).
    long_views = {
        n["name"]: len(n["compiled_code"])
        for n in package_nodes
        if n["config"]["materialized"] == "view" and len(n.get("compiled_code") or "") > 30000
    }
    assert long_views == {}, long_views
    assert any(n["name"] == "cdc_accounting" and n.get("compiled_code") for n in package_nodes)
    assert os.path.getsize(target / "index.html") > 0
