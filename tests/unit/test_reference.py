"""The format-neutral reference (tests/helpers/reference.py) on hand-written histories, the generator's
and the delivery's guarantees, and the renderers (tests/helpers/render.py): every message is JSON of
its connector's shape and carries the event back."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

import pytest
from dbt_spark_cdc.checksums import crc32c_of_text
from dbt_spark_cdc.qlik_replicate import decode_mask

from tests.helpers.reference import (
    COLUMNS,
    PARTIAL_COLUMNS,
    SNAPSHOT_SEQ,
    Event,
    add_sequence_conflicts,
    applicable,
    deliver,
    early_partials,
    generate_history,
    json_text,
    reference_scd1,
    reference_scd2,
    sequence_conflicts,
    target_values,
)
from tests.helpers.render import (
    QLIK_COLUMNS,
    TOAST_PLACEHOLDER,
    AuroraDsql,
    CockroachDb,
    Debezium,
    QlikReplicate,
    Renderer,
    Ydb,
)

ALL = frozenset(COLUMNS)


def row(key: int, name: str | None = "n", note: str | None = "x", qty: int | None = 1) -> dict[str, Any]:
    return {
        "id": key,
        "name": name,
        "qty": qty,
        "price": Decimal("1.50"),
        "active": True,
        "note": note,
        "doc": {"a": 1},
    }


def values(events: list[Event]) -> dict[int, tuple[str | None, str | None]]:
    return {k: (r.values["name"], r.values["note"]) for k, r in reference_scd1(events).items()}


def partial(seq: int, key: int, after: dict[str, Any], *absent: str) -> Event:
    return Event("update", seq, key, after=after, present=ALL - set(absent))


# --- SCD1 -----------------------------------------------------------------------------------------


def test_sequence_order_not_arrival_order() -> None:
    events = [Event("update", 30, 1, after=row(1, "new")), Event("insert", 10, 1, after=row(1, "old"))]
    state = reference_scd1(events)
    assert state[1].values == row(1, "new")
    assert (state[1].op, state[1].seq) == ("update", 30)


def test_partial_image_keeps_previous_value_and_null_is_a_value() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a0", "b0")),
        partial(20, 1, row(1, None, "ignored"), "note"),
    ]
    assert values(events) == {1: (None, "b0")}


def test_an_older_full_image_arriving_after_a_newer_partial_one_fills_its_absent_columns() -> None:
    newer = partial(30, 1, row(1, "third", "not sent"), "note")
    assert values([newer]) == {1: ("third", None)}  # its base not seen yet
    assert values([newer, Event("update", 20, 1, after=row(1, "second", "note-2"))]) == {
        1: ("third", "note-2")
    }
    # ... but not across a delete: the partial image starts a new life.
    gone = [
        newer,
        Event("insert", 10, 1, after=row(1, "first", "note-1")),
        Event("delete", 20, 1, before={"id": 1}),
    ]
    assert values(gone) == {1: ("third", None)}


def test_delete_before_an_older_insert_keeps_the_key_deleted() -> None:
    events = [Event("delete", 20, 1, before={"id": 1}), Event("insert", 10, 1, after=row(1))]
    assert reference_scd1(events) == {}


def test_delete_truncate_and_reinsert() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a")),
        Event("insert", 11, 2, after=row(2, "a")),
        Event("delete", 20, 1, before={"id": 1}),
        Event("truncate", 30),
        Event("truncate", 30),  # a redelivered truncate is the same truncate
        partial(40, 2, row(2, "again", "x"), "note"),
    ]
    assert values(events) == {2: ("again", None)}


def test_redelivery_counts_once_and_a_conflict_never_applies() -> None:
    insert = Event("insert", 10, 1, after=row(1, "a"))
    update = Event("update", 20, 1, after=row(1, "u"))
    rival = Event("update", 20, 1, after=row(1, "other"))
    assert values([insert, update, update, insert]) == {1: ("u", "x")}
    assert sequence_conflicts([insert, update, rival]) == {(1, 20)}
    assert [c.event for c in applicable([insert, update, rival, update])] == [insert]
    assert values([insert, update, rival]) == {1: ("a", "x")}


def test_a_key_change_is_one_event_deleting_the_old_key_and_upserting_the_new_one() -> None:
    old = row(1, "a")
    change = Event("update", 20, 2, after={**old, "id": 2}, before={"id": 1}, old=old)
    assert change.old_key == 1 and change.is_key_change
    assert [(c.key, c.effect, c.op) for c in change.changes()] == [
        (1, "delete", "delete"),
        (2, "upsert", "update"),
    ]
    events = [Event("insert", 10, 1, after=old), change]
    # The same sequence on two keys is no conflict.
    assert sequence_conflicts(events) == set()
    assert values(events) == {2: ("a", "x")}
    # A format that names the new key's change otherwise (Debezium: a create).
    state = reference_scd1(events, op_name=Debezium().op_name)
    assert (state[2].op, state[2].seq) == ("insert", 20)


def test_one_change_under_two_connector_configurations_is_no_conflict() -> None:
    # With and without the before image, and an insert and an update of the same image: the same
    # effect, so a redelivery, not a conflict.
    image = row(1, "a")
    events = [
        Event("update", 20, 1, after=image, before=row(1, "old")),
        Event("update", 20, 1, after=image),
        Event("insert", 20, 1, after=image),
        Event("delete", 30, 1, before=image),
        Event("delete", 30, 1, before={"id": 1}),
    ]
    assert sequence_conflicts(events) == set()
    assert [c.seq for c in applicable(events)] == [20, 30]
    assert sequence_conflicts([Event("delete", 30, 1), Event("update", 30, 1, after=image)]) == {(1, 30)}
    # A partial image and a full one of the same sequence differ.
    assert sequence_conflicts([Event("update", 30, 1, after=image), partial(30, 1, image, "note")]) == {
        (1, 30)
    }


def test_target_values_hold_json_text_and_decimals() -> None:
    assert target_values({"doc": "mañana", "price": 1.5})["doc"] == '"mañana"'
    assert target_values({"doc": {"b": [1, True], "a": "118"}})["doc"] == '{"a":"118","b":[1,true]}'
    assert target_values({"doc": None, "price": Decimal("2.5")}) == {"doc": None, "price": Decimal("2.50")}


# --- SCD2 -----------------------------------------------------------------------------------------


def history(events: list[Event], **kwargs: Any) -> list[tuple[Any, ...]]:
    """(key, name, note, valid-from, valid-to, current, deleted, op, seq of the last change) per version."""
    return [
        (
            v.key,
            v.values["name"],
            v.values["note"],
            v.valid_from,
            v.valid_to,
            v.is_current,
            v.is_deleted,
            v.op,
            v.seq,
        )
        for v in reference_scd2(events, **kwargs)
    ]


def test_scd2_versions_follow_sequence_order_and_an_unchanged_image_updates_in_place() -> None:
    events = [
        Event("update", 30, 1, after=row(1, "a1", "b0")),
        Event("update", 40, 1, after=row(1, "a1", "b0")),  # changes nothing: same version, later op/seq
        Event("snapshot", 10, 1, after=row(1, "a0", "b0")),
        Event("insert", 20, 2, after=row(2, "x", None)),
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 30, False, False, "snapshot", 10),
        (1, "a1", "b0", 30, None, True, False, "update", 40),
        (2, "x", None, 20, None, True, False, "insert", 20),
    ]


def test_scd2_untracked_change_updates_in_place_and_a_tracked_one_opens_a_version() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a0", "b0")),
        Event("update", 20, 1, after=row(1, "a0", "b1")),
        Event("update", 30, 1, after=row(1, "a1", "b1")),
    ]
    assert history(events, tracked=["name"]) == [
        (1, "a0", "b1", 10, 30, False, False, "update", 20),
        (1, "a1", "b1", 30, None, True, False, "update", 30),
    ]


def test_scd2_partial_image_keeps_the_value_of_the_keys_current_life_only() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a0", "b0")),
        partial(20, 1, row(1, None, "?"), "note"),
        Event("delete", 30, 1, before={"id": 1}),
        Event("insert", 40, 1, after=row(1, "a2", "?"), present=ALL - {"note"}),
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 20, False, False, "insert", 10),
        (1, None, "b0", 20, 30, False, False, "update", 20),
        # A delete without a before image keeps the previous values.
        (1, None, "b0", 30, 40, False, True, "delete", 30),
        # Re-inserted: a new life, the absent column starts from null.
        (1, "a2", None, 40, None, True, False, "insert", 40),
    ]


def test_scd2_delete_before_image_fills_the_deleted_version_and_a_second_delete_changes_nothing() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a0", "b0")),
        Event("delete", 20, 1, before={"id": 1, "name": "seen", "note": None}),
        Event("delete", 25, 1, before=row(1, "z", "z")),
        # A key whose first change is a delete: its values come from the before image alone.
        Event("delete", 30, 2, before={"id": 2, "name": "gone"}),
        Event("insert", 5, 2, after=row(2, "late", "x")),  # older than the delete: lands before it
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 20, False, False, "insert", 10),
        (1, "seen", None, 20, None, True, True, "delete", 20),
        (2, "late", "x", 5, 30, False, False, "insert", 5),
        (2, "gone", "x", 30, None, True, True, "delete", 30),
    ]


def test_scd2_truncate_closes_only_keys_that_exist_just_before_it() -> None:
    events = [
        Event("insert", 10, 1, after=row(1, "a", "b")),
        Event("insert", 11, 2, after=row(2, "a", "b")),
        Event("delete", 12, 2, before={"id": 2}),
        Event("truncate", 20),
        Event("truncate", 25),  # nothing exists any more: no version
        partial(30, 3, row(3, "later", "?"), "note"),
        partial(40, 1, row(1, "again", "?"), "note"),
    ]
    assert history(events) == [
        (1, "a", "b", 10, 20, False, False, "insert", 10),
        (1, "a", "b", 20, 40, False, True, "truncate", 20),
        (1, "again", None, 40, None, True, False, "update", 40),
        (2, "a", "b", 11, 12, False, False, "insert", 11),
        (2, "a", "b", 12, None, True, True, "delete", 12),
        (3, "later", None, 30, None, True, False, "update", 30),
    ]


def test_scd2_key_change_redelivery_and_conflict() -> None:
    old = row(1, "a", "b")
    events = [
        Event("insert", 10, 1, after=old),
        Event("insert", 10, 1, after=old),  # redelivery: counts once
        Event("update", 15, 1, after=row(1, "u", "b")),
        Event("update", 15, 1, after=row(1, "rival", "b")),  # a conflict: neither applies
        Event("update", 20, 2, after={**old, "id": 2}, before=old, old=old),  # key change 1 -> 2
    ]
    assert history(events) == [
        (1, "a", "b", 10, 20, False, False, "insert", 10),
        (1, "a", "b", 20, None, True, True, "delete", 20),
        (2, "a", "b", 20, None, True, False, "update", 20),
    ]


def test_scd2_current_versions_agree_with_scd1_on_random_histories() -> None:
    h = generate_history(random.Random(11), scenarios=60, first_key=0, truncates=3)
    events = add_sequence_conflicts(random.Random(12), h.events, rate=0.05)
    copies = [e for batch in deliver(random.Random(13), events, batches=3) for e in batch]
    for delivered in (events, copies, copies[: len(copies) // 2]):
        current = {v.key: v for v in reference_scd2(delivered) if v.is_current and not v.is_deleted}
        state = reference_scd1(delivered)
        assert {k: (v.values, v.op, v.seq) for k, v in current.items()} == {
            k: (r.values, r.op, r.seq) for k, r in state.items()
        }


# --- histories and delivery -----------------------------------------------------------------------


def test_generated_histories_are_reproducible_and_realistic() -> None:
    a = generate_history(random.Random(7), scenarios=60, first_key=0, truncates=2)
    b = generate_history(random.Random(7), scenarios=60, first_key=0, truncates=2)
    assert a.events == b.events
    assert sequence_conflicts(a.events) == set()
    seqs = [e.seq for e in a.events]
    assert seqs == sorted(seqs)
    assert {e.seq for e in a.events if e.op == "snapshot"} == {SNAPSHOT_SEQ}
    assert all(e.seq > SNAPSHOT_SEQ for e in a.events if e.op != "snapshot")
    assert {e.op for e in a.events} == {"snapshot", "insert", "update", "delete", "truncate"}
    for e in a.events:
        # Keys of different scenarios never meet; a key change stays within its scenario.
        if e.key is not None:
            scenario = a.scenario_of(e.key)
            assert scenario is not None and all(c.key in scenario.keys for c in e.changes())
        if e.after is not None:
            assert set(e.after) == set(COLUMNS) and e.after["id"] == e.key
        if e.is_partial:
            assert e.present is not None and ALL - e.present <= set(PARTIAL_COLUMNS)
            assert all(e.after is not None and e.after[c] is not None for c in ALL - e.present)
    assert any(e.is_key_change for e in a.events) and any(e.is_partial for e in a.events)


def test_delivery_keeps_every_event_and_does_not_hold_partial_images_back() -> None:
    h = generate_history(random.Random(3), scenarios=80, first_key=0)
    events = add_sequence_conflicts(random.Random(5), h.events, rate=0.1)
    batches = deliver(random.Random(4), events, batches=4)
    delivered = [e for batch in batches for e in batch]
    assert {id(e) for e in delivered} == {id(e) for e in events}
    assert len(delivered) > len(events)  # redeliveries: the same objects again
    assert early_partials(batches) > 0


# --- renderers ------------------------------------------------------------------------------------

RENDERERS: list[Renderer] = [Debezium(), AuroraDsql(), QlikReplicate(), Ydb(), CockroachDb()]


def history_in(renderer: Renderer) -> list[Event]:
    h = generate_history(random.Random(21), scenarios=40, first_key=0)
    return add_sequence_conflicts(
        random.Random(22), renderer.adapt(h.events), 0.1, renderer.conflict_eligible
    )


def sequence_in(fmt: str, value: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The canonical seq staging reads from a message (docs/formats/*.md)."""
    if fmt == "debezium":
        return value["source"]["lsn"], value["source"]["lsn"], None
    if fmt == "aurora_dsql":
        return value["source"]["ts_ns"], value["ts_ns"], None
    if fmt == "qlik_replicate":
        headers = value["message"]["headers"]
        return int(headers["changeSequence"] or 0), headers.get("transactionEventCounter", 0), 7
    if fmt == "ydb":
        return value["ts"][0], value["ts"][1], None
    wall, logical = value["updated"].split(".")
    return int(wall), int(logical), None


