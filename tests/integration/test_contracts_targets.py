"""Data contracts of CDC targets (macros/tests/scd1_*.sql, scd2_*.sql; docs/contracts/targets.md).

Passing fixtures are real targets built from landed Debezium messages (the flink corpus plus late,
redelivered, deleted, re-inserted and truncated changes, over several runs); failing fixtures are
hand-made tables shaped like targets, each broken in one way, plus one real target corrupted by
hand. Every test node's status and failure count is asserted, and the failing rows where practical."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages
from tests.helpers.results import star_except

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[2] / "integration_tests" / "data" / "debezium_postgres" / "flink"
REAL_TARGETS = (
    "+products",
    "+products_history",
    "products_weight_history",
    "+contracts_targets_products_by_lsn",
    # The package's reason-code tests need its seed, which this module does not build.
    "--exclude",
    "test_name:cdc_reason_codes_valid",
)
TARGET_TESTS = {
    "products": {"scd1_one_row_per_key", "scd1_no_deleted_rows", "scd1_latest_sequence"},
    "contracts_targets_products_by_lsn": {
        "scd1_one_row_per_key",
        "scd1_no_deleted_rows",
        "scd1_latest_sequence",
    },
    "products_history": {
        "scd2_one_current_version",
        "scd2_contiguous_versions",
        "scd2_valid_range",
        "scd2_deleted_versions_closed",
        "scd2_current_matches_scd1",
    },
}
TARGET_TESTS["products_weight_history"] = TARGET_TESTS["products_history"]
CONTRACT_TESTS = set().union(*TARGET_TESTS.values())


@pytest.fixture(autouse=True)
def contract_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_CONTRACTS", "1")
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium")


def corpus(name: str) -> list[str]:
    return read_jsonl_messages(str(CORPUS / f"debezium-postgres-data-{name}.txt"))


def ts_ms(lsn: int) -> int:
    """Commit time of a made-up change at `lsn`, in LSN order with the corpus (snapshot at 34078720,
    changes from 34131104 to 34133800): commit times of one source follow its commit order."""
    if lsn < 34131104:
        return 1596005000000 + lsn - 34078720
    return 1596010988168 + lsn - 34133800


def envelope(op: str, lsn: int, after: dict[str, Any] | None, before: dict[str, Any] | None = None) -> str:
    """A Debezium change of inventory.products committed at LSN `lsn`."""
    source = {"connector": "postgresql", "ts_ms": ts_ms(lsn), "schema": "inventory"}
    source |= {"table": "products", "txId": 700, "lsn": lsn}
    return json.dumps({"before": before, "after": after, "source": source, "op": op, "ts_ms": ts_ms(lsn)})


def truncate(lsn: int) -> str:
    source = {"connector": "postgresql", "ts_ms": ts_ms(lsn), "schema": "inventory"}
    source |= {"table": "products", "txId": 800, "lsn": lsn}
    return json.dumps({"source": source, "op": "t", "ts_ms": ts_ms(lsn)})


def product(pid: int, name: str, weight: float) -> dict[str, Any]:
    return {"id": pid, "name": name, "description": f"{name} ({pid})", "weight": weight}


def results(run: Any) -> dict[str, Any]:
    """Test results of a dbt invocation by '<test>:<model>' (or the test's own name when it has one)."""
    found = {}
    for r in run.result.results:
        node = r.node
        if node.resource_type != "test":
            continue
        metadata = getattr(node, "test_metadata", None)
        if metadata is None or metadata.name not in CONTRACT_TESTS:
            continue
        model = (node.attached_node or "").split(".")[-1]
        key = node.name if node.name.startswith("contracts_targets_") else f"{metadata.name}:{model}"
        assert key not in found, key
        found[key] = r
    return found


def status(r: Any) -> tuple[str, int | None]:
    return str(getattr(r.status, "value", r.status)), r.failures


def failing_rows(project: DbtProject, r: Any) -> list[dict[str, Any]]:
    return project.rows(r.node.compiled_code)


def assert_all_pass(found: dict[str, Any], models: dict[str, set[str]]) -> None:
    expected = {f"{test}:{model}" for model, tests in models.items() for test in tests}
    assert expected <= found.keys(), expected - found.keys()
    bad = {k: (status(found[k]), found[k].message) for k in expected if status(found[k]) != ("pass", 0)}
    assert not bad, bad


def test_real_targets_pass_and_a_hand_corrupted_target_fails(project: DbtProject, schema: str) -> None:
    raw = f"{schema}_raw"
    # The corpus, then redeliveries, a late update older than the applied one, a delete, a key
    # deleted and re-inserted, a truncate, a key inserted and updated after it and a late insert
    # before it. (`make demo` tests the targets built from the corpus alone.)
    late = [
        *corpus("schema-include")[10:13],
        envelope("u", 34100000, product(106, "hammer", 1.5)),
        envelope("d", 34300000, None, product(104, "hammer", 0.75)),
        envelope("c", 34300100, product(300, "kite", 0.3)),
        envelope("u", 34300200, product(300, "kite", 0.4)),
        envelope("d", 34300300, None, product(300, "kite", 0.4)),
        envelope("c", 34300400, product(300, "kite", 0.5)),
        truncate(34400000),
        envelope("c", 34400100, product(301, "drone", 1.1)),
        envelope("u", 34400200, product(301, "drone", 1.2)),
        envelope("c", 34350000, product(302, "late", 2.0)),
    ]
    land_messages(project.spark, raw, "debezium", corpus("schema-include"))
    land_messages(project.spark, raw, "debezium", late)
    assert_all_pass(results(project.dbt("build", "--select", *REAL_TARGETS)), TARGET_TESTS)
    flagged = project.rows(
        f"select id, _cdc_op, _cdc_deleted from `{schema}`.contracts_targets_products_by_lsn"
    )
    assert {(r["id"], r["_cdc_op"], r["_cdc_deleted"]) for r in flagged if r["id"] in (104, 301, 302)} == {
        (104, "delete", True),
        (301, "update", False),
        (302, "truncate", True),  # inserted before the truncate
    }

    # A later delete is staged but not applied: the targets' consumed_through watermark keeps it out of the
    # comparisons (else 301 would be a deleted key still visible).
    land_messages(project.spark, raw, "debezium", [envelope("d", 34500000, None, product(301, "drone", 1.2))])
    project.dbt("run", "--select", "stg_cdc__debezium")

    # Corrupt the real SCD1 target: put 301's older insert back into its physical table.
    version = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.products")}
    physical = f"`{schema}`.products__cdc_v{version['spark_cdc.version']}"
    project.spark.sql(
        f"""create table `{schema}`.corrupted using parquet as
        select {star_except(project, physical, "weight", "_cdc_op", "_cdc_seq")},
          case when id = 301 then 1.1d else weight end as weight,
          case when id = 301 then 'insert' else _cdc_op end as _cdc_op,
          case when id = 301 then named_struct('s1', cast(34400100 as decimal(38,0)),
                                               's2', cast(34400100 as decimal(38,0)),
                                               's3', cast(null as decimal(38,0)))
               else _cdc_seq end as _cdc_seq
        from {physical}"""
    )
    columns = [
        r["col_name"] for r in project.rows(f"describe {physical}") if not r["col_name"].startswith("#")
    ]
    project.spark.sql(
        f"insert overwrite table {physical} select {', '.join(columns)} from `{schema}`.corrupted"
    )
    # Eager selection: the reconciliation tests of the history tables have products as a parent.
    run = project.dbt("test", "--select", "products", "--indirect-selection", "eager", expect_success=False)
    found = results(run)
    assert status(found["scd1_latest_sequence:products"]) == ("fail", 1)
    [row] = failing_rows(project, found["scd1_latest_sequence:products"])
    assert (row["id"], row["problem"], row["stored_seq"]["s1"], row["expected_seq"]["s1"]) == (
        301,
        "stale",
        34400100,
        34400200,
    )
    assert status(found["scd1_one_row_per_key:products"]) == ("pass", 0)
    assert status(found["scd1_no_deleted_rows:products"]) == ("pass", 0)  # the staged delete is not consumed
    # The history tables still hold 301's update: their current versions no longer match products.
    for history in ("products_history", "products_weight_history"):
        check = found[f"scd2_current_matches_scd1:{history}"]
        assert status(check) == ("fail", 1)
        assert [(r["id"], r["problem"], r["differing_columns"]) for r in failing_rows(project, check)] == [
            (301, "differs", ["weight"])
        ]


# (test:model or test name) -> expected failures; the failing rows' distinguishing columns.
BROKEN: dict[str, tuple[int, list[tuple[Any, ...]]]] = {
    "scd1_one_row_per_key:contracts_targets_scd1_duplicate_key": (1, [(1, 2)]),
    "scd1_one_row_per_key:contracts_targets_scd1_null_key": (1, [(None, 1)]),
    "scd1_no_deleted_rows:contracts_targets_scd1_deleted_visible": (
        1,
        [(2, "deleted_key_visible", "delete")],
    ),
    "scd1_no_deleted_rows:contracts_targets_scd1_flag_unflagged": (
        1,
        [(2, "deleted_key_not_flagged", "delete")],
    ),
    "scd1_no_deleted_rows:contracts_targets_scd1_truncated_visible": (
        1,
        [(1, "deleted_key_visible", "truncate")],
    ),
    "scd1_latest_sequence:contracts_targets_scd1_stale": (1, [(1, "stale")]),
    "scd1_latest_sequence:contracts_targets_scd1_lost_key": (1, [(4, "missing")]),
    "scd2_one_current_version:contracts_targets_scd2_two_current": (1, [(1, 2)]),
    "scd2_contiguous_versions:contracts_targets_scd2_overlap": (1, [(1, "overlap")]),
    "scd2_contiguous_versions:contracts_targets_scd2_gap": (1, [(4, "gap")]),
    "scd2_valid_range:contracts_targets_scd2_empty_range": (
        1,
        [(3, "valid_from_seq_not_before_valid_to_seq")],
    ),
    "scd2_deleted_versions_closed:contracts_targets_scd2_deleted_current": (1, [(2, "delete")]),
    "scd2_current_matches_scd1:contracts_targets_scd2_current_differs": (1, [(3, "differs", ["name"])]),
}
PASSING = {
    "scd1_one_row_per_key:contracts_targets_scd1_ok",
    "scd1_no_deleted_rows:contracts_targets_scd1_ok",
    "scd1_latest_sequence:contracts_targets_scd1_ok",
    "scd2_one_current_version:contracts_targets_scd2_ok",
    "scd2_contiguous_versions:contracts_targets_scd2_ok",
    "scd2_valid_range:contracts_targets_scd2_ok",
    "scd2_deleted_versions_closed:contracts_targets_scd2_ok",
    "scd2_current_matches_scd1:contracts_targets_scd2_ok",
    "contracts_targets_scd1_truncated_visible_ignoring_truncates",
    "contracts_targets_scd2_gap_allowed_when_invalidating",
}


def distinguishing(key: str, row: dict[str, Any]) -> tuple[Any, ...]:
    test = key.split(":")[0]
    if test == "scd1_one_row_per_key":
        return (row["id"], row["row_count"])
    if test == "scd2_one_current_version":
        return (row["id"], row["current_versions"])
    if test == "scd1_no_deleted_rows":
        return (row["id"], row["problem"], row["last_change_op"])
    if test == "scd2_deleted_versions_closed":
        return (row["id"], row["last_change_op"])
    if test == "scd2_current_matches_scd1":
        return (row["id"], row["problem"], row["differing_columns"])
    return (row["id"], row["problem"])


def test_broken_fixtures_fail_exactly_and_correct_ones_pass(project: DbtProject, schema: str) -> None:
    run = project.dbt(
        "build", "--select", "path:models/contracts/targets", "--exclude", "contracts_targets_products_input+"
    )
    found = results(run)
    assert found.keys() == BROKEN.keys() | PASSING, found.keys() ^ (BROKEN.keys() | PASSING)
    for key in PASSING:
        assert status(found[key]) == ("pass", 0), (key, found[key].message)
    for key, (failures, rows) in BROKEN.items():
        # error_if "=0", warn_if ">0": a test that finds failing rows warns with their count.
        assert status(found[key]) == ("warn", failures), (key, status(found[key]), found[key].message)
        assert sorted(distinguishing(key, r) for r in failing_rows(project, found[key])) == rows, key


def test_misuse_fails_to_compile_with_a_clear_message(
    project: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_CONTRACTS_MISUSE", "1")

    def compile_error(test: str) -> str:
        run = project.dbt(
            "compile", "--select", f"contracts_targets_misuse,test_name:{test}", expect_success=False
        )
        return str(run.exception)

    wrong_target = compile_error("scd2_valid_range")
    assert "test scd2_valid_range is attached to model 'contracts_targets_misuse'" in wrong_target
    assert "whose materialized is 'cdc_scd1'; scd2_valid_range checks cdc_scd2 targets only" in wrong_target
    assert "Fix: attach the scd1_* contract tests to this model instead" in wrong_target
    sequence_by = compile_error("scd1_latest_sequence")
    assert "test scd1_latest_sequence on model 'contracts_targets_misuse'" in sequence_by
    assert "orders changes by sequence_by (change_lsn)" in sequence_by
    assert "Fix: pass the test's argument changes=" in sequence_by
