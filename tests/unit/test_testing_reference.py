"""The reference applier itself, on hand-written histories, and the generator's guarantees."""

import json
import random

from dbt_spark_cdc.testing_reference import (
    COMMIT_MS_AT_LSN_0,
    TOAST_PLACEHOLDER,
    Event,
    add_sequence_conflicts,
    applicable,
    deliver,
    expected_versions,
    generate_history,
    reference_scd1,
    reference_scd2,
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


def history(events, **kwargs):
    """(key, a, b, valid-from, valid-to, current, deleted, op, LSN of the last change) per version."""
    return [
        (
            v.key,
            v.values["a"],
            v.values["b"],
            v.valid_from,
            v.valid_to,
            v.is_current,
            v.is_deleted,
            v.op,
            v.lsn,
        )
        for v in reference_scd2(events, COLS, **kwargs)
    ]


def test_scd2_versions_follow_sequence_order_and_an_unchanged_image_updates_in_place():
    events = [
        Event("u", 30, 1, after=row(1, "a1", "b0")),
        Event("u", 40, 1, after=row(1, "a1", "b0")),  # changes nothing: same version, later op/LSN
        Event("r", 10, 1, after=row(1, "a0", "b0")),
        Event("c", 20, 2, after=row(2, "x", None)),
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 30, False, False, "snapshot", 10),
        (1, "a1", "b0", 30, None, True, False, "update", 40),
        (2, "x", None, 20, None, True, False, "insert", 20),
    ]
    assert reference_scd2(events, COLS)[0].values == row(1, "a0", "b0")


def test_scd2_untracked_change_updates_in_place_and_a_tracked_one_opens_a_version():
    events = [
        Event("c", 10, 1, after=row(1, "a0", "b0")),
        Event("u", 20, 1, after=row(1, "a0", "b1")),
        Event("u", 30, 1, after=row(1, "a1", "b1")),
    ]
    assert history(events, tracked=["a"]) == [
        (1, "a0", "b1", 10, 30, False, False, "update", 20),
        (1, "a1", "b1", 30, None, True, False, "update", 30),
    ]


def test_scd2_partial_image_keeps_the_value_of_the_keys_current_life_only():
    events = [
        Event("c", 10, 1, after=row(1, "a0", "b0")),
        Event("u", 20, 1, after=row(1, None, TOAST_PLACEHOLDER)),
        Event("d", 30, 1, before={"id": 1}),
        Event("c", 40, 1, after=row(1, "a2", TOAST_PLACEHOLDER)),
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 20, False, False, "insert", 10),
        (1, None, "b0", 20, 30, False, False, "update", 20),
        # A delete without a before image keeps the previous values.
        (1, None, "b0", 30, 40, False, True, "delete", 30),
        # Re-inserted: a new life, the placeholder column starts from null.
        (1, "a2", None, 40, None, True, False, "insert", 40),
    ]


def test_scd2_delete_before_image_fills_the_deleted_version_and_a_second_delete_changes_nothing():
    events = [
        Event("c", 10, 1, after=row(1, "a0", "b0")),
        Event("d", 20, 1, before={"id": 1, "a": "seen", "b": None}),
        Event("d", 25, 1, before=row(1, "z", "z")),
        # A key whose first change is a delete: its values come from the before image alone.
        Event("d", 30, 2, before={"id": 2, "a": "gone"}),
        Event("c", 5, 2, after=row(2, "late", "x")),  # older than the delete: lands before it
    ]
    assert history(events) == [
        (1, "a0", "b0", 10, 20, False, False, "insert", 10),
        (1, "seen", None, 20, None, True, True, "delete", 20),
        (2, "late", "x", 5, 30, False, False, "insert", 5),
        (2, "gone", "x", 30, None, True, True, "delete", 30),
    ]