@pytest.mark.parametrize("renderer", RENDERERS, ids=lambda r: r.fmt)
def test_every_message_is_json_carrying_the_events_sequence_and_redeliveries_are_identical(
    renderer: Renderer,
) -> None:
    events = history_in(renderer)
    preamble = [json.loads(m.value or "")["type"] for m in renderer.preamble()]
    assert preamble == (["MD"] if renderer.fmt == "qlik_replicate" else [])
    for e in events:
        messages = renderer.render(e)
        assert messages == renderer.render(e)
        assert messages, e
        for m in messages:
            if m.value is None:
                continue
            value = json.loads(m.value)
            assert isinstance(value, dict)
            if value.get("type") == "fragment":
                continue
            assert renderer.seq_from(*sequence_in(renderer.fmt, value)) == e.seq, (e, m.value)
            if m.key is not None:
                json.loads(m.key)
        if not renderer.partial_images:
            assert not e.is_partial


def test_debezium_messages() -> None:
    r = Debezium(table="t")
    after = row(1, "n", "x")
    msgs = r.render(partial(100, 1, after, "note", "doc"))
    assert len(msgs) == 1 and msgs[0].key == '{"id":1}'
    value = json.loads(msgs[0].value or "")
    assert value["op"] == "u" and value["source"]["table"] == "t" and value["source"]["lsn"] == 100
    assert json.loads(value["source"]["sequence"]) == ["92", "100"]
    assert value["after"] == {
        "id": 1,
        "name": "n",
        "qty": 1,
        "price": "1.50",
        "active": True,
        "note": TOAST_PLACEHOLDER,
        "doc": TOAST_PLACEHOLDER,
    }
    assert (
        json.loads(r.render(Event("insert", 10, 1, after=after))[0].value or "")["after"]["doc"] == '{"a":1}'
    )
    snapshot = json.loads(r.render(Event("snapshot", SNAPSHOT_SEQ, 1, after=after))[0].value or "")
    assert (snapshot["op"], snapshot["source"]["snapshot"]) == ("r", "true")
    truncate = r.render(Event("truncate", 200))
    assert [json.loads(m.value or "")["op"] for m in truncate] == ["t"] and truncate[0].key is None
    # A key change: a delete of the old key and a create of the new one, one LSN.
    change = Event("update", 300, 2, after={**after, "id": 2}, before={"id": 1}, old=after)
    msgs = [m for m in r.render(change) if m.value is not None]
    assert [(json.loads(m.value or "")["op"], m.key) for m in msgs] == [("d", '{"id":1}'), ("c", '{"id":2}')]
    assert {json.loads(m.value or "")["source"]["lsn"] for m in msgs} == {300}
    assert [r.op_name(c) for c in change.changes()] == ["delete", "insert"]
    # Tombstones after some deletes, with the deleted key.
    deletes = [Event("delete", 400 + i, 1, before={"id": 1}) for i in range(40)]
    tombstones = [m for e in deletes for m in r.render(e) if m.value is None]
    assert 0 < len(tombstones) < 40 and {m.key for m in tombstones} == {'{"id":1}'}
    plain = json.loads(
        Debezium(with_sequence=False).render(Event("insert", 10, 1, after=after))[0].value or ""
    )
    assert "sequence" not in plain["source"] and plain["source"]["lsn"] == 10


