"""The model generator on every format's corpus: each examples/<format> project, its hand-written
target models removed, stages its messages, runs `spark-cdc-generate` (the operation
spark_cdc.generate_cdc_models, in-process), and builds what it wrote. The generated targets carry the
hand-written ones' columns and key, and end in the same state (tests/integration/data/examples)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt_spark_cdc.generate import main as generate
from dbt_spark_cdc.generate import parse_files, write_files

from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).resolve().parent / "data" / "examples"
SCHEMA = "cdc_example"  # examples/*/profiles.yml
# One case per format: examples/debezium_delta is examples/debezium on Delta Lake, and its profile
# would switch this process's shared session to Delta's catalog (which only a Delta lane loads).
FORMATS = sorted(p.stem for p in EXPECTED.glob("*.json") if not p.stem.endswith("_delta"))


def as_text(row: dict[str, Any]) -> dict[str, str | None]:
    return {k: None if v is None else str(v) for k, v in row.items()}


def hand_written_columns(folder: Path, model: str) -> list[str]:
    for path in (folder / "models").glob("*.yml"):
        for entry in yaml.safe_load(path.read_text())["models"]:
            if entry["name"] == model:
                return [c["name"] for c in entry["columns"]]
    raise AssertionError(model)


# `make test` builds the generated models of one format per way the generator types columns
# (describe_cdc_tables): Debezium's by the envelope's schema, Qlik Replicate's by its table
# metadata, Aurora DSQL's by the JSON values. CockroachDB's (an envelope schema, as Debezium's) and
# YDB's (column types configured per table) are marked long (`make test-long`).
IN_MAKE_TEST = ("aurora_dsql", "debezium", "qlik_replicate")


@pytest.mark.parametrize(
    "fmt", [f if f in IN_MAKE_TEST else pytest.param(f, marks=pytest.mark.long) for f in FORMATS]
)
def test_generated_models_build_like_the_hand_written_example(
    project: DbtProject, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = json.loads((EXPECTED / f"{fmt}.json").read_text())
    source = ROOT / "examples" / fmt
    folder = tmp_path / fmt
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns(".spark", "target", "logs", "dbt_packages"))
    (folder / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (folder / "package-lock.yml").unlink(missing_ok=True)
    for path in (folder / "models").iterdir():
        path.unlink()
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "logs"))
    project.spark.sql(f"drop database if exists `{SCHEMA}` cascade")
    user = DbtProject(str(folder), profiles_dir=str(folder))
    user.dbt("deps", "--quiet")
    user.dbt("build")  # the raw seed and the package's models: no target yet

    assert generate(["--project-dir", str(folder), "--profiles-dir", str(folder)]) == 0
    written = sorted(p.name for p in (folder / "models" / "cdc").iterdir())
    models = [
        m for m in yaml.safe_load(next((folder / "models" / "cdc").glob("*.yml")).read_text())["models"]
    ]
    scd1, scd2 = models[0], models[1]
    assert written == sorted([f"{scd1['name']}.sql", f"{scd2['name']}.sql", f"{scd1['name']}.yml"])
    assert scd2["name"] == f"{scd1['name']}_history"
    # The hand-written example's columns, every one typed.
    assert sorted(c["name"] for c in scd1["columns"]) == sorted(
        hand_written_columns(source, expected["scd1"])
    )
    assert all(c["data_type"] for c in scd1["columns"])
    sql = (folder / "models" / "cdc" / f"{scd1['name']}.sql").read_text()
    assert "materialized='cdc_scd1'" in sql and f"cdc_format='{fmt}'" in sql
    # Written again only with --force.
    with pytest.raises(FileExistsError):
        generate(["--project-dir", str(folder), "--profiles-dir", str(folder)])

    result = user.dbt("build")
    statuses = {r.node.unique_id: str(r.status) for r in result.result.results}
    assert statuses and set(statuses.values()) <= {"success", "pass"}, statuses
    key = tuple(expected["key"])
    columns = ", ".join(f"`{c}`" for c in expected["rows"][0])
    rows = sorted(
        (as_text(r) for r in project.rows(f"select {columns} from `{SCHEMA}`.`{scd1['name']}`")),
        key=lambda r: tuple(str(r[k]) for k in key),
    )
    assert rows == sorted((as_text(r) for r in expected["rows"]), key=lambda r: tuple(str(r[k]) for k in key))
    versions = project.rows(f"select count(*) as n from `{SCHEMA}`.`{scd2['name']}`")
    assert versions == [{"n": expected["versions"]}]


def test_the_writer_refuses_paths_outside_the_project(tmp_path: Path) -> None:
    files = parse_files("x\n-- spark_cdc file: models/cdc/a.sql\nselect 1\n-- spark_cdc end\nlog line\n")
    assert files == {"models/cdc/a.sql": "select 1\n"}
    for bad in ("../a.sql", "models/../../a.sql", "/etc/a.sql", "models/a b.sql", "models/a.py"):
        with pytest.raises(ValueError):
            write_files(tmp_path, {bad: "x"})
    assert write_files(tmp_path, files) == [tmp_path.resolve() / "models" / "cdc" / "a.sql"]
