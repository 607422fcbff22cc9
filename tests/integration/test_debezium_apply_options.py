"""The AUTO CDC options of the CDC targets, end to end on the Debezium flink corpus: sequence_by
(order by the model's own columns, ties of different changes refused), truncate_handling and the
metadata column names of cdc_scd1. One staging build feeds a throwaway project of option models, whose
targets are Delta or Iceberg tables in a lakehouse lane (SPARK_CDC_TABLE_FORMAT=delta|iceberg)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpora.debezium import plain_envelope
from tests.helpers.lakehouse import target_file_format
from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages
from tests.helpers.projects import side_project

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[2] / "integration_tests" / "data" / "debezium_postgres" / "flink"
COLUMNS = [("id", "int"), ("name", "string"), ("description", "string"), ("weight", "double")]
TRUNCATE_LSN = 34400000

#: The state as of each product's *first* change (what ordering by the reversed LSN gives).
FIRST_CHANGES = [
    (101, "scooter", 3.14),
    (102, "car battery", 8.1),
    (103, "12-pack drill bits", 0.8),
    (104, "hammer", 0.75),
    (105, "hammer", 0.875),
    (106, "hammer", 1.0),
    (107, "rocks", 5.3),
    (108, "jacket", 0.1),
    (109, "spare tire", 22.2),
    (110, "jacket", 0.2),
    (111, "scooter", 5.18),
]


def truncate_message() -> str:
    source = {"version": "1.2.1.Final", "connector": "postgresql", "ts_ms": 1596011000000}
    source |= {"schema": "inventory", "table": "products", "txId": 800, "lsn": TRUNCATE_LSN}
    return json.dumps({"source": source, "op": "t", "ts_ms": 1596011000001})


def model(schema: str, settings: str, select: str = "*") -> str:
    return (
        f"{{{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products', "
        f"cdc_format='debezium', file_format='{target_file_format()}', {settings}) }}}}\n"
        f"select {select} from `{schema}`.cdc_changes\n"
    )


def yml(models: dict[str, str]) -> str:
    columns = "".join(f"      - {{name: {c}, data_type: {t}}}\n" for c, t in COLUMNS)
    return "version: 2\nmodels:\n" + "".join(f"  - name: {m}\n    columns:\n{columns}" for m in models)


@pytest.fixture
def options(project: DbtProject, schema: str, tmp_path: Path) -> DbtProject:
    corpus = read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))
    land_messages(project.spark, f"{schema}_raw", "debezium", [*corpus, truncate_message()])
    project.dbt("run", "--select", "+cdc_changes")
    reversed_lsn = "*, cast(-seq.s2 as bigint) as reversed_lsn"
    files = {
        "opt_meta.sql": model(
            schema,
            "delete_handling='flag', truncate_handling='ignore', meta_column_names={'op': 'change_op', "
            "'seq': 'change_seq', 'commit_ts': 'committed_at', 'applied_at': 'applied_at', "
            "'deleted': 'is_gone'}",
        ),
        "opt_truncated.sql": model(schema, "delete_handling='flag'"),
        "opt_first.sql": model(
            schema, "sequence_by='reversed_lsn', truncate_handling='ignore'", reversed_lsn
        ),
        "opt_first_history.sql": model(
            schema, "sequence_by=['reversed_lsn'], truncate_handling='ignore'", reversed_lsn
        ).replace("cdc_scd1", "cdc_scd2"),
        "opt_tie.sql": model(schema, "sequence_by='one'", "*, 1 as one"),
        "opt_text_seq.sql": model(schema, "sequence_by='name_seq'", "*, 'x' as name_seq"),
    }
    files["models.yml"] = yml({name.removesuffix(".sql"): "" for name in files})
    return side_project(project, tmp_path, files)


def run(side: DbtProject, tmp_path: Path, *models: str, expect_success: bool = True) -> Any:
    return side.dbt(
        "run", "--select", *models, "--target-path", str(tmp_path / "target"), expect_success=expect_success
    )


def test_meta_column_names_and_truncate_handling(
    project: DbtProject, schema: str, options: DbtProject, tmp_path: Path
) -> None:
    run(options, tmp_path, "opt_meta", "opt_truncated")
    meta = project.rows(f"select * from `{schema}`.opt_meta order by id")
    assert list(meta[0]) == [
        "id",
        "name",
        "description",
        "weight",
        "change_op",
        "change_seq",
        "committed_at",
        "applied_at",
        "is_gone",
    ]
    # truncate_handling='ignore': the truncate applies to nothing; the delete of 111 is kept, flagged.
    assert [(r["id"], r["change_op"], r["is_gone"]) for r in meta if r["is_gone"]] == [(111, "delete", True)]
    assert len(meta) == 11
    assert {r["id"]: r["change_seq"]["s2"] for r in meta}[106] == 34131104

    # The default applies it: every row older than the truncate is deleted (flagged).
    truncated = project.rows(f"select id, _cdc_op, _cdc_deleted from `{schema}`.opt_truncated order by id")
    assert len(truncated) == 11
    assert all(r["_cdc_deleted"] for r in truncated)
    assert {r["_cdc_op"] for r in truncated} == {"truncate", "delete"}


def test_sequence_by_orders_by_the_models_columns(
    project: DbtProject, schema: str, options: DbtProject, tmp_path: Path
) -> None:
    run(options, tmp_path, "opt_first", "opt_first_history")
    rows = project.rows(f"select id, name, weight, _cdc_op, _cdc_seq from `{schema}`.opt_first order by id")
    assert [(r["id"], r["name"], r["weight"]) for r in rows] == FIRST_CHANGES
    # _cdc_seq is the sequence the target was ordered by.
    assert {r["id"]: int(r["_cdc_seq"]["s1"]) for r in rows}[111] == -34133072
    assert all(r["_cdc_seq"]["s2"] is None for r in rows)

    # cdc_scd2: history runs backwards, so 111's delete opens no version after its insert: the
    # insert (the last change in this order) is current.
    history = project.rows(
        f"select id, weight, _cdc_is_current, _cdc_is_deleted, _cdc_op from `{schema}`.opt_first_history"
        " where id = 111 order by _cdc_valid_from_seq"
    )
    assert [(r["weight"], r["_cdc_is_current"], r["_cdc_is_deleted"], r["_cdc_op"]) for r in history] == [
        (5.17, False, True, "delete"),
        (5.17, False, False, "update"),
        (5.18, True, False, "insert"),
    ]

    # Nothing new: a re-run leaves both as they are.
    before = project.rows(f"select * from `{schema}`.opt_first order by id")
    run(options, tmp_path, "opt_first")
    assert project.rows(f"select * from `{schema}`.opt_first order by id") == before


def test_sequence_by_ties_and_types_fail_before_writing(
    project: DbtProject, schema: str, options: DbtProject, tmp_path: Path
) -> None:
    result = run(options, tmp_path, "opt_tie", "opt_text_seq", expect_success=False)
    messages = {r.node.name: str(r.message) for r in result.result.results}
    assert (
        "model 'opt_tie' has two different changes of one key with the same sequence_by value"
        in (messages["opt_tie"])
    )
    assert "Fix:" in messages["opt_tie"]
    assert "sequence_by column 'name_seq' of model 'opt_text_seq' is string" in messages["opt_text_seq"]
    tables = {t["tableName"] for t in project.rows(f"show tables in `{schema}`")}
    # The view over the model's SQL and the empty rejects table of the on-run-start hook only.
    kept = ("__cdc_input", "__cdc_rejected")
    assert not {t for t in tables if t.startswith(("opt_tie", "opt_text_seq")) and not t.endswith(kept)}


def test_columns_from_the_images_evolve_without_a_full_refresh(
    project: DbtProject, schema: str, tmp_path: Path
) -> None:
    corpus = read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus)
    project.dbt("run", "--select", "+cdc_changes")
    files = {
        "infer_all.sql": model(schema, "columns='*'"),
        "infer_except.sql": model(schema, "except_columns=['description']"),
        # Partitioned: the parts table gains the new columns too.
        "infer_history.sql": model(schema, "columns='*', partition_by='name'").replace(
            "cdc_scd1", "cdc_scd2"
        ),
        "models.yml": (
            "version: 2\nmodels:\n  - name: infer_all\n    columns:\n"
            "      - {name: weight, data_type: 'decimal(10,3)'}\n      - {name: description}\n"
        ),
    }
    side = side_project(project, tmp_path, files)
    run(side, tmp_path, "infer_all", "infer_except", "infer_history")

    def columns(model: str) -> list[tuple[str, str]]:
        rows = project.rows(f"describe `{schema}`.{model}")
        return [(r["col_name"], r["data_type"]) for r in rows if not r["col_name"].startswith("_cdc")]

    # Declared columns first (their types), then the images' columns in name order, typed by the
    # Debezium schema (int32 -> int, float64 -> double).
    assert columns("infer_all") == [
        ("weight", "decimal(10,3)"),
        ("description", "string"),
        ("id", "int"),
        ("name", "string"),
    ]
    assert columns("infer_except") == [("id", "int"), ("name", "string"), ("weight", "double")]
    assert [c for c, _ in columns("infer_history")] == ["description", "id", "name", "weight"]
    assert project.rows(f"select id, weight from `{schema}`.infer_all where id = 107") == [
        {"id": 107, "weight": Decimal("5.100")}
    ]

    # The source gains a column and stops sending another: the new one appears, typed from its
    # JSON values; the old one stays, null in later changes. No full refresh.
    added = {"id": 300, "name": "kite", "weight": 0.5, "colour": "red", "rating": 4}
    land_messages(project.spark, f"{schema}_raw", "debezium", [plain_envelope("c", 34600000, added)])
    project.dbt("run", "--select", "+cdc_changes")
    run(side, tmp_path, "infer_all", "infer_except", "infer_history")
    assert columns("infer_all")[-2:] == [("colour", "string"), ("rating", "bigint")]
    assert project.rows(
        f"select id, name, description, colour, rating from `{schema}`.infer_all"
        " where id in (107, 300) order by id"
    ) == [
        {"id": 107, "name": "rocks", "description": "box of assorted rocks", "colour": None, "rating": None},
        {"id": 300, "name": "kite", "description": None, "colour": "red", "rating": 4},
    ]
    assert [c for c, _ in columns("infer_except")] == ["id", "name", "weight", "colour", "rating"]
    history = project.rows(
        f"select id, colour from `{schema}`.infer_history where id in (106, 300) order by id"
    )
    assert history == [{"id": 106, "colour": None}, {"id": 106, "colour": None}, {"id": 300, "colour": "red"}]