def test_aurora_dsql_records() -> None:
    r = AuroraDsql()
    events = history_in(r)
    assert not any(e.is_partial for e in events)
    assert all(e.before == {"id": e.key} for e in events if e.op == "delete")
    after = row(1, "n", "é" * 50)
    update = Event("update", 100, 1, after=after, old=after)
    records = [json.loads(m.value or "") for m in r.render(update)]
    full = [x for x in records if x["type"] in ("full", "chunked")]
    assert len(full) == 1 and full[0]["op"] in ("c", "u") and full[0]["before"] is None
    assert full[0]["source"]["ts_ns"] == (1_700_000_000_000 + 100) * 1_000_000
    assert r.op_name(update.changes()[0]) == ("update" if full[0]["op"] == "u" else "upsert")
    # Some records are chunked: the fragments, in index order, are the after image's JSON text.
    chunked = [m for e in events for m in r.render(e) if json.loads(m.value or "")["type"] == "chunked"]
    assert chunked
    main = json.loads(chunked[0].value or "")
    ref = main["chunked"]["after"]
    fragments = sorted(
        (json.loads(m.value or "") for e in events for m in r.render(e)),
        key=lambda x: x.get("index", -1),
    )
    text = "".join(f["data"] for f in fragments if f.get("chunk_id") == ref["chunk_id"])
    assert len([f for f in fragments if f.get("chunk_id") == ref["chunk_id"]]) == ref["total_fragments"]
    assert str(crc32c_of_text(text)) == ref["crc32c"] and isinstance(json.loads(text), dict)
    image = json.loads(text)
    assert isinstance(image["price"], (str, type(None))) and isinstance(image["doc"], (str, type(None)))
    # A key change: a delete of the old key (before = the key) and a c of the new one, one ts_ns.
    change = Event("update", 300, 2, after={**after, "id": 2}, before={"id": 1}, old=after)
    msgs = [json.loads(m.value or "") for m in r.render(r.adapt([change])[0])]
    mains = [x for x in msgs if x["type"] != "fragment"]
    assert [(x["op"], x["before"]) for x in mains] == [("d", {"id": 1}), ("c", None)]
    assert {x["source"]["ts_ns"] for x in mains} == {(1_700_000_000_000 + 300) * 1_000_000}