def test_scd2_truncate_closes_only_keys_that_exist_just_before_it():
    events = [
        Event("c", 10, 1, after=row(1, "a", "b")),
        Event("c", 11, 2, after=row(2, "a", "b")),
        Event("d", 12, 2, before={"id": 2}),
        Event("t", 20, None),
        Event("t", 25, None),  # nothing exists any more: no version
        Event("c", 30, 3, after=row(3, "later", TOAST_PLACEHOLDER)),
        Event("c", 40, 1, after=row(1, "again", TOAST_PLACEHOLDER)),
    ]
    assert history(events) == [
        (1, "a", "b", 10, 20, False, False, "insert", 10),
        (1, "a", "b", 20, 40, False, True, "truncate", 20),
        (1, "again", None, 40, None, True, False, "insert", 40),
        (2, "a", "b", 11, 12, False, False, "insert", 11),
        (2, "a", "b", 12, None, True, True, "delete", 12),
        (3, "later", None, 30, None, True, False, "insert", 30),
    ]


def test_scd2_key_change_redelivery_and_conflict():
    events = [
        Event("c", 10, 1, after=row(1, "a", "b")),
        Event("c", 10, 1, after=row(1, "a", "b")),  # redelivery: counts once
        Event("u", 15, 1, after=row(1, "u", "b")),
        Event("u", 15, 1, after=row(1, "rival", "b")),  # a conflict: neither applies
        Event("d", 20, 1, before=row(1, "a", "b")),
        Event("c", 20, 2, after=row(2, "a", "b")),
    ]
    assert history(events) == [
        (1, "a", "b", 10, 20, False, False, "insert", 10),
        (1, "a", "b", 20, None, True, True, "delete", 20),
        (2, "a", "b", 20, None, True, False, "insert", 20),
    ]
    rows = expected_versions(reference_scd2(events, COLS))
    assert rows[0] == {
        **row(1, "a", "b"),
        "_valid_from_lsn": 10,
        "_valid_to_lsn": 20,
        "_valid_from_ms": COMMIT_MS_AT_LSN_0 + 10,
        "_valid_to_ms": COMMIT_MS_AT_LSN_0 + 20,
        "_cdc_is_current": False,
        "_cdc_is_deleted": False,
        "_cdc_op": "insert",
        "_lsn": 10,
        "_commit_ms": COMMIT_MS_AT_LSN_0 + 10,
    }


def test_scd2_current_versions_agree_with_scd1_on_random_histories():
    h = generate_history(random.Random(11), scenarios=60, first_key=0, truncates=3)
    events = add_sequence_conflicts(random.Random(12), h.events, rate=0.05)
    current = {v.key: v for v in reference_scd2(events) if v.is_current and not v.is_deleted}
    state = reference_scd1(events)
    assert {k: (v.values, v.op, v.lsn) for k, v in current.items()} == {
        k: (r.values, r.op, r.lsn) for k, r in state.items()
    }


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


def test_delivery_can_hold_back_conflict_members_until_the_conflict_is_known():
    history = generate_history(random.Random(5), scenarios=80, first_key=0)
    events = add_sequence_conflicts(random.Random(6), history.events, rate=0.2)
    batches = deliver(
        random.Random(7), events, batches=4, partials_after_their_base=False, conflicts_known_on_arrival=True
    )
    first_batch = {}
    for i, batch in enumerate(batches):
        for e in batch:
            first_batch.setdefault((e.key, e.lsn), {}).setdefault(e.content(), i)
    conflicts = sequence_conflicts(events)
    assert len(conflicts) > 10
    for group in conflicts:
        arrivals = sorted(first_batch[group].values())
        assert arrivals[0] == arrivals[1], group  # a member arrives only with a rival
    # Partial images are not held back: some arrive before an older change of their key.
    early = [
        e
        for i, batch in enumerate(batches)
        for e in batch
        if e.is_partial and any(o.key == e.key and o.lsn < e.lsn for b in batches[i + 1 :] for o in b)
    ]
    assert early


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
