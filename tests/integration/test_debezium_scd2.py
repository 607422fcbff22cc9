"""cdc_scd2 end to end through `dbt run`: the Debezium flink corpus into history tables.

Scenarios share builds by using disjoint keys, so the module stays fast; each build is compared
with exact expected versions (values, validity in sequence and commit time, flags, operation)."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpora.debezium import corpus, envelope, product, truncate
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.projects import models_yml, side_project

pytestmark = pytest.mark.integration

RUN = ("run", "--select", "+products_history")
SNAP = 34078720

# One row per version: id, name, description, weight, valid-from LSN, valid-to LSN, current, deleted, op.
Version = tuple[int, str, str | None, float | None, int, int | None, bool, bool, str]
IN_ORDER: list[Version] = [
    (101, "scooter", "Small 2-wheel scooter", 3.14, SNAP, None, True, False, "snapshot"),
    (102, "car battery", "12V car battery", 8.1, SNAP, None, True, False, "snapshot"),
    (
        103,
        "12-pack drill bits",
        "12-pack of drill bits with sizes ranging from #40 to #3",
        0.8,
        SNAP,
        None,
        True,
        False,
        "snapshot",
    ),
    (104, "hammer", "12oz carpenter's hammer", 0.75, SNAP, None, True, False, "snapshot"),
    (105, "hammer", "14oz carpenter's hammer", 0.875, SNAP, None, True, False, "snapshot"),
    (106, "hammer", "16oz carpenter's hammer", 1.0, SNAP, 34131104, False, False, "snapshot"),
    (106, "hammer", "18oz carpenter hammer", 1.0, 34131104, None, True, False, "update"),
    (107, "rocks", "box of assorted rocks", 5.3, SNAP, 34132200, False, False, "snapshot"),
    (107, "rocks", "box of assorted rocks", 5.1, 34132200, None, True, False, "update"),
    (108, "jacket", "water resistent black wind breaker", 0.1, SNAP, None, True, False, "snapshot"),
    (109, "spare tire", "24 inch spare tire", 22.2, SNAP, None, True, False, "snapshot"),
    (110, "jacket", "water resistent white wind breaker", 0.2, 34132560, 34133344, False, False, "insert"),
    (110, "jacket", "new water resistent white wind breaker", 0.5, 34133344, None, True, False, "update"),
    (111, "scooter", "Big 2-wheel scooter ", 5.18, 34133072, 34133584, False, False, "insert"),
    (111, "scooter", "Big 2-wheel scooter ", 5.17, 34133584, 34133800, False, False, "update"),
    (111, "scooter", "Big 2-wheel scooter ", 5.17, 34133800, None, True, True, "delete"),
]


def commit_times() -> dict[tuple[int, int], dt.datetime]:
    """Source commit time of each corpus change by (id, LSN): the snapshot's rows differ by a ms."""
    times = {}
    for line in corpus("schema-exclude"):
        message = json.loads(line)
        pid = (message["after"] or message["before"])["id"]
        ms = message["source"]["ts_ms"]
        times[pid, message["source"]["lsn"]] = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    return times


def ts_ms(lsn: int) -> int:
    return 1596000000000 + lsn


def versions(project: DbtProject, schema: str, model: str = "products_history") -> list[Version]:
    rows = project.rows(f"select * from `{schema}`.{model} order by id, _cdc_valid_from_seq")
    return [
        (
            r["id"],
            r["name"],
            r["description"],
            r["weight"],
            int(r["_cdc_valid_from_seq"]["s2"]),
            None if r["_cdc_valid_to_seq"] is None else int(r["_cdc_valid_to_seq"]["s2"]),
            r["_cdc_is_current"],
            r["_cdc_is_deleted"],
            r["_cdc_op"],
        )
        for r in rows
    ]


def of(history: list[Version], *ids: int) -> list[Version]:
    return [v for v in history if v[0] in ids]


def all_rows(project: DbtProject, schema: str) -> list[dict[str, Any]]:
    return project.rows(f"select * from `{schema}`.products_history order by id, _cdc_valid_from_seq")


