"""Seeded group generation and the events simulate applies between phases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import LATEST_OFFSET
from kassign.pipeline.events import Event, EventKind, apply_event, events_from_json
from kassign.pipeline.generate import GroupSpec, random_group, spec_from_json
from kassign.pipeline.group import member_ids, to_request, to_state

SPEC = GroupSpec(clients=(4, 6), racks=(3, 3), replication=(2, 2), standbys=(1, 1))


def test_a_group_depends_only_on_seed_and_index() -> None:
    assert random_group(SPEC, seed=7, index=3) == random_group(SPEC, seed=7, index=3)
    assert random_group(SPEC, seed=7, index=3) != random_group(SPEC, seed=7, index=4)
    assert random_group(SPEC, seed=7, index=3) != random_group(SPEC, seed=8, index=3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), index=st.integers(0, 10_000))
def test_groups_follow_their_spec_and_decode_like_real_requests(seed: int, index: int) -> None:
    group = random_group(SPEC, seed=seed, index=index)
    assert 4 <= len(group.clients) <= 6 and len(group.racks) == 3
    assert all(len(tp.rack_ids) == 2 for t in group.tasks for tp in t.topic_partitions)
    assert all(1 <= c.threads <= 3 for c in group.clients)
    owners = [t for c in group.clients for t, s in c.offset_sums.items() if s == LATEST_OFFSET]
    assert len(owners) == len(set(owners))  # at most one previous owner per task
    state = to_state(group)  # the server's decoder accepts what we generate
    assert set(state.clients) == {c.process_id for c in group.clients}
    assert len(state.tasks) == len(group.tasks)
    assert state.configs.num_standby_replicas == 1 and state.configs.rack_aware_assignment_tags == (
        "zone",
    )


def test_requests_list_one_member_per_thread() -> None:
    group = random_group(SPEC, seed=1, index=0)
    request = to_request(group)
    assert sorted(m.member_id for m in request.members) == sorted(
        m for c in group.clients for m in member_ids(c)
    )


def test_spec_from_json_takes_ranges_and_refuses_unknown_keys() -> None:
    assert spec_from_json({"clients": [20, 20], "lag_mean": 5.0}).clients == (20, 20)
    with pytest.raises(ValueError):
        spec_from_json({"clientz": [1, 2]})


def _rack_of_most(group):  # type: ignore[no-untyped-def]
    return max(group.racks, key=lambda r: (sum(c.rack == r for c in group.clients), r))


def test_a_failed_rack_takes_all_its_clients_and_returns_them_without_running_tasks() -> None:
    group = random_group(SPEC, seed=3, index=1)
    rack = _rack_of_most(group)
    down = apply_event(group, Event(kind=EventKind.RACK_FAIL, rack=rack), spec=SPEC, phase=1)
    assert all(c.rack != rack for c in down.clients)
    assert {c.process_id for c in down.offline} == {
        c.process_id for c in group.clients if c.rack == rack
    }
    back = apply_event(down, Event(kind=EventKind.RACK_RETURN, rack=rack), spec=SPEC, phase=2)
    assert {c.process_id for c in back.clients} == {c.process_id for c in group.clients}
    assert back.offline == ()
    returned = [c for c in back.clients if c.rack == rack]
    assert returned and all(LATEST_OFFSET not in c.offset_sums.values() for c in returned)


def test_join_adds_clients_without_state_and_leave_removes_some() -> None:
    group = random_group(SPEC, seed=5, index=2)
    joined = apply_event(group, Event(kind=EventKind.JOIN, count=2), spec=SPEC, phase=1)
    new = joined.clients[len(group.clients) :]
    assert len(new) == 2 and all(not c.offset_sums for c in new)
    left = apply_event(group, Event(kind=EventKind.LEAVE, count=2), spec=SPEC, phase=1)
    assert len(left.clients) == len(group.clients) - 2
    assert all(c in group.clients for c in left.clients)


def test_events_on_missing_racks_or_the_last_rack_change_nothing() -> None:
    group = random_group(GroupSpec(racks=(1, 1)), seed=1, index=1)
    for event in (
        Event(kind=EventKind.RACK_FAIL, rack=5),
        Event(kind=EventKind.RACK_FAIL, rack=0),
        Event(kind=EventKind.RACK_RETURN, rack="nowhere"),
    ):
        assert apply_event(group, event, spec=GroupSpec(), phase=1) == group


def test_events_from_json() -> None:
    events = events_from_json([{"kind": "rack_fail", "rack": 1}, {"kind": "join", "count": 3}])
    assert [e.label for e in events] == ["rack_fail:1", "join:3"]
    with pytest.raises(ValueError):
        events_from_json([{"kind": "meteor"}])