def test_qlik_replicate_messages() -> None:
    r = QlikReplicate()
    metadata = json.loads(r.preamble()[0].value or "")
    assert metadata["type"] == "MD" and metadata["message"]["lineage"]["table"] == "qlik_items"
    columns = metadata["message"]["tableStructure"]["tableColumns"]
    assert [c for c, _ in sorted(columns.items(), key=lambda kv: kv[1]["ordinal"])] == list(COLUMNS)
    names = [c.name for c in QLIK_COLUMNS]
    after = row(1, "n", "x")
    spellings = set()
    for seed in range(12):  # both spellings of a masked-out column
        e = partial(1000 + seed, 1, after, "note", "doc")
        message = json.loads(r.render(e)[0].value or "")["message"]
        headers = message["headers"]
        assert headers["operation"] == "UPDATE" and len(headers["changeSequence"]) == 35
        present = [names[o - 1] for o in decode_mask(headers["columnMask"]) or []]
        assert present == ["id", "name", "qty", "price", "active"]
        spellings.add(frozenset(message["data"]))
        assert all(message["data"].get(c) is None for c in ("note", "doc"))
    assert spellings == {frozenset({"id", "name", "qty", "price", "active"}), frozenset(COLUMNS)}
    refresh = json.loads(r.render(Event("snapshot", SNAPSHOT_SEQ, 1, after=after))[0].value or "")["message"]
    assert refresh["headers"]["operation"] == "REFRESH" and refresh["headers"]["changeSequence"] == ""
    assert refresh["data"]["doc"] == '{"a":1}' and refresh["data"]["qty"] == "1"
    assert r.commit_ms(SNAPSHOT_SEQ) is None and r.seq_from(0, 0, 12) == SNAPSHOT_SEQ
    assert not r.conflict_eligible(Event("snapshot", SNAPSHOT_SEQ, 1, after=after))
    # A key change is ONE UPDATE: beforeData has the old key, data the new one.
    change = r.adapt([Event("update", 300, 2, after={**after, "id": 2}, before={"id": 1}, old=after)])[0]
    msgs = r.render(change)
    assert len(msgs) == 1
    message = json.loads(msgs[0].value or "")["message"]
    assert message["headers"]["operation"] == "UPDATE"
    assert (message["beforeData"]["id"], message["data"]["id"]) == (1, 2)
    assert [r.op_name(c) for c in change.changes()] == ["delete", "update"]
    # DELETE: the deleted row (whole or only the key) in beforeData or data.
    for before in ({"id": 1}, after):
        message = json.loads(r.render(Event("delete", 400, 1, before=before))[0].value or "")["message"]
        assert message["headers"]["operation"] == "DELETE"
        assert (message["beforeData"] or message["data"])["id"] == 1


