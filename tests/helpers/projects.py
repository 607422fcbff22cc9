"""Throwaway dbt projects that use this package and share the integration project's profile (and so
its SparkSession and the test's schema): one with given model files (test_debezium_scd2.py,
test_debezium_apply_options.py, the schema-drift test), and one of partitioned and flat targets over
the change stream (test_debezium_partitions.py, test_debezium_storage.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tests.helpers.landing import FORMATS, DbtProject

ROOT = Path(__file__).resolve().parents[2]


def side_project(
    project: DbtProject, path: Path, models: dict[str, str], macros: dict[str, str] | None = None
) -> DbtProject:
    """A throwaway dbt project at `path` using this package, with the given model files (name -> text);
    it shares the profile (and so the SparkSession and the test's schema) with `project`. `macros`
    (file name -> text) go to its macros/, and the package's dispatched macros look there first (a
    test's override of a hook, such as a simulated crash)."""
    name = f"spark_cdc_scd2_{path.name.lower()[:20]}"
    (path / "models").mkdir()
    (path / "macros").mkdir()
    for file, text in (macros or {}).items():
        (path / "macros" / file).write_text(text)
    dispatch = (
        f"dispatch:\n  - macro_namespace: spark_cdc\n    search_order: [{name}, spark_cdc]\n"
        if macros
        else ""
    )
    (path / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (path / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '0.1.0'\nconfig-version: 2\n"
        f"profile: spark_cdc_integration_tests\n{dispatch}"
        "vars: {spark_cdc: {formats: {"
        + ", ".join(f"{f}: {{enabled: {str(f == 'debezium').lower()}, relation: raw.{f}}}" for f in FORMATS)
        + "}}}\n"
    )
    for name, text in models.items():
        (path / "models" / name).write_text(text)
    side = DbtProject(str(path), profiles_dir=project.profiles_dir)
    side.dbt("deps", "--quiet")
    return side


COLUMNS = [("id", "int"), ("name", "string"), ("description", "string"), ("weight", "double")]


def models_yml(names: Iterable[str]) -> str:
    """A models yml declaring COLUMNS for each model of `names`."""
    columns = "".join(f"      - {{name: {c}, data_type: {t}}}\n" for c, t in COLUMNS)
    return "version: 2\nmodels:\n" + "".join(f"  - name: {m}\n    columns:\n{columns}" for m in names)


def model_sql(schema: str, materialized: str, partitioned: bool) -> str:
    part = ", partition_by='name'" if partitioned else ""
    return (
        f"{{{{ config(materialized='{materialized}', unique_key='id', source_table='inventory.products', "
        f"cdc_format='debezium', file_format='parquet'{part}) }}}}\n"
        f"select * from `{schema}`.cdc_changes\n"
    )


MODELS = {
    "parts_scd1": ("cdc_scd1", True),
    "flat_scd1": ("cdc_scd1", False),
    "parts_scd2": ("cdc_scd2", True),
    "flat_scd2": ("cdc_scd2", False),
}


def partitions_project(
    project: DbtProject, path: Path, schema: str, names: Iterable[str] = tuple(MODELS)
) -> DbtProject:
    """A throwaway project over `{schema}`.cdc_changes with the models `names` of MODELS (name ->
    materialization, partitioned), that dispatches to its own macros first (the simulated crash of
    integration_tests/macros/crash_points.sql)."""
    names = tuple(names)
    models = {f"{name}.sql": model_sql(schema, *MODELS[name]) for name in names}
    models["models.yml"] = models_yml(names)
    crash = (ROOT / "integration_tests" / "macros" / "crash_points.sql").read_text()
    return side_project(project, path, models, macros={"crash_points.sql": crash})
