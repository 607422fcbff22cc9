"""Every configuration mistake fails before any data is written, with a message that names the model
(or the var), the setting and the fix: one test per message.

One throwaway project holds a misconfigured model per message (and one correct model, which must
still build: a bad model fails alone). A single `dbt run` renders all of them; each test then checks
its model's message and that nothing of the model was written. Mistakes in var('spark_cdc') fail
the whole parse and are checked with `dbt parse --vars`. The change stream is the Debezium corpus,
staged once, so the mistakes only visible against real change images (columns='*') are covered too.

Elsewhere: a storage layout changed without --full-refresh (test_debezium_partitions.py), sequence_by
ties and types (test_debezium_apply_options.py), contract-test arguments (test_contracts_*.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.landing import FORMATS, DbtProject, fresh_landing, land_messages, read_jsonl_messages

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "integration_tests" / "data" / "debezium_postgres" / "flink"
SCHEMA = "it_config_errors"
COLUMNS = [("id", "int"), ("name", "string"), ("description", "string"), ("weight", "double")]


@dataclass(frozen=True)
class Case:
    settings: str
    #: Substrings of the message besides the model's name and "Fix:" (the setting, the key words).
    expect: tuple[str, ...]
    materialized: str = "cdc_scd1"
    #: yml columns (name, data_type or None); None: the four product columns.
    columns: tuple[tuple[str, str | None], ...] | None = None
    source_table: str = "inventory.products"


KEY = "unique_key='id', "
CASES: dict[str, Case] = {
    # Shared by cdc_scd1 and cdc_scd2 (_cdc_validate_target).
    "no_unique_key": Case(
        "", ("has no unique_key", "has no primary_key", "unique_key='id'"), source_table="inventory.other"
    ),
    "key_disagrees": Case("unique_key='name', ", ("unique_key=['name']", "primary_key is ['id']")),
    "columns_and_except": Case(KEY + "columns='*', except_columns=['name']", ("columns and except_columns",)),
    "columns_not_a_list": Case(KEY + "columns='id'", ("columns=id", "columns='*'")),
    "except_lists_key": Case(KEY + "except_columns=['id']", ("except_columns", "unique_key column 'id'")),
    "no_columns": Case(KEY, ("declares no columns",), columns=()),
    "key_not_declared": Case(KEY, ("unique_key column 'id'", "declare 'id'"), columns=(("name", "string"),)),
    "unknown_file_format": Case(KEY + "file_format='avro'", ("file_format='avro'", "'delta'")),
    "partition_not_declared": Case(KEY + "partition_by='colour'", ("partition_by column 'colour'",)),
    "tblproperties_not_a_mapping": Case(KEY + "tblproperties='x'", ("tblproperties=x", "not a mapping")),
    "tblproperties_reserved": Case(
        KEY + "tblproperties={'spark_cdc.version': '9'}", ("property spark_cdc.version", "spark_cdc.* names")
    ),
    "unknown_cdc_format": Case(KEY + "cdc_format='kafka'", ("cdc_format='kafka'", "formats.kafka.enabled")),
    "no_cdc_format": Case(KEY, ("sets no cdc_format", "debezium", "aurora_dsql", "config(cdc_format=")),
    "truncate_handling": Case(KEY + "truncate_handling='drop'", ("truncate_handling='drop'", "'ignore'")),
    "sequence_by_too_long": Case(KEY + "sequence_by=['a', 'b', 'c', 'd']", ("sequence_by=", "one to three")),
    "meta_not_a_mapping": Case(KEY + "meta_column_names='op'", ("meta_column_names", "must be a mapping")),
    "meta_unknown_key": Case(KEY + "meta_column_names={'opp': 'x'}", ("unknown key 'opp'",)),
    "meta_empty_name": Case(KEY + "meta_column_names={'op': ' '}", ("meta_column_names.op", "non-empty")),
    "meta_same_name": Case(
        KEY + "meta_column_names={'op': 'm', 'seq': 'm'}", ("meta_column_names.seq", "are both 'm'")
    ),
    # A declared column of the metadata column's own type only documents it: another type collides.
    "meta_collides": Case(
        KEY + "meta_column_names={'commit_ts': 'name'}", ("column 'name'", "meta_column_names.commit_ts")
    ),
    # Settings of another materialization (_cdc_reject_foreign_settings).
    "scd2_setting_on_scd1": Case(
        KEY + "track_history_columns=['name']", ("track_history_columns", "cdc_scd2 setting")
    ),
    "valid_to_current_on_scd1": Case(KEY + "valid_to_current='9999-12-31'", ("valid_to_current", "cdc_scd2")),
    "merge_strategy_on_parquet": Case(
        KEY + "incremental_strategy='merge'", ("incremental_strategy='merge'", "has no MERGE INTO", "'delta'")
    ),
    "incremental_strategy": Case(
        KEY + "incremental_strategy='append'",
        ("incremental_strategy='append'", "remove incremental_strategy"),
    ),
    "merge_option_on_parquet": Case(
        KEY + "merge_update_columns=['name']", ("merge_update_columns", "file_format='parquet' does not have")
    ),
    "merge_option_on_delta": Case(
        KEY + "file_format='delta', merge_exclude_columns=['name']",
        ("merge_exclude_columns", "writes its MERGE itself", "except_columns"),
    ),
    "snapshot_setting": Case(
        KEY + "strategy='timestamp', updated_at='ts'", ("strategy", "dbt snapshot setting", "sequence_by")
    ),
    # cdc_scd1's own.
    "scd1_delete_handling": Case(
        KEY + "delete_handling='invalidate'", ("delete_handling='invalidate'", "a cdc_scd2 value", "'flag'")
    ),
    "scd1_reserved_column": Case(
        KEY,
        ("column '_cdc_key'", "keeps for its own columns"),
        columns=(("id", "int"), ("_cdc_key", "string")),
    ),
    "not_built_by_cdc": Case(KEY, ("exists but was not built by cdc_scd1", "--full-refresh")),
    # cdc_scd2's own.
    "scd2_both_tracking": Case(
        KEY + "track_history_columns=['name'], track_history_except_columns=['weight']",
        ("track_history_columns and track_history_except_columns",),
        materialized="cdc_scd2",
    ),
    "scd2_tracked_unknown": Case(
        KEY + "track_history_columns=['colour']",
        ("track_history_columns", "names 'colour'"),
        materialized="cdc_scd2",
    ),
    "scd2_tracked_key": Case(
        KEY + "track_history_except_columns=['id']",
        ("track_history_except_columns", "names 'id'", "key columns"),
        materialized="cdc_scd2",
    ),
    "scd2_tracked_nothing": Case(
        KEY + "track_history_columns=[]", ("track_history_columns", "is empty"), materialized="cdc_scd2"
    ),
    "scd2_delete_handling": Case(
        KEY + "delete_handling='remove'",
        ("delete_handling='remove'", "a cdc_scd1 value"),
        materialized="cdc_scd2",
    ),
    "scd2_reserved_column": Case(
        KEY,
        ("column '_cdc_changes'", "keeps for its own columns"),
        materialized="cdc_scd2",
        columns=(("id", "int"), ("_cdc_changes", "string")),
    ),
    # Another model named like one of the target's hidden tables (CLASHING, a plain view).
    "hidden_name_taken": Case(
        KEY, ("hidden tables named 'hidden_name_taken__cdc_*'", "'hidden_name_taken__cdc_next'")
    ),
    # Only visible against the change images (columns='*': the images decide the columns).
    "key_absent_from_images": Case(
        "unique_key='sku', columns='*'",
        ("unique_key column 'sku'", "nor carried by the change images"),
        source_table="inventory.other",
    ),
    "partition_absent_from_images": Case(
        KEY + "columns='*', partition_by='colour'", ("partition_by column 'colour'", "change images")
    ),
}
GOOD = "good_products"
# Set on the physical table (a version table on parquet).
GOOD_PROPERTIES = "tblproperties={'team.owner': 'analytics', 'team.reviewed': True}, "
# No unique_key: the source table's configured primary_key is the target's key. Columns declared
# without a data_type: typed by the envelope (Debezium's schema block).
GOOD_TABLE_KEY = "good_products_table_key"
# A data_type a YAML flow mapping cut at its comma: the on-run-start hook fails the whole invocation,
# so it is left out of the run of every other model and run alone.
BAD_DATA_TYPE = "bad_data_type"
# Not a CDC target: a view named like a hidden table of the hidden_name_taken target. It builds; the
# target fails, so never replaces it.
CLASHING = "hidden_name_taken__cdc_next"


def model_sql(case: Case) -> str:
    fmt = "" if "cdc_format" in case.settings or case is CASES["no_cdc_format"] else "cdc_format='debezium', "
    settings = f"materialized='{case.materialized}', source_table='{case.source_table}', {fmt}{case.settings}"
    return f"{{{{ config({settings.rstrip(', ')}) }}}}\nselect * from `{SCHEMA}`.cdc_changes\n"


def yml_columns(columns: tuple[tuple[str, str | None], ...]) -> str:
    if not columns:
        return ""
    lines = [f"      - {{name: {c}{', data_type: ' + t if t else ''}}}" for c, t in columns]
    return "    columns:\n" + "\n".join(lines) + "\n"


def project_vars(formats: dict[str, dict[str, object]] | None = None) -> dict[str, object]:
    """var('spark_cdc') of the throwaway project: Debezium and (so that cdc_format is required)
    Aurora DSQL enabled."""
    enabled = {"debezium", "aurora_dsql"}
    default = {f: {"enabled": f in enabled, "relation": f"{SCHEMA}_raw.{f}"} for f in FORMATS}
    return {"formats": formats or default, "tables": {"inventory.products": {"primary_key": ["id"]}}}


@dataclass
class Errors:
    side: DbtProject
    #: model -> (status, message) of the one `dbt run` over every model.
    messages: dict[str, tuple[str, str]]


@pytest.fixture(scope="module")
def errors(project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Errors]:
    path = tmp_path_factory.mktemp("config_errors")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARK_CDC_SCHEMA", SCHEMA)
        env.setenv("SPARK_CDC_IT_FORMATS", "debezium")
        fresh_landing(project.spark, SCHEMA)
        corpus = read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))
        land_messages(project.spark, f"{SCHEMA}_raw", "debezium", corpus)
        project.dbt("run", "--select", "+cdc_changes")

        (path / "models").mkdir()
        (path / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
        (path / "dbt_project.yml").write_text(
            "name: spark_cdc_config_errors\nversion: '0.1.0'\nconfig-version: 2\n"
            "profile: spark_cdc_integration_tests\n"
            f"vars: {{spark_cdc: {json.dumps(project_vars())}}}\n"
        )
        yml = ["version: 2", "models:"]
        default_columns = tuple(COLUMNS)
        for name, case in CASES.items():
            (path / "models" / f"{name}.sql").write_text(model_sql(case))
            columns = default_columns if case.columns is None else case.columns
            yml.append(f"  - name: {name}\n" + yml_columns(columns))
        (path / "models" / f"{GOOD}.sql").write_text(model_sql(Case(KEY + GOOD_PROPERTIES, ())))
        yml.append(f"  - name: {GOOD}\n" + yml_columns(default_columns))
        (path / "models" / f"{GOOD_TABLE_KEY}.sql").write_text(model_sql(Case("", ())))
        yml.append(
            f"  - name: {GOOD_TABLE_KEY}\n" + yml_columns((("id", None), ("name", None), ("weight", None)))
        )
        (path / "models" / f"{BAD_DATA_TYPE}.sql").write_text(model_sql(Case(KEY, ())))
        # What YAML makes of {name: weight, data_type: decimal(28,6)}: data_type 'decimal(28'.
        yml.append(
            f"  - name: {BAD_DATA_TYPE}\n    columns:\n      - {{name: id, data_type: int}}\n"
            "      - {name: weight, data_type: decimal(28,6)}\n"
        )
        (path / "models" / f"{CLASHING}.sql").write_text("select 1 as mine\n")
        (path / "models" / "models.yml").write_text("\n".join(yml) + "\n")
        side = DbtProject(str(path), profiles_dir=project.profiles_dir)
        side.dbt("deps", "--quiet")
        # A table of the model's name that no CDC materialization built.
        project.spark.sql(f"create table `{SCHEMA}`.not_built_by_cdc (id int, name string) using parquet")
        project.spark.sql(f"insert into `{SCHEMA}`.not_built_by_cdc values (1, 'mine')")
        # Only this project's models (the package's staging models are built above, by `project`).
        result = side.dbt(
            "run",
            "--select",
            "package:spark_cdc_config_errors",
            "--exclude",
            BAD_DATA_TYPE,
            expect_success=False,
        )
    results = [r for r in result.result.results if r.node.resource_type == "model"]
    messages = {r.node.name: (str(r.status), str(r.message)) for r in results}
    yield Errors(side, messages)


def test_every_mistake_fails_alone_and_the_correct_model_builds(project: DbtProject, errors: Errors) -> None:
    messages = errors.messages
    assert set(messages) == {*CASES, GOOD, GOOD_TABLE_KEY, CLASHING}
    assert {name for name, (status, _) in messages.items() if status == "success"} == {
        GOOD,
        GOOD_TABLE_KEY,
        CLASHING,
    }
    assert project.rows(f"select * from `{SCHEMA}`.{CLASHING}") == [{"mine": 1}]
    rows = project.rows(f"select id, name from `{SCHEMA}`.{GOOD} order by id")
    assert len(rows) == 10 and rows[0] == {"id": 101, "name": "scooter"}
    version = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{SCHEMA}`.{GOOD}__cdc_v1")}
    assert (version.get("team.owner"), version.get("team.reviewed")) == ("analytics", "true"), version
    typed = project.rows(f"describe `{SCHEMA}`.{GOOD_TABLE_KEY}")
    assert {r["col_name"]: r["data_type"] for r in typed if not r["col_name"].startswith("_cdc_")} == {
        "id": "int",
        "name": "string",
        "weight": "double",
    }
    assert project.rows(f"select id, weight from `{SCHEMA}`.{GOOD_TABLE_KEY} where id = 101") == [
        {"id": 101, "weight": 3.14}
    ]


@pytest.mark.parametrize("name", list(CASES))
def test_mistake_is_named_with_its_fix_before_anything_is_written(
    project: DbtProject, errors: Errors, name: str
) -> None:
    status, message = errors.messages[name]
    assert status == "error", (name, message)
    assert message.count("spark_cdc:") == 1 and f"'{name}'" in message and "Fix:" in message, message
    for part in CASES[name].expect:
        assert part in message, (part, message)
    written = [t["tableName"] for t in project.rows(f"show tables in `{SCHEMA}`")]
    if name == "not_built_by_cdc":
        assert project.rows(f"select * from `{SCHEMA}`.{name}") == [{"id": 1, "name": "mine"}]
        written.remove(name)
    if name == "hidden_name_taken":
        written.remove(CLASHING)
    # Nothing of the model: no target, no version or state table. (Mistakes only visible against
    # the change images leave the view over the model's SQL, `<model>__cdc_input`: it holds no data;
    # the on-run-start hook creates every CDC model's empty `<model>__cdc_rejected` table.)
    kept = (f"{name}__cdc_input", f"{name}__cdc_rejected")
    assert not [t for t in written if t == name or (t.startswith(f"{name}__") and t not in kept)]
    if f"{name}__cdc_rejected" in written:
        assert project.rows(f"select count(*) as n from `{SCHEMA}`.`{name}__cdc_rejected`") == [{"n": 0}]


def test_a_data_type_cut_by_yaml_fails_before_anything_runs(project: DbtProject, errors: Errors) -> None:
    """The package's on-run-start hook checks every selected target's declared types first: the run
    stops before any model, naming the model, the column and the fix (quote the type)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARK_CDC_SCHEMA", SCHEMA)
        result = errors.side.dbt("run", "--select", BAD_DATA_TYPE, expect_success=False)
    message = str(result.exception) + "".join(
        str(r.message) for r in getattr(result.result, "results", []) or []
    )
    for part in (
        f"model '{BAD_DATA_TYPE}'",
        "column 'weight'",
        "'decimal(28'",
        "Fix:",
        'data_type: "decimal(28,6)"',
    ):
        assert part in message, (part, message)
    written = [t["tableName"] for t in project.rows(f"show tables in `{SCHEMA}`")]
    assert not [t for t in written if t.startswith(BAD_DATA_TYPE)]


