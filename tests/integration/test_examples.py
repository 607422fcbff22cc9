"""Every examples/<format>/ project builds as a user would build it (`dbt deps`, `dbt build`, in its
own folder, with its own packages.yml and profile) and ends with the source table's state.

The expected end state of each example is in tests/integration/data/examples/<format>.json (derived
from the corpus' expected files; each example's README gives the messages' provenance).
The SCD2 target must agree with it too: its current, non-deleted versions are the SCD1 rows.

In a lakehouse lane (SPARK_CDC_TABLE_FORMAT=delta|iceberg) each example is built from a copy whose
models set that file_format, as a user would switch it: the same end state on real Delta Lake or
Apache Iceberg."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.lakehouse import table_format
from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).resolve().parent / "data" / "examples"
SCHEMA = "cdc_example"  # examples/*/profiles.yml


def examples() -> dict[str, dict[str, Any]]:
    """examples/<format> -> its expectations, tests/integration/data/examples/<format>.json: the
    SCD1 and SCD2 model names, the key columns, how many SCD2 rows (versions, deleted ones included)
    the history ends with, and the SCD1 rows."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(EXPECTED.glob("*.json"))}


def test_every_example_folder_is_tested() -> None:
    folders = {p.name for p in (ROOT / "examples").iterdir() if (p / "dbt_project.yml").exists()}
    assert folders and folders == set(examples())


def example_folder(fmt: str, tmp_path: Path) -> Path:
    """examples/<fmt>, or in a lakehouse lane a copy of it whose models use the lane's file_format
    (its packages.yml pointing at this checkout)."""
    folder = ROOT / "examples" / fmt
    lakehouse = table_format()
    if fmt.endswith("_delta"):
        # Its profile loads Delta Lake into the session: one of this process, which only a Delta lane has.
        if lakehouse != "delta":
            pytest.skip(f"examples/{fmt} needs a Spark session with Delta Lake: make test-delta runs it")
        return folder
    if lakehouse is None:
        return folder
    copy = tmp_path / "example"
    skip = shutil.ignore_patterns("target", "logs", "dbt_packages", ".spark", "package-lock.yml")
    shutil.copytree(folder, copy, ignore=skip)
    (copy / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(ROOT))}\n")
    head, models, body = (copy / "dbt_project.yml").read_text().rpartition("\nmodels:")
    assert models and body.count("+file_format: parquet") == 1, fmt
    body = body.replace("+file_format: parquet", f"+file_format: {lakehouse}")
    (copy / "dbt_project.yml").write_text(head + models + body)
    return copy


def _as_text(row: dict[str, Any]) -> dict[str, str | None]:
    """Values as text, so Spark's Decimal and date compare with the JSON of the expectations."""
    return {k: None if v is None else str(v) for k, v in row.items()}


def _rows(project: DbtProject, sql: str, key: tuple[str, ...]) -> list[dict[str, str | None]]:
    return sorted((_as_text(r) for r in project.rows(sql)), key=lambda r: tuple(str(r[k]) for k in key))


@pytest.mark.parametrize("fmt", list(examples()))
def test_example_builds_to_the_source_state(
    project: DbtProject, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = examples()[fmt]
    key = tuple(example["key"])
    folder = example_folder(fmt, tmp_path)
    # The example's own target/ and logs/ would land in the repository.
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "logs"))
    project.spark.sql(f"drop database if exists `{SCHEMA}` cascade")
    user = DbtProject(str(folder), profiles_dir=str(folder))
    user.dbt("deps", "--quiet")
    result = user.dbt("build")
    statuses = {r.node.unique_id: str(r.status) for r in result.result.results}
    assert statuses and set(statuses.values()) <= {"success", "pass"}, statuses

    expected = example["rows"]
    columns = ", ".join(f"`{c}`" for c in expected[0])
    current = _rows(project, f"select {columns} from `{SCHEMA}`.`{example['scd1']}`", key)
    assert current == sorted((_as_text(r) for r in expected), key=lambda r: tuple(str(r[k]) for k in key))
    history = f"`{SCHEMA}`.`{example['scd2']}`"
    assert (
        _rows(
            project,
            f"select {columns} from {history} where _cdc_is_current and not _cdc_is_deleted",
            key,
        )
        == current
    )
    assert project.rows(f"select count(*) as n from {history}") == [{"n": example["versions"]}]
    assert project.rows(f"select count(*) as n from `{SCHEMA}`.cdc_quarantine") == [{"n": 0}]
    if table_format() is not None:  # the targets are the format's MERGE state tables, behind their views
        for model in (example["scd1"], example["scd2"]):
            assert project.spark.catalog.tableExists(f"{SCHEMA}.{model}__cdc_state"), model
    if fmt.endswith("_delta"):  # var spark_cdc.file_format: the package's own tables are Delta tables too
        own = ["stg_cdc__debezium", "cdc_sequence_conflicts", "cdc_reason_codes"]
        own.append(f"{example['scd1']}__cdc_rejected")
        formats = {t: project.spark.sql(f"describe detail `{SCHEMA}`.`{t}`").first()["format"] for t in own}
        assert formats == dict.fromkeys(own, "delta")

    # The run summary (spark_cdc.run_summary, the package's on-run-end hook) in dbt's log.
    log = (tmp_path / "logs" / "dbt.log").read_text()
    assert "spark_cdc run summary" in log
    scd1_line = rf"{example['scd1']}\s+scd1\s+\d+\s+{len(expected)}\s+-\s+-\s+(\d|-)"
    scd2_line = rf"{example['scd2']}\s+scd2\s+\d+\s+{example['versions']}\s+-\s+-\s+(\d|-)"
    assert re.search(scd1_line, log) and re.search(scd2_line, log), log[-3000:]
    if fmt == "debezium":
        # Nothing new: the same tables, and no summary at all.
        user.dbt("build")
        second = (tmp_path / "logs" / "dbt.log").read_text()[len(log) :]
        assert "Running with dbt" in second and "spark_cdc run summary" not in second
        assert _rows(project, f"select {columns} from `{SCHEMA}`.`{example['scd1']}`", key) == current


def test_seed_values_reach_spark_unchanged(project: DbtProject) -> None:
    """dbt seed on the session method: the plugin's literals (dbt_spark_cdc._plugin) round-trip."""
    from dbt_spark_cdc._plugin import spark_sql_literal

    values = ["carpenter's", '{"a":"x\\"y"}', "a\\b", "line\nbreak", "ünï ✓", "100%s", "", None]
    row = project.spark.sql("select " + ", ".join(spark_sql_literal(v) for v in values)).first()
    assert list(row) == values