def test_ydb_records() -> None:
    r = Ydb()
    after = {**row(1, "n", "x"), "doc": "mañana"}
    records = [json.loads(m.value or "") for m in r.render(partial(100, 1, after, "note", "doc"))]
    assert records == [
        {
            "update": {"name": "n", "qty": 1, "price": "1.50", "active": True},
            "key": [1],
            "ts": [1_700_000_000_100, records[0]["ts"][1]],
        }
    ]
    full = Event("insert", 110, 1, after=after)
    value = json.loads(r.render(full)[0].value or "")
    image = value.get("newImage") or value["update"]
    assert image["doc"] == "mañana" and "id" not in image and "oldImage" not in value
    assert r.op_name(full.changes()[0]) == "upsert"
    erase = json.loads(r.render(Event("delete", 120, 1, before={"id": 1}))[0].value or "")
    assert erase == {"erase": {}, "key": [1], "ts": [1_700_000_000_120, erase["ts"][1]]}
    erase = json.loads(r.render(Event("delete", 120, 1, before=after))[0].value or "")
    assert erase["oldImage"]["name"] == "n"
    change = Event("update", 300, 2, after={**after, "id": 2}, before={"id": 1}, old=after)
    values = [json.loads(m.value or "") for m in r.render(change)]
    assert [("erase" in v, v["key"]) for v in values] == [(True, [1]), (False, [2])]
    assert len({json.dumps(v["ts"]) for v in values}) == 1
    updates = [Event("update", 500 + i, 1, after=after, old=after) for i in range(30)]
    ops = {r.op_name(e.changes()[0]) for e in updates}
    assert ops == {"update", "upsert"}
    for e in updates:
        value = json.loads(r.render(e)[0].value or "")
        assert ("oldImage" in value) == (r.op_name(e.changes()[0]) == "update")


