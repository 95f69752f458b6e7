"""Thread distribution: balanced over a client's consumers, sticky to what each had before."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import (
    ApplicationState,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
)
from kassign.assignor.streams.result import (
    KafkaStreamsAssignment,
    MemberAssignment,
    task_assignment,
)
from kassign.assignor.streams.sticky import StickyTaskAssignor
from kassign.assignor.streams.threads import distribute_tasks

from tests.assignor import strategies as shared
from tests.assignor.builders import pid, state, tasks

T00, T01, T02, T03, T10, T11, T12, T13 = tasks("0_0 0_1 0_2 0_3 1_0 1_1 1_2 1_3")


def _client(
    consumers: dict[str, tuple[list[TaskId], list[TaskId]]], lags: dict[TaskId, int] | None = None
) -> KafkaStreamsState:
    """Client 1 with consumers ``{member: (previous_active, previous_stateful)}``."""
    return KafkaStreamsState(
        process_id=pid(1),
        consumers=tuple(
            ConsumerState(m, frozenset(a), frozenset(s)) for m, (a, s) in consumers.items()
        ),
        task_lags=lags or {},
    )


def _spread(
    client: KafkaStreamsState,
    active: Sequence[TaskId],
    standby: Sequence[TaskId] = (),
    stateless: Sequence[TaskId] = (),
) -> dict[str, MemberAssignment]:
    stateful = sorted(set(active) - set(stateless) | set(standby), key=lambda t: t.sort_key)
    app = state([client], stateful, stateless)
    result = task_assignment([KafkaStreamsAssignment.of(pid(1), active, standby)])
    return {m.member_id: m for m in distribute_tasks(app, result)}


def test_balanced_and_interleaved_without_history() -> None:
    client = _client({"b": ([], []), "a": ([], [])})
    members = _spread(client, [T00, T01, T10, T11], stateless=[T00, T01, T10, T11])
    assert list(members) == ["a", "b"]
    assert members["a"].active == (T00, T10)
    assert members["b"].active == (T01, T11)


def test_odd_count_differs_by_one() -> None:
    client = _client({"a": ([], []), "b": ([], []), "c": ([], [])})
    members = _spread(client, [T00, T01, T02, T03, T10, T11, T12])
    assert sorted(len(m.active) for m in members.values()) == [2, 2, 3]


def test_each_consumer_keeps_its_previous_stateful_tasks() -> None:
    lags = {t: 0 for t in (T00, T01, T02, T03)}
    client = _client({"a": ([], [T02, T03]), "b": ([], [T00, T01])}, lags)
    members = _spread(client, [T00, T01, T02, T03])
    assert members["a"].active == (T02, T03)
    assert members["b"].active == (T00, T01)


def test_least_lag_kept_when_a_consumer_had_too_many() -> None:
    lags = {T00: 500, T01: -2, T02: 10, T03: 0}
    client = _client({"a": ([], [T00, T01, T02]), "b": ([], [])}, lags)
    members = _spread(client, [T00, T01, T02, T03])
    assert members["a"].active == (T01, T02)  # lag -2 (running) and 10 beat 500
    assert members["b"].active == (T00, T03)


def test_previous_owner_gets_the_leftover_task() -> None:
    """Three tasks, two consumers: the floor is 1, the extra one goes back to who had it."""
    lags = {T00: 0, T01: 0, T02: 0}
    client = _client({"a": ([], []), "b": ([], [T01, T02])}, lags)
    members = _spread(client, [T00, T01, T02])
    assert members["b"].active == (T01, T02)
    assert members["a"].active == (T00,)


def test_actives_and_standbys_balance_together() -> None:
    lags = {T00: 0, T01: 0}
    client = _client({"a": ([], []), "b": ([], [])}, lags)
    members = _spread(client, [T00], standby=[T01])
    assert (members["a"].active, members["a"].standby) == ((T00,), ())
    assert (members["b"].active, members["b"].standby) == ((), (T01,))


def test_stateless_tasks_stick_to_their_previous_consumer() -> None:
    client = _client({"a": ([T10, T11], []), "b": ([T00, T01], [])})
    members = _spread(client, [T00, T01, T10, T11], stateless=[T00, T01, T10, T11])
    assert members["a"].active == (T10, T11)
    assert members["b"].active == (T00, T01)


def test_unknown_clients_are_skipped() -> None:
    app = state([_client({"a": ([], [])})], [T00])
    result = task_assignment(
        [KafkaStreamsAssignment.of(pid(1), [T00]), KafkaStreamsAssignment.of(pid(9), [T01])]
    )
    assert [m.member_id for m in distribute_tasks(app, result)] == ["a"]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 5),
    st.lists(st.sampled_from([T00, T01, T02, T03, T10, T11, T12, T13]), unique=True),
    st.lists(st.sampled_from([T00, T01, T02, T03, T10, T11, T12, T13]), unique=True, max_size=3),
    st.randoms(use_true_random=False),
)
def test_every_task_once_and_totals_within_one(
    n_consumers: int, owned: list[TaskId], stateless: list[TaskId], rng: random.Random
) -> None:
    all_tasks = [T00, T01, T02, T03, T10, T11, T12, T13]
    rng.shuffle(all_tasks)
    split = rng.randint(0, len(all_tasks))
    active, standby = all_tasks[:split], [t for t in all_tasks[split:] if t not in stateless]
    active = active + [t for t in stateless if t not in active]
    lags = {t: rng.choice([-2, 0, 5, 100]) for t in all_tasks if t not in stateless}
    consumers = {
        f"m{i}": (
            [t for t in owned if (t.subtopology + t.partition + i) % n_consumers == 0],
            owned[i::n_consumers],
        )
        for i in range(n_consumers)
    }
    client = _client(consumers, lags)
    members = _spread(client, active, standby, stateless)
    got_active = sorted((t for m in members.values() for t in m.active), key=lambda t: t.sort_key)
    got_standby = sorted((t for m in members.values() for t in m.standby), key=lambda t: t.sort_key)
    assert got_active == sorted(set(active), key=lambda t: t.sort_key)
    assert got_standby == sorted(standby, key=lambda t: t.sort_key)
    totals = [len(m.active) + len(m.standby) for m in members.values()]
    assert max(totals) - min(totals) <= 1
    reversed_client = _client(dict(reversed(list(consumers.items()))), lags)
    assert _spread(reversed_client, active, standby, stateless) == members


@settings(max_examples=40, deadline=None)
@given(shared.app_states(max_clients=5), st.integers(0, 1000))
def test_sticky_results_spread_fully_and_evenly(app: ApplicationState, seed: int) -> None:
    result = StickyTaskAssignor().assign(app)
    members = distribute_tasks(app, result)
    assert [m.member_id for m in members] == sorted(m.member_id for m in members)
    for client_result in result.assignments:
        mine = [m for m in members if m.process_id == client_result.process_id]
        active = sorted((t for m in mine for t in m.active), key=lambda t: t.sort_key)
        standby = sorted((t for m in mine for t in m.standby), key=lambda t: t.sort_key)
        assert (active, standby) == (list(client_result.active), list(client_result.standby))
        totals = [len(m.active) + len(m.standby) for m in mine]
        assert max(totals) - min(totals) <= 1
    assert distribute_tasks(shared.shuffled(app, seed), result) == members


def test_three_consumers_are_dealt_round_robin_in_task_order() -> None:
    # no history: task i of the sorted list goes to consumer i mod 3, so each consumer gets one
    # task of each sub-topology (two consumers alone could not tell this from a reversed deal)
    client = _client({"c": ([], []), "a": ([], []), "b": ([], [])})
    stateless = [T00, T01, T02, T10, T11, T12]
    members = _spread(client, stateless, stateless=stateless)
    assert members["a"].active == (T00, T10)
    assert members["b"].active == (T01, T11)
    assert members["c"].active == (T02, T12)


def test_standby_leftover_goes_to_the_first_consumer_at_the_floor_counting_actives() -> None:
    # run 1 puts the one active on "a"; run 2 (two standbys) has floor (1 + 2) // 2 = 1: "b" is
    # filled up to it, and the leftover goes to the first consumer at the floor counting what
    # it already runs, which is "a" (1 active), not "b" a second time
    lags = {T00: 0, T01: 0, T02: 0}
    client = _client({"a": ([], []), "b": ([], [])}, lags)
    members = _spread(client, [T00], standby=[T01, T02])
    assert (members["a"].active, members["a"].standby) == ((T00,), (T02,))
    assert (members["b"].active, members["b"].standby) == ((), (T01,))


def test_a_lone_consumer_gets_every_task_sorted_whatever_it_had() -> None:
    client = _client({"a": ([T13], [T12, T02])}, {T00: 0, T02: 5, T12: 0})
    app = state([client], [T00, T02, T12], [T10, T11])
    given = KafkaStreamsAssignment(pid(1), (T11, T00, T10, T00), (T12, T02))  # as a caller may
    (member,) = distribute_tasks(app, task_assignment([given]))
    assert (member.active, member.standby) == ((T00, T10, T11), (T02, T12))
    tidy = KafkaStreamsAssignment(pid(1), (T00, T10, T11), (T02, T12))
    (member,) = distribute_tasks(app, task_assignment([tidy]))
    assert member.active is tidy.active  # already sorted: the given tuple itself, no copy


def test_a_fresh_client_deals_a_caller_s_unsorted_lists_as_sorted_ones() -> None:
    client = _client({"a": ([], []), "b": ([], [])}, {T00: 0, T02: 0, T12: 0})
    app = state([client], [T00, T02, T12], [T10, T11])
    given = KafkaStreamsAssignment(pid(1), (T11, T00, T10), (T12, T02))
    members = distribute_tasks(app, task_assignment([given]))
    tidy = KafkaStreamsAssignment.of(pid(1), {T00, T10, T11}, {T02, T12})
    assert members == distribute_tasks(app, task_assignment([tidy]))
    assert [(m.active, m.standby) for m in members] == [((T00, T11), (T12,)), ((T10,), (T02,))]


def test_a_task_the_topology_lacks_is_spread_with_the_stateless_and_never_kept() -> None:
    # T13 is no task of the topology (a library caller's rejected assignment): "b" had it as
    # an active, but only topology tasks are kept; it is dealt after the stateful run, to "a"
    client = _client({"a": ([], []), "b": ([T13], [])}, {T00: 0, T01: 0})
    app = state([client], [T00, T01])
    given = KafkaStreamsAssignment(pid(1), (T00, T01, T13))
    members = {m.member_id: m for m in distribute_tasks(app, task_assignment([given]))}
    assert (members["a"].active, members["b"].active) == ((T00, T13), (T01,))


def test_a_stateful_task_without_a_lag_is_not_kept() -> None:
    # "a" reported state for T00 and T01, but a caller's lags name only T01: T00 is not kept,
    # so "a" keeps T01 (with both lags 0, it would keep T00, the first by task)
    lagged = _client({"a": ([], [T00, T01]), "b": ([], [])}, {T01: 0})
    members = _spread(lagged, [T00, T01])
    assert (members["a"].active, members["b"].active) == ((T01,), (T00,))
    both = _client({"a": ([], [T00, T01]), "b": ([], [])}, {T00: 0, T01: 0})
    members = _spread(both, [T00, T01])
    assert (members["a"].active, members["b"].active) == ((T00,), (T01,))


def test_a_task_listed_twice_is_dealt_once() -> None:
    client = _client({"a": ([], []), "b": ([], [])}, {T00: 0, T01: 0})
    app = state([client], [T00, T01])
    twice = distribute_tasks(
        app, task_assignment([KafkaStreamsAssignment(pid(1), (T01, T00, T01))])
    )
    once = distribute_tasks(app, task_assignment([KafkaStreamsAssignment(pid(1), (T00, T01))]))
    assert twice == once
    assert [m.active for m in once] == [(T00,), (T01,)]


def test_members_are_made_with_no_step_past_their_fields() -> None:
    # the compiled pass sets a MemberAssignment's fields as unpickling does, past __init__:
    # a __post_init__ (a check, a derived field) would be skipped there
    assert not hasattr(MemberAssignment, "__post_init__")
    assert MemberAssignment.__slots__ == ("member_id", "process_id", "active", "standby")