# Mistakes in var('spark_cdc'): the project fails to parse, naming the key and the fix.
VAR_CASES: dict[str, tuple[dict[str, object] | str, tuple[str, ...]]] = {
    "var_not_a_mapping": ("debezium", ("var 'spark_cdc' must be a mapping", "got: debezium")),
    "unknown_format": (
        {**project_vars(), "formats": {"debezum": {"enabled": True}}},
        ("unknown format 'formats.debezum'", "debezium, aurora_dsql", "Fix:"),
    ),
    "unknown_format_option": (
        project_vars({"debezium": {"enabled": True, "relation": "raw.d", "order_colum": "offset"}}),
        ("unknown option 'formats.debezium.order_colum'", "order_column", "Fix:"),
    ),
    "unknown_top_level_option": (
        {**project_vars(), "tabels": {}},
        ("unknown option 'tabels'", "tables", "Fix:"),
    ),
    "unknown_table_option": (
        {**project_vars(), "tables": {"inventory.products": {"primary_keys": ["id"]}}},
        ("unknown option 'tables.inventory.products.primary_keys'", "primary_key", "Fix:"),
    ),
    "unknown_contracts_option": (
        {**project_vars(), "contracts": {"quarantine_severity_": "error"}},
        ("unknown option 'contracts.quarantine_severity_'", "quarantine_severity", "Fix:"),
    ),
    "enabled_without_relation": (
        project_vars({"debezium": {"enabled": True}}),
        ("format 'debezium' is enabled but has no raw relation", "formats.debezium.source"),
    ),
    "source_not_a_pair": (
        project_vars({"debezium": {"enabled": True, "source": ["raw"]}}),
        ("formats.debezium.source must be [source_name, table_name]", "Fix"),
    ),
    "relation_not_schema_table": (
        project_vars({"debezium": {"enabled": True, "relation": "a.b.c"}}),
        ("formats.debezium.relation must be 'schema.table'", "Fix"),
    ),
    "ydb_without_source_table": (
        project_vars({"ydb": {"enabled": True, "relation": "raw.y"}}),
        ("formats.ydb.source_table is not set", "model 'stg_cdc__ydb'", "Fix:"),
    ),
    "ydb_key_listed_twice": (
        {
            "formats": {"ydb": {"enabled": True, "relation": "raw.y", "source_table": "/Root/t"}},
            "tables": {"/Root/t": {"primary_key": ["id", "id"]}},
        },
        ("tables['/Root/t'].primary_key lists a column twice", "Fix:"),
    ),
    "ydb_column_types_not_a_mapping": (
        {
            "formats": {"ydb": {"enabled": True, "relation": "raw.y", "source_table": "/Root/t"}},
            "tables": {"/Root/t": {"primary_key": ["id"], "ydb_column_types": ["Datetime64"]}},
        },
        ("ydb_column_types must map column names to YDB type names", "Fix:"),
    ),
    "cockroachdb_unknown_envelope": (
        project_vars({"cockroachdb": {"enabled": True, "relation": "raw.c", "envelope": "diff"}}),
        ("formats.cockroachdb.envelope is 'diff'", "stg_cdc__cockroachdb", "Fix:"),
    ),
    "cockroachdb_unknown_order_by": (
        project_vars({"cockroachdb": {"enabled": True, "relation": "raw.c", "order_by": "mvcc"}}),
        ("formats.cockroachdb.order_by is 'mvcc'", "Fix:"),
    ),
}


