"""Apply rules beyond the randomized reference suite, end to end through `dbt build`: sequence
conflicts (same key and seq, different change) within and across runs, invalid target input (null
key or seq), and a partial image arriving before an older full image. See docs/apply_semantics.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.reference import Event
from tests.helpers.render import Debezium

pytestmark = pytest.mark.integration

# The Debezium SCD1 target of the randomized reference suite (tests/integration/
# test_apply_reference_formats.py), source table reference.items; messages without source.sequence.
TARGET = "reference_debezium_scd1"
DEBEZIUM = Debezium(table="items", with_sequence=False, tombstone_rate=0)
# Key 1 back at its insert, key 3 back from its delete, key 4 never touched.
REBUILT = {1: ("first", "insert"), 3: ("three", "insert"), 4: ("untouched", "insert")}
FINAL = {**REBUILT, 1: ("later", "update")}
BUILD = ("build", "--select", f"+{TARGET}", "+cdc_quarantine", "+cdc_skipped", "cdc_reason_codes")


@pytest.fixture(autouse=True)
def reference_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_REFERENCE", "1")  # enables the reference suite's targets


def row(key: int, name: str, qty: int = 1) -> dict[str, Any]:
    return {"id": key, "name": name, "qty": qty, "price": 1.5, "active": True, "note": "n"}


def land(project: DbtProject, schema: str, *events: Event) -> None:
    land_messages(project.spark, f"{schema}_raw", "debezium", [m for e in events for m in DEBEZIUM.render(e)])


def state(project: DbtProject, schema: str, model: str = TARGET) -> dict[int, tuple[str, str]]:
    rows = project.rows(f"select id, name, _cdc_op from `{schema}`.{model}")
    return {r["id"]: (r["name"], r["_cdc_op"]) for r in rows}


def conflicts(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    return project.rows(
        f"select reason_code, reason_detail, raw_value from `{schema}`.cdc_quarantine order by raw_value"
    )


def version(project: DbtProject, schema: str) -> str:
    props = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{TARGET}")}
    return props["spark_cdc.version"]


def test_conflict_in_one_batch_applies_neither_change(project: DbtProject, schema: str) -> None:
    land(
        project,
        schema,
        Event("insert", 10, 1, after=row(1, "first")),
        Event("update", 20, 1, after=row(1, "a")),
        Event("update", 20, 1, after=row(1, "b")),
        Event("update", 20, 1, after=row(1, "b")),  # an exact redelivery of one side: quarantined too
        # The same LSN on another key (a primary-key change) is no conflict.
        Event("insert", 20, 2, after=row(2, "other")),
    )
    project.dbt(*BUILD)
    assert state(project, schema) == {1: ("first", "insert"), 2: ("other", "insert")}
    quarantined = conflicts(project, schema)
    assert [q["reason_code"] for q in quarantined] == ["sequence_conflict"] * 3
    assert [json.loads(q["raw_value"])["after"]["name"] for q in quarantined] == ["a", "b", "b"]
    assert (
        '"s2":20' in quarantined[0]["reason_detail"]
        and "2 different changes" in quarantined[0]["reason_detail"]
    )
    changes = project.rows(f"select key from `{schema}`.cdc_changes")
    assert sorted(json.loads(c["key"])["id"] for c in changes) == ["1", "2"]


def test_one_change_with_and_without_its_before_image_is_a_redelivery(
    project: DbtProject, schema: str
) -> None:
    # The same change as two connector configurations send it: no conflict, applied once.
    land(
        project,
        schema,
        Event("insert", 10, 1, after=row(1, "first")),
        Event("update", 20, 1, after=row(1, "a"), before=row(1, "first")),
        Event("update", 20, 1, after=row(1, "a")),
        # Re-serialized by another converter: same image, other key order.
        Event("update", 20, 1, after=dict(reversed(row(1, "a").items()))),
        Event("insert", 11, 2, after=row(2, "two")),
        Event("delete", 21, 2, before=row(2, "two")),
        Event("delete", 21, 2, before={"id": 2}),
    )
    project.dbt(*BUILD)
    assert state(project, schema) == {1: ("a", "update")}
    assert conflicts(project, schema) == []


def test_conflict_across_runs_takes_back_the_applied_change(project: DbtProject, schema: str) -> None:
    # Run 1: key 1 is updated by A, key 3 deleted by A'; both applied.
    land(
        project,
        schema,
        Event("insert", 10, 1, after=row(1, "first")),
        Event("update", 20, 1, after=row(1, "a")),
        Event("insert", 11, 3, after=row(3, "three")),
        Event("delete", 21, 3, before={"id": 3}),
        Event("insert", 12, 4, after=row(4, "untouched")),
    )
    project.dbt(*BUILD)
    assert state(project, schema) == {1: ("a", "update"), 4: ("untouched", "insert")}

    # Run 2: rivals with the same key and LSN arrive. Neither side may stand: both keys are rebuilt
    # from their remaining history, as if the conflicting changes had never been delivered.
    land(
        project,
        schema,
        Event("update", 20, 1, after=row(1, "b")),
        Event("update", 21, 3, after=row(3, "rival")),
    )
    project.dbt(*BUILD)
    assert state(project, schema) == {
        1: ("first", "insert"),
        3: ("three", "insert"),
        4: ("untouched", "insert"),
    }
    assert len(conflicts(project, schema)) == 4

    # Run 3: a third change joins a known conflict, and a newer change of key 1 applies normally.
    land(
        project,
        schema,
        Event("update", 20, 1, after=row(1, "c")),
        Event("update", 30, 1, after=row(1, "later")),
    )
    project.dbt(*BUILD)
    assert state(project, schema) == {
        1: ("later", "update"),
        3: ("three", "insert"),
        4: ("untouched", "insert"),
    }
    assert len(conflicts(project, schema)) == 5
    recorded = project.rows(
        f"select count(*) as n from `{schema}`.cdc_sequence_conflicts where row_kind = 'conflict'"
    )
    assert recorded[0]["n"] == 5  # each conflicting change recorded once, however many runs saw it

    # Nothing new: the target is not rewritten.
    before = version(project, schema)
    project.dbt(*BUILD)
    assert version(project, schema) == before

    # A full refresh rebuilds the same state from the (conflict-free) stream.
    project.dbt(*BUILD, "--full-refresh")
    assert state(project, schema) == {
        1: ("later", "update"),
        3: ("three", "insert"),
        4: ("untouched", "insert"),
    }


@pytest.mark.parametrize(("mode", "what"), [("null_key", "null key"), ("null_seq", "null seq")])
def test_null_key_or_seq_in_target_input_fails_the_run_and_writes_nothing(
    project: DbtProject, schema: str, mode: str, what: str
) -> None:
    model = "apply_invalid_input"
    build = (*BUILD, f"+{model}", "--vars", json.dumps({"apply_invalid_input": mode}))
    land(project, schema, Event("insert", 10, 1, after=row(1, "one")))
    project.dbt(*build)
    assert state(project, schema, model) == {1: ("one", "insert")}

    land(
        project,
        schema,
        Event("insert", 11, 2, after=row(2, "two")),
        Event("update", 12, 1, after=row(1, "uno")),
    )
    result = project.dbt(*build, expect_success=False)
    messages = [str(r.message) for r in result.result.results if r.status == "error"]
    assert len(messages) == 1
    assert (
        f"model '{model}' selected a change with a {what} for source table 'reference.items'" in messages[0]
    )
    assert "nothing was written" in messages[0] and "Fix:" in messages[0]
    assert state(project, schema, model) == {1: ("one", "insert")}

    # Once the model is fixed, the next run applies the whole batch.
    project.dbt(*BUILD, f"+{model}", "--vars", json.dumps({"apply_invalid_input": "valid"}))
    assert state(project, schema, model) == {1: ("uno", "update"), 2: ("two", "insert")}


def test_partial_image_before_an_older_full_image_converges(project: DbtProject, schema: str) -> None:
    first = {**row(1, "first"), "note": "note-1"}
    second = {**row(1, "second"), "note": "note-2"}
    partial = row(1, "third")  # sent with the TOAST placeholder in place of note
    land(
        project,
        schema,
        Event("insert", 10, 1, after=first),
        Event("update", 30, 1, after=partial, present=frozenset(partial) - {"note"}),
    )
    project.dbt(*BUILD)
    land(project, schema, Event("update", 20, 1, after=second))
    project.dbt(*BUILD)
    notes = project.rows(f"select note from `{schema}`.{TARGET}")
    assert notes == [{"note": "note-2"}]  # what applying 10, 20, 30 in order gives