def props(project: DbtProject, schema: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.products_history")}


def test_in_order_corpus_gives_exact_history_and_untracked_changes_update_in_place(
    project: DbtProject, schema: str
) -> None:
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    project.dbt("run", "--select", "+products_history", "products_weight_history")
    assert versions(project, schema) == IN_ORDER

    # Validity is also measured in source commit time; the current version's valid-to is null.
    times = commit_times()
    for r in all_rows(project, schema):
        valid_to = r["_cdc_valid_to_seq"] and times[r["id"], int(r["_cdc_valid_to_seq"]["s2"])]
        assert r["_cdc_valid_from"] == times[r["id"], int(r["_cdc_valid_from_seq"]["s2"])]
        assert r["_cdc_valid_to"] == valid_to
        assert (r["_cdc_seq"], r["_cdc_commit_ts"]) == (r["_cdc_valid_from_seq"], r["_cdc_valid_from"])
    assert props(project, schema)["spark_cdc.materialization"] == "cdc_scd2"

    # track_history_columns=['weight']: 106's description change updates its version in place;
    # the current version's valid-to is valid_to_current.
    rows = project.rows(f"select * from `{schema}`.products_weight_history order by id, valid_from")
    end_of_time = dt.datetime(9999, 12, 31)
    got = [
        (
            r["id"],
            r["description"],
            r["weight"],
            r["valid_from"],
            r["valid_to"],
            r["is_current"],
            r["_cdc_is_deleted"],
            r["_cdc_op"],
        )
        for r in rows
        if r["id"] in (106, 107, 111)
    ]
    assert got == [
        (
            106,
            "18oz carpenter hammer",
            1.0,
            times[106, SNAP],
            end_of_time,
            True,
            False,
            "update",
        ),
        (107, "box of assorted rocks", 5.3, times[107, SNAP], times[107, 34132200], False, False, "snapshot"),
        (107, "box of assorted rocks", 5.1, times[107, 34132200], end_of_time, True, False, "update"),
        (
            111,
            "Big 2-wheel scooter ",
            5.18,
            times[111, 34133072],
            times[111, 34133584],
            False,
            False,
            "insert",
        ),
        (
            111,
            "Big 2-wheel scooter ",
            5.17,
            times[111, 34133584],
            times[111, 34133800],
            False,
            False,
            "update",
        ),
        # delete_handling='invalidate': the delete closes the last version and adds none.
    ]
    in_place = next(r for r in rows if r["id"] == 106)
    assert int(in_place["_cdc_valid_from_seq"]["s2"]) == SNAP
    assert int(in_place["_cdc_seq"]["s2"]) == 34131104
    assert len(rows) == len(IN_ORDER) - 2
    assert not [r for r in rows if r["_cdc_is_deleted"]]
    partitions = project.rows(f"show partitions `{schema}`.products_weight_history__cdc_parts")
    assert len(partitions) == 7  # partition_by='name': one per product name
    # The recorded counts are the view's (the run summary and the report read them): the
    # invalidated delete's stored tombstone is not a version; current rows are the live keys.
    for model, current in (
        ("products_history", "_cdc_is_current"),
        ("products_weight_history", "is_current"),
    ):
        recorded = {r["key"]: r["value"] for r in project.rows(f"show tblproperties `{schema}`.{model}")}
        shown = project.rows(
            f"select count(*) as n, count_if({current} and not _cdc_is_deleted) as c from `{schema}`.{model}"
        )[0]
        assert (recorded["spark_cdc.versions"], recorded["spark_cdc.current_rows"]) == (
            str(shown["n"]),
            str(shown["c"]),
        ), model


# In `make test` the randomized reference suite (test_apply_reference_formats.py) compares every
# format's SCD2 history, delivered shuffled and redelivered, with the in-order reference.
@pytest.mark.long
def test_shuffled_duplicated_batches_converge_to_the_in_order_history(
    project: DbtProject, schema: str
) -> None:
    messages = corpus("schema-exclude") * 2
    random.Random(20261123).shuffle(messages)
    for batch in (messages[:11], messages[11:22], messages[22:]):
        land_messages(project.spark, f"{schema}_raw", "debezium", batch)
        project.dbt(*RUN)
    assert versions(project, schema) == IN_ORDER


def test_late_changes_deletes_toast_key_change_truncate_rerun_and_full_refresh(
    project: DbtProject, schema: str, tmp_path: Path
) -> None:
    kite = product(300, "kite", "red kite", 0.3)
    land_messages(
        project.spark,
        f"{schema}_raw",
        "debezium",
        [*corpus("schema-include"), envelope("d", 34300000, None, kite)],
    )
    project.dbt(*RUN)
    assert of(versions(project, schema), 300) == [
        (300, "kite", "red kite", 0.3, 34300000, None, True, True, "delete")
    ]

    scooter = product(101, "scooter", "Small 2-wheel scooter", 3.14)
    late = [
        # Older than 106's applied update (34131104): splits its snapshot version.
        envelope("u", 34100000, product(106, "hammer", "17oz carpenter hammer", 1.0)),
        # Older than 300's delete: history gains the insert, the key stays deleted.
        envelope("c", 34200000, kite),
        # Unchanged TOAST column: description keeps its value.
        envelope("u", 34300000, product(104, "mallet", "__debezium_unavailable_value", 0.7)),
        # A primary-key update 101 -> 401: delete of the old key, insert of the new one.
        envelope("d", 34310000, None, scooter),
        envelope("c", 34310000, {**scooter, "id": 401}),
        # A redelivery of an applied change.
        corpus("schema-include")[10],
    ]
    random.Random(7).shuffle(late)
    land_messages(project.spark, f"{schema}_raw", "debezium", late)
    project.dbt(*RUN)
    history = versions(project, schema)
    assert of(history, 106) == [
        (106, "hammer", "16oz carpenter's hammer", 1.0, SNAP, 34100000, False, False, "snapshot"),
        (106, "hammer", "17oz carpenter hammer", 1.0, 34100000, 34131104, False, False, "update"),
        (106, "hammer", "18oz carpenter hammer", 1.0, 34131104, None, True, False, "update"),
    ]
    assert of(history, 300) == [
        (300, "kite", "red kite", 0.3, 34200000, 34300000, False, False, "insert"),
        (300, "kite", "red kite", 0.3, 34300000, None, True, True, "delete"),
    ]
    assert of(history, 104) == [
        (104, "hammer", "12oz carpenter's hammer", 0.75, SNAP, 34300000, False, False, "snapshot"),
        (104, "mallet", "12oz carpenter's hammer", 0.7, 34300000, None, True, False, "update"),
    ]
    assert of(history, 101, 401) == [
        (101, "scooter", "Small 2-wheel scooter", 3.14, SNAP, 34310000, False, False, "snapshot"),
        (101, "scooter", "Small 2-wheel scooter", 3.14, 34310000, None, True, True, "delete"),
        (401, "scooter", "Small 2-wheel scooter", 3.14, 34310000, None, True, False, "insert"),
    ]
    untouched = [v for v in IN_ORDER if v[0] not in (101, 104, 106)]
    assert [v for v in history if v[0] not in (101, 104, 106, 300, 401)] == untouched

    # A truncate closes every open version; a later insert applies, an older one lands before it.
    land_messages(
        project.spark,
        f"{schema}_raw",
        "debezium",
        [
            truncate(34400000),
            envelope("c", 34500000, product(200, "bike", "after truncate", 9.0)),
            envelope("c", 34350000, product(201, "sled", "before truncate", 4.0)),
        ],
    )
    project.dbt(*RUN)
    history = versions(project, schema)
    live_before = {
        v[0] for v in history if v[4] < 34400000 and (v[5] is None or v[5] >= 34400000) and not v[7]
    }
    assert live_before == {102, 103, 104, 105, 106, 107, 108, 109, 110, 201, 401}
    current = {v[0]: v for v in history if v[6]}
    for pid in live_before:
        assert current[pid][4:] == (34400000, None, True, True, "truncate"), pid
    assert of(history, 201) == [
        (201, "sled", "before truncate", 4.0, 34350000, 34400000, False, False, "insert"),
        (201, "sled", "before truncate", 4.0, 34400000, None, True, True, "truncate"),
    ]
    assert of(history, 200) == [(200, "bike", "after truncate", 9.0, 34500000, None, True, False, "insert")]
    assert all(not v[6] or v[7] for v in history if v[0] in (101, 111, 300))
    assert len([v for v in history if v[0] == 300]) == 2

    # No new changes: the target is left exactly as it is.
    before, rows = props(project, schema), all_rows(project, schema)
    project.dbt(*RUN)
    after = props(project, schema)
    assert after["spark_cdc.version"] == before["spark_cdc.version"]
    assert after["spark_cdc.consumed_through"] == before["spark_cdc.consumed_through"]
    assert all_rows(project, schema) == rows

    # A full refresh rebuilds the same history from the change stream.
    project.dbt(*RUN, "--full-refresh")
    assert all_rows(project, schema) == rows

    # Python models (returning the changes as a DataFrame) build the same history, and (cdc_scd1)
    # the same current state as the truncate left: only 200.
    def python_model(materialization: str) -> str:
        return (
            "def model(dbt, session):\n"
            f"    dbt.config(materialized='{materialization}', unique_key='id',\n"
            "               source_table='inventory.products', cdc_format='debezium',\n"
            "               submission_method='session')\n"
            f"    return session.table('`{schema}`.cdc_changes')\n"
        )

    files = {"history_py.py": python_model("cdc_scd2"), "state_py.py": python_model("cdc_scd1")}
    files["models.yml"] = models_yml(("history_py", "state_py"))
    side = side_project(project, tmp_path, files)
    side.dbt("run", "--select", "history_py", "state_py", "--target-path", str(tmp_path / "target"))
    assert project.rows(f"select * from `{schema}`.history_py order by id, _cdc_valid_from_seq") == rows
    assert project.rows(f"select id, name from `{schema}`.state_py") == [{"id": 200, "name": "bike"}]


def test_a_touched_key_replays_from_its_last_whole_version_before_the_batch(
    project: DbtProject, schema: str
) -> None:
    """The versions of a key before the batch's first change are copied, not replayed; a late change
    replays from the version it falls into. Shown by altering a stored version behind the package's
    back: the first run keeps the altered value, the late change's run recomputes it."""
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    project.dbt(*RUN)
    stored = f"`{schema}`.products_history__cdc_v{props(project, schema)['spark_cdc.version']}"
    spark = project.spark
    alter = f"case when id = 107 and _cdc_valid_from_seq.s2 = {SNAP} then 99.0 else weight end as weight"
    select = ", ".join(alter if c == "weight" else f"`{c}`" for c in spark.table(stored).columns)
    spark.sql(f"create table `{schema}`.altered using parquet as select {select} from {stored}")
    spark.sql(f"insert overwrite table {stored} select * from `{schema}`.altered")
    spark.sql(f"drop table `{schema}`.altered")
    rocks = "box of assorted rocks"

    def update_rocks(lsn: int, weight: float) -> list[Version]:
        """Land an update of 107 at `lsn` (a whole image), build, and return 107's versions."""
        update = envelope("u", lsn, product(107, "rocks", rocks, weight))
        land_messages(project.spark, f"{schema}_raw", "debezium", [update])
        project.dbt(*RUN)
        return of(versions(project, schema), 107)

    assert update_rocks(34500000, 5.0) == [
        (107, "rocks", rocks, 99.0, SNAP, 34132200, False, False, "snapshot"),  # copied as it was
        (107, "rocks", rocks, 5.1, 34132200, 34500000, False, False, "update"),
        (107, "rocks", rocks, 5.0, 34500000, None, True, False, "update"),
    ]
    assert [v for v in versions(project, schema) if v[0] != 107] == [v for v in IN_ORDER if v[0] != 107]

    assert update_rocks(34100000, 5.2) == [
        (107, "rocks", rocks, 5.3, SNAP, 34100000, False, False, "snapshot"),  # replayed
        (107, "rocks", rocks, 5.2, 34100000, 34132200, False, False, "update"),
        (107, "rocks", rocks, 5.1, 34132200, 34500000, False, False, "update"),
        (107, "rocks", rocks, 5.0, 34500000, None, True, False, "update"),
    ]


def test_a_change_applied_before_its_sequence_conflict_is_known_is_taken_back(
    project: DbtProject, schema: str
) -> None:
    kite = product(500, "kite", "red kite", 0.3)
    land_messages(
        project.spark,
        f"{schema}_raw",
        "debezium",
        [envelope("c", 35000000, kite), envelope("u", 35000100, {**kite, "weight": 0.4})],
    )
    project.dbt(*RUN)
    assert of(versions(project, schema), 500) == [
        (500, "kite", "red kite", 0.3, 35000000, 35000100, False, False, "insert"),
        (500, "kite", "red kite", 0.4, 35000100, None, True, False, "update"),
    ]

    # A different change of the key with the same LSN: a sequence conflict, neither change applies
    # (docs/apply_semantics.md), as if neither had been delivered. A full refresh gives that history;
    # the incremental run must give it too.
    land_messages(
        project.spark, f"{schema}_raw", "debezium", [envelope("u", 35000100, {**kite, "weight": 0.5})]
    )
    project.dbt(*RUN)
    incremental = of(versions(project, schema), 500)
    project.dbt(*RUN, "--full-refresh")
    only_the_insert = [(500, "kite", "red kite", 0.3, 35000000, None, True, False, "insert")]
    assert of(versions(project, schema), 500) == only_the_insert
    assert incremental == only_the_insert


def test_a_view_claiming_whole_images_over_a_stored_truncate_stops_the_run(
    project: DbtProject, schema: str
) -> None:
    """While every change is a whole image, cdc_scd2 takes the lag() statement and records
    spark_cdc.whole_images; a truncate clears it. A view that still claims whole images over a stored
    truncate (set by hand here; a killed --full-refresh no longer leaves one, test_killed_full_refresh.py)
    must not have the truncate applied as a whole image: the run stops before writing, naming the fix."""
    land_messages(project.spark, f"{schema}_raw", "debezium", corpus("schema-include"))
    project.dbt(*RUN)
    first = props(project, schema)
    assert first["spark_cdc.last_batch_simple"] == "true" and first["spark_cdc.whole_images"]

    land_messages(project.spark, f"{schema}_raw", "debezium", [truncate(34400000)])
    project.dbt(*RUN)
    after_truncate = props(project, schema)
    assert (after_truncate["spark_cdc.last_batch_simple"], after_truncate["spark_cdc.whole_images"]) == (
        "false",
        "",
    )
    assert all(v[7] for v in versions(project, schema) if v[6])  # every current version deleted

    project.spark.sql(
        f"alter view `{schema}`.products_history set tblproperties "
        f"('spark_cdc.whole_images' = '{first['spark_cdc.whole_images']}')"
    )
    update = envelope("u", 34500000, product(107, "rocks", "box of assorted rocks", 5.0))
    land_messages(project.spark, f"{schema}_raw", "debezium", [update])
    result = project.dbt(*RUN, expect_success=False)
    text = str(result.exception or [r.message for r in result.result.results])
    assert "model 'products_history' stores a truncate or a partial image" in text
    assert "Fix: run the model with --full-refresh" in text
    assert props(project, schema)["spark_cdc.version"] == after_truncate["spark_cdc.version"]

    project.dbt(*RUN, "--full-refresh")
    assert props(project, schema)["spark_cdc.whole_images"] == ""
    rocks = of(versions(project, schema), 107)
    assert rocks[-1][3:] == (5.0, 34500000, None, True, False, "update")