@pytest.mark.parametrize("name", list(VAR_CASES))
def test_var_mistake_fails_the_parse_naming_the_key(errors: Errors, tmp_path: Path, name: str) -> None:
    value, expect = VAR_CASES[name]
    result = errors.side.dbt(
        "parse",
        "--vars",
        json.dumps({"spark_cdc": value}),
        "--target-path",
        str(tmp_path / "target"),
        expect_success=False,
    )
    message = str(result.exception)
    assert "spark_cdc:" in message, message
    for part in expect:
        assert part in message, (part, message)


def test_missing_order_column_is_named_when_the_staging_model_compiles(
    project: DbtProject, errors: Errors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_CDC_SCHEMA", SCHEMA)
    formats = project_vars()["formats"]
    formats["debezium"]["order_column"] = "kafka_offset"  # type: ignore[index]
    result = errors.side.dbt(
        "compile",
        "--select",
        "stg_cdc__debezium",
        "--vars",
        json.dumps({"spark_cdc": project_vars(formats)}),  # type: ignore[arg-type]
        "--target-path",
        str(tmp_path / "target"),
        expect_success=False,
    )
    messages = [str(r.message) for r in result.result.results] if result.result else [str(result.exception)]
    message = " ".join(messages)
    assert "order column 'kafka_offset' not found in raw relation" in message, message
    assert f"{SCHEMA}_raw" in message, message
    assert "Fix: set var('spark_cdc').formats.debezium.order_column" in message, message