def test_cockroachdb_messages() -> None:
    r = CockroachDb()
    after = {**row(1, "n", "é"), "doc": {"b": 1, "a": "118"}}
    events = r.adapt(
        [
            Event("insert", 100, 1, after=after),
            Event("update", 110, 1, after=after, present=ALL - {"note"}, old=after),
            Event("delete", 120, 1, before={"id": 1}, old=after),
        ]
    )
    assert not any(e.is_partial for e in events)
    msgs = [m for e in events for m in r.render(e)]
    assert {m.key for m in msgs} == {"[1]"}
    values = [json.loads(m.value or "") for m in msgs]
    assert [(v["after"] is None, v["before"] is None) for v in values] == [
        (False, True),
        (False, False),
        (True, False),
    ]
    assert values[0]["after"]["doc"] == {"a": "118", "b": 1} and values[0]["after"]["price"] == 1.5
    assert values[0]["updated"] == f"{(1_700_000_000_000 + 100) * 1_000_000}.{100 % 7:010d}"
    assert "\\u00e9" in (msgs[0].value or "")  # CockroachDB escapes non-ASCII
    assert [r.op_name(e.changes()[0]) for e in events] == ["insert", "update", "delete"]
    change = r.adapt([Event("update", 300, 2, after={**after, "id": 2}, before={"id": 1}, old=after)])[0]
    values = [json.loads(m.value or "") for m in r.render(change)]
    assert [(v["after"] is None, v["before"] is None) for v in values] == [(True, False), (False, True)]
    assert values[0]["before"]["id"] == 1 and values[1]["after"]["id"] == 2
    assert [r.op_name(c) for c in change.changes()] == ["delete", "insert"]


def test_json_values_travel_as_each_connector_sends_them() -> None:
    after = {**row(1), "doc": "118"}
    e = Event("insert", 100, 1, after=after)

    def doc_of(r: Renderer) -> Any:
        v = json.loads(r.render(e)[0].value or "")
        if v.get("type") in ("chunked", "fragment"):
            return "chunked"
        image = v["message"]["data"] if "message" in v else v.get("after") or v.get("newImage") or v["update"]
        return image["doc"]

    # As a string holding the JSON text, or the JSON value itself.
    assert doc_of(Debezium()) == doc_of(QlikReplicate()) == json_text("118") == '"118"'
    assert doc_of(AuroraDsql()) in ('"118"', "chunked")
    assert doc_of(Ydb()) == doc_of(CockroachDb()) == "118"
