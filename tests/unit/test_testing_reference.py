"""The reference applier itself, on hand-written histories, and the generator's guarantees."""

import json
import random

from dbt_spark_cdc.testing_reference import (
    TOAST_PLACEHOLDER,
    Event,
    applicable,
    deliver,
    generate_history,
    reference_scd1,
    sequence_conflicts,
)

COLS = ("id", "a", "b")


def row(key, a, b):
    return {"id": key, "a": a, "b": b}


def values(state):
    return {k: r.values for k, r in state.items()}


def test_sequence_order_not_arrival_order():
    events = [Event("u", 30, 1, after=row(1, "new", "y")), Event("c", 10, 1, after=row(1, "old", "x"))]
    state = reference_scd1(events, COLS)
    assert values(state) == {1: row(1, "new", "y")}
    assert (state[1].op, state[1].lsn) == ("update", 30)


def test_partial_image_keeps_previous_value_and_null_is_a_value():
    events = [
        Event("c", 10, 1, after=row(1, "a0", "b0")),
        Event("u", 20, 1, after=row(1, None, TOAST_PLACEHOLDER)),
    ]
    assert values(reference_scd1(events, COLS)) == {1: row(1, None, "b0")}


def test_delete_truncate_and_reinsert():
    events = [
        Event("c", 10, 1, after=row(1, "a", "b")),
        Event("c", 11, 2, after=row(2, "a", "b")),
        Event("d", 20, 1, before={"id": 1}),
        Event("t", 30, None),
        Event("c", 40, 2, after=row(2, "again", None)),
    ]
    assert values(reference_scd1(events, COLS)) == {2: row(2, "again", None)}


def test_redelivery_counts_once_and_a_conflict_never_applies():
    insert = Event("c", 10, 1, after=row(1, "a", "b"))
    update = Event("u", 20, 1, after=row(1, "u", "b"))
    rival = Event("u", 20, 1, after=row(1, "other", "b"))
    assert values(reference_scd1([insert, update, update, insert], COLS)) == {1: row(1, "u", "b")}
    assert sequence_conflicts([insert, update, rival]) == {(1, 20)}
    assert applicable([insert, update, rival, update]) == [insert]
    assert values(reference_scd1([insert, update, rival], COLS)) == {1: row(1, "a", "b")}


def test_same_lsn_on_different_keys_is_no_conflict():
    # A primary-key change: delete of the old key and insert of the new one from one WAL record.
    events = [
        Event("c", 10, 1, after=row(1, "a", "b")),
        Event("d", 20, 1, before=row(1, "a", "b")),
        Event("c", 20, 2, after=row(2, "a", "b")),
    ]
    assert sequence_conflicts(events) == set()
    assert values(reference_scd1(events, COLS)) == {2: row(2, "a", "b")}


def test_generated_histories_are_reproducible_and_realistic():
    a = generate_history(random.Random(7), scenarios=40, first_key=0, truncates=2)
    b = generate_history(random.Random(7), scenarios=40, first_key=0, truncates=2)
    assert a.events == b.events
    assert sequence_conflicts(a.events) == set()
    lsns = [e.lsn for e in a.events]
    assert lsns == sorted(lsns)
    # Keys of different scenarios never meet.
    for e in a.events:
        if e.key is not None:
            assert sum(e.key in s.keys for s in a.scenarios) == 1
    envelope = json.loads(a.events[0].envelope("s", "t"))
    assert envelope["source"]["table"] == "t" and envelope["source"]["lsn"] == a.events[0].lsn


def test_delivery_keeps_every_event_and_never_sends_a_partial_image_before_its_base():
    history = generate_history(random.Random(3), scenarios=80, first_key=0)
    batches = deliver(random.Random(4), history.events, batches=4)
    delivered = [e for batch in batches for e in batch]
    assert set(map(id, delivered)) == set(map(id, history.events))
    first_batch = {}
    for i, batch in enumerate(batches):
        for e in batch:
            first_batch.setdefault(id(e), i)
    for e in history.events:
        if e.is_partial:
            older = [o for o in history.events if o.key == e.key and o.lsn < e.lsn]
            assert all(first_batch[id(o)] <= first_batch[id(e)] for o in older)


def test_one_change_under_two_connector_configurations_is_no_conflict():
    # With and without the before image (REPLICA IDENTITY FULL or DEFAULT, CockroachDB `diff`), and
    # an insert and an update of the same image: the same effect, so a redelivery, not a conflict.
    image = row(1, "a", "b")
    events = [
        Event("u", 20, 1, after=image, before=row(1, "old", "b")),
        Event("u", 20, 1, after=image),
        Event("c", 20, 1, after=image),
        Event("d", 30, 1, before=image),
        Event("d", 30, 1),
    ]
    assert sequence_conflicts(events) == set()
    assert [e.lsn for e in applicable(events)] == [20, 30]
    assert sequence_conflicts([Event("d", 30, 1), Event("u", 30, 1, after=image)]) == {(1, 30)}
