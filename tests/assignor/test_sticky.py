"""The sticky assignor keeps tasks where they ran while capacity-proportional balance allows."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import (
    ApplicationState,
    KafkaStreamsState,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.result import TaskAssignment
from kassign.assignor.streams.sticky import StickyTaskAssignor
from kassign.assignor.streams.validate import AssignmentError, validate

from tests.assignor import strategies as shared
from tests.assignor.builders import app_states, client, pid, shuffled, state, tasks

T00, T01, T02, T03, T04, T05, T06 = tasks("0_0 0_1 0_2 0_3 0_4 0_5 0_6")
T10, T11, T12, T13, T20, T21, T22, T23, T30, T31, T32 = tasks(
    "1_0 1_1 1_2 1_3 2_0 2_1 2_2 2_3 3_0 3_1 3_2"
)


def _run(
    clients: Iterable[KafkaStreamsState], all_tasks: Iterable[TaskId], standbys: int = 0
) -> TaskAssignment:
    app = state(clients, all_tasks, assignor="sticky", num_standby_replicas=standbys)
    result = StickyTaskAssignor().assign(app)
    assert not result.followup_scheduled
    return result


def _active(result: TaskAssignment, n: int) -> set[TaskId]:
    return set(result.by_process()[pid(n)].active)


def _standby(result: TaskAssignment, n: int) -> set[TaskId]:
    return set(result.by_process()[pid(n)].standby)


def _held(result: TaskAssignment, n: int) -> set[TaskId]:
    return _active(result, n) | _standby(result, n)


def _all_active(result: TaskAssignment) -> list[TaskId]:
    return sorted(t for a in result.assignments for t in a.active)


def test_one_task_per_client_when_counts_match() -> None:
    result = _run([client(1), client(2), client(3)], [T00, T01, T02])
    assert all(len(a.active) == 1 for a in result.assignments)


@pytest.mark.parametrize("standbys", [0, 1])
def test_sub_topologies_spread_evenly(standbys: int) -> None:
    result = _run(
        [client(i, threads=2) for i in (1, 2, 3)], [T10, T11, T12, T20, T21, T22], standbys
    )
    for n in (1, 2, 3):
        assert sorted(t.subtopology for t in _active(result, n)) == [1, 2]


def test_previous_actives_stay_put() -> None:
    result = _run([client(1, active=[T00]), client(2, active=[T01])], [T00, T01, T02])
    assert T00 in _active(result, 1) and T01 in _active(result, 2)
    assert _all_active(result) == [T00, T01, T02]
    flipped = _run([client(1, active=[T01]), client(2, active=[T02])], [T00, T01, T02])
    assert T01 in _active(flipped, 1) and T02 in _active(flipped, 2)


def test_a_new_client_takes_one_task_and_the_rest_stay() -> None:
    result = _run(
        [client(1, active=[T00, T02]), client(2, active=[T01]), client(3)], [T00, T01, T02]
    )
    assert _active(result, 2) == {T01}
    assert len(_active(result, 1)) == 1 and len(_active(result, 3)) == 1
    assert _active(result, 1) < {T00, T02}


def test_capacity_proportional() -> None:
    result = _run([client(1), client(2, threads=2)], [T00, T01, T02])
    assert (len(_active(result, 1)), len(_active(result, 2))) == (1, 2)


def test_unequal_sub_topologies_split_three_four() -> None:
    seven = [T00, T01, T02, T03, T04, T05, T10]
    result = _run([client(1, active=seven), client(2)], seven)
    assert sorted((len(_active(result, 1)), len(_active(result, 2)))) == [3, 4]
    assert _active(result, 1) | _active(result, 2) == set(seven)


def test_sticky_when_clients_outnumber_tasks() -> None:
    result = _run(
        [
            client(1, active=[T00]),
            client(2, active=[T02]),
            client(3, active=[T01]),
            client(4),
            client(5),
        ],
        [T00, T01, T02],
    )
    assert (_active(result, 1), _active(result, 2), _active(result, 3)) == ({T00}, {T02}, {T01})
    moved = _run(
        [
            client(1),
            client(2, active=[T00]),
            client(3),
            client(4, active=[T02]),
            client(5, active=[T01]),
        ],
        [T00, T01, T02],
    )
    assert (_active(moved, 2), _active(moved, 4), _active(moved, 5)) == ({T00}, {T02}, {T01})


def test_previous_standby_owner_takes_the_active() -> None:
    result = _run(
        [client(1, standby=[T02]), client(2, standby=[T01]), client(3, standby=[T00])],
        [T00, T01, T02],
    )
    assert (_active(result, 1), _active(result, 2), _active(result, 3)) == ({T02}, {T01}, {T00})


def test_capacity_decides_between_previous_standby_owners() -> None:
    result = _run(
        [client(1, active=[T00], standby=[T01]), client(2, threads=2, active=[T02], standby=[T01])],
        [T00, T01, T02],
    )
    assert _active(result, 1) == {T00}
    assert _active(result, 2) == {T01, T02}


def test_standby_never_beside_its_active_and_spread() -> None:
    result = _run(
        [client(i, active=[t]) for i, t in zip((1, 2, 3, 4), (T00, T01, T02, T03))],
        [T00, T01, T02, T03],
        1,
    )
    for n, t in zip((1, 2, 3, 4), (T00, T01, T02, T03)):
        assert t not in _standby(result, n)
        assert len(_standby(result, n)) <= 2
    assert sum(1 for a in result.assignments if a.standby) >= 3
    assert sorted(t for a in result.assignments for t in a.standby) == [T00, T01, T02, T03]


def test_two_replicas_on_three_clients() -> None:
    result = _run(
        [client(1, active=[T00]), client(2, active=[T01]), client(3, active=[T02])],
        [T00, T01, T02],
        2,
    )
    assert (_standby(result, 1), _standby(result, 2), _standby(result, 3)) == (
        {T01, T02},
        {T00, T02},
        {T00, T01},
    )


def test_no_standby_without_another_client() -> None:
    result = _run([client(1)], [T00], 1)
    assert _standby(result, 1) == set()
    assert "fewer than 1" in result.diagnostics.notes[0]


def test_actives_and_standbys_everywhere() -> None:
    result = _run([client(1), client(2), client(3)], [T00, T01, T02], 1)
    assert _all_active(result) == [T00, T01, T02]
    assert sorted(t for a in result.assignments for t in a.standby) == [T00, T01, T02]


def test_at_least_one_task_each_when_possible() -> None:
    result = _run([client(1, threads=3), client(2), client(3)], [T00, T01, T02])
    assert [len(_held(result, n)) for n in (1, 2, 3)] == [1, 1, 1]


def test_each_active_once_with_more_clients_than_tasks() -> None:
    result = _run([client(i) for i in range(1, 7)], [T00, T01, T02])
    assert _all_active(result) == [T00, T01, T02]


def test_actives_and_standbys_balanced_over_six_clients() -> None:
    result = _run([client(i) for i in range(1, 7)], [T00, T01, T02], 1)
    assert [len(_held(result, n)) for n in range(1, 7)] == [1] * 6


def test_more_threads_more_tasks() -> None:
    twelve = [T00, T01, T02, T10, T11, T12, T20, T21, T22, T30, T31, T32]
    result = _run([client(2, threads=2), client(1)], twelve)
    assert (len(_held(result, 2)), len(_held(result, 1))) == (8, 4)


def test_even_spread_by_sub_topology_and_partition() -> None:
    sixteen = [TaskId(s, p) for s in range(2) for p in range(8)]
    result = _run([client(i, threads=4) for i in (1, 2, 3, 4)], sixteen, 1)
    for offset, n in enumerate((1, 2, 3, 4)):
        assert _active(result, n) == {
            sixteen[i] for i in (offset, offset + 4, offset + 8, offset + 12)
        }


@pytest.mark.parametrize(
    "clients",
    [
        [client(1), client(2), client(3), client(4)],
        [client(1, active=[T01, T02]), client(2, active=[T03]), client(3, active=[T00]), client(4)],
        [
            client(1, active=[T01, T02], standby=[T03, T00]),
            client(2, active=[T03, T00], standby=[T01, T02]),
            client(3),
            client(4),
        ],
    ],
)
def test_no_two_clients_hold_the_same_tasks(clients: list[KafkaStreamsState]) -> None:
    result = _run(clients, [T00, T01, T02, T03], 1)
    held = [frozenset(a.active + a.standby) for a in result.assignments]
    assert len(set(held)) == len(held)


def test_rebalances_when_one_client_had_everything() -> None:
    four = [T00, T01, T02, T03]
    result = _run([client(3, active=four), client(1), client(2), client(4)], four)
    assert [len(_held(result, n)) for n in (1, 2, 3, 4)] == [1, 1, 1, 1]
    result = _run([client(3, active=four), client(1), client(2)], four)
    assert [len(_held(result, n)) for n in (3, 1, 2)] == [2, 1, 1]


def test_rebalances_by_capacity() -> None:
    result = _run([client(2, active=[T00, T03, T02]), client(3, threads=2)], [T00, T02, T03])
    assert (len(_held(result, 2)), len(_held(result, 3))) == (1, 2)


def test_minimal_movement_when_a_client_joins() -> None:
    result = _run(
        [client(1, active=[T00, T02]), client(2, active=[T01, T03]), client(3)],
        [T00, T01, T02, T03],
    )
    joined = _active(result, 3)
    assert len(joined) == 1
    if joined <= {T00, T02}:
        assert _active(result, 2) == {T01, T03}
    else:
        assert _active(result, 1) == {T00, T02}


def test_new_tasks_do_not_move_old_ones() -> None:
    result = _run(
        [client(1, active=[T00, T01]), client(2, active=[T02, T03])], [T00, T01, T02, T03, T04, T05]
    )
    assert _active(result, 1) >= {T00, T01} and _active(result, 2) >= {T02, T03}


def test_new_tasks_go_to_the_new_client() -> None:
    result = _run(
        [client(1, active=[T02, T01]), client(2, active=[T00, T03]), client(3)],
        [T00, T01, T02, T03, T04, T05],
    )
    assert _active(result, 1) >= {T01, T02} and _active(result, 2) >= {T00, T03}
    assert _active(result, 3) >= {T04, T05}


TWELVE = [T00, T10, T01, T02, T11, T20, T03, T12, T21, T13, T22, T23]


def test_tasks_not_previously_active_go_to_the_new_client() -> None:
    result = _run(
        [
            client(1, active=[T01, T12, T13], standby=[T00, T11, T20, T21, T23]),
            client(
                2, active=[T00, T11, T22], standby=[T01, T10, T02, T20, T03, T12, T21, T13, T23]
            ),
            client(3, active=[T20, T21, T23], standby=[T02, T12]),
            client(4, standby=[T00, T10, T01, T02, T11, T20, T03, T12, T21, T13, T22, T23]),
        ],
        TWELVE,
    )
    assert _active(result, 1) == {T01, T12, T13}
    assert _active(result, 2) == {T00, T11, T22}
    assert _active(result, 3) == {T20, T21, T23}
    assert _active(result, 4) == {T02, T03, T10}


def test_tasks_not_previously_active_go_to_bounced_clients_that_had_them() -> None:
    result = _run(
        [
            client(1, active=[T01, T12, T13], standby=[T00, T11, T20, T21, T23]),
            client(
                2, active=[T00, T11, T22], standby=[T01, T10, T02, T20, T03, T12, T21, T13, T23]
            ),
            client(3, standby=[T20, T21, T23]),
            client(4, standby=[T02, T03, T10]),
        ],
        TWELVE,
    )
    assert _active(result, 1) == {T01, T12, T13}
    assert _active(result, 2) == {T00, T11, T22}
    assert _active(result, 3) == {T20, T21, T23}
    assert _active(result, 4) == {T02, T03, T10}


def test_new_client_without_flipping_existing_ones() -> None:
    result = _run(
        [client(1, active=[T00, T01, T02]), client(2, active=[T03, T04, T05]), client(3)],
        [T00, T01, T02, T03, T04, T05],
    )
    assert len(_active(result, 1)) == 2 and _active(result, 1) <= {T00, T01, T02}
    assert len(_active(result, 2)) == 2 and _active(result, 2) <= {T03, T04, T05}
    assert len(_active(result, 3)) == 2


def test_new_client_without_flipping_existing_and_bounced_ones() -> None:
    result = _run(
        [client(1, active=[T00, T01, T02, T06]), client(2, standby=[T03, T04, T05]), client(3)],
        [T00, T01, T02, T03, T04, T05, T06],
    )
    assert len(_active(result, 1)) >= 2 and not _active(result, 1) & {T03, T04, T05}
    assert len(_active(result, 2)) >= 2 and not _active(result, 2) & {T00, T01, T02}
    assert len(_active(result, 3)) == 2


def test_a_task_moves_to_a_new_client() -> None:
    result = _run([client(1, active=[T01, T02]), client(2)], [T01, T02])
    assert len(_active(result, 1)) == 1


# ---- properties ------------------------------------------------------------------------------


def _assert_valid(app: ApplicationState, result: TaskAssignment) -> None:
    actives = [t for a in result.assignments for t in a.active]
    assert sorted(actives, key=lambda t: t.sort_key) == list(app.tasks)
    for a in result.assignments:
        assert not set(a.active) & set(a.standby)
        assert all(app.tasks[t].stateful for t in a.standby)


@settings(max_examples=60, deadline=None)
@given(app_states(max_clients=6, max_tasks=12))
def test_valid_and_deterministic(app: ApplicationState) -> None:
    result = StickyTaskAssignor().assign(app)
    _assert_valid(app, result)
    assert StickyTaskAssignor().assign(shuffled(app, seed=7)) == result


@settings(max_examples=60, deadline=None)
@given(app_states(max_clients=6, max_tasks=12, tagged=False))
def test_previous_owners_keep_tasks_within_their_quota(app: ApplicationState) -> None:
    """A client keeps at least min(its previous actives, threads x (tasks // total threads))."""
    result = StickyTaskAssignor().assign(app).by_process()
    quota = len(app.tasks) // sum(c.num_threads for c in app.clients.values())
    owner = {
        t: p for p, c in app.clients.items() for t in c.previous_active_tasks
    }  # last owner wins
    for p, c in app.clients.items():
        owned = {t for t in c.previous_active_tasks if owner.get(t) == p and t in app.tasks}
        kept = owned & set(result[p].active)
        assert len(kept) >= min(len(owned), c.num_threads * quota)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=5),
    st.integers(1, 3),
    st.integers(0, 2),
    st.randoms(use_true_random=False),
)
def test_a_balanced_previous_assignment_is_kept(
    threads: list[int], per_thread: int, standbys: int, rng: random.Random
) -> None:
    """Every client previously ran exactly threads x quota tasks: nothing moves."""
    n_tasks = sum(threads) * per_thread
    all_tasks = [TaskId(i % 3, i) for i in range(n_tasks)]
    rng.shuffle(all_tasks)
    clients, start = [], 0
    for n, t in enumerate(threads, start=1):
        clients.append(client(n, threads=t, active=all_tasks[start : start + t * per_thread]))
        start += t * per_thread
    result = _run(clients, all_tasks, standbys).by_process()
    for c in clients:
        assert set(result[c.process_id].active) == c.previous_active_tasks


def test_process_order_is_java_uuid_order() -> None:
    """With a tie, the client first in Java order wins: a negative-half id comes before pid(1)."""
    from dataclasses import replace

    negative = UUID("f0000000-0000-0000-0000-000000000000")
    result = StickyTaskAssignor().assign(
        state([client(1), replace(client(2), process_id=negative)], [T00])
    )
    assert result.by_process()[negative].active == (T00,)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=2, max_size=7),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 6)), max_size=30),
    st.integers(0, 11),
)
def test_heap_choice_matches_a_scan_of_every_client(
    threads: list[int], gifts: list[tuple[int, int]], probe: int
) -> None:
    """The book's heaps pick what Kafka's scan over all clients (in process order) picks."""
    from kassign.assignor.streams.result import TaskType
    from kassign.assignor.streams.sticky_ledger import (
        ClientBook,
        least_loaded_anywhere,
        least_loaded_of,
    )

    all_tasks = [TaskId(i % 2, i) for i in range(12)]
    app = state([client(n, threads=t) for n, t in enumerate(threads, start=1)], all_tasks)
    book = ClientBook(app)
    pids = list(app.clients)
    for task_no, client_no in gifts:
        task, pid_ = all_tasks[task_no], pids[client_no % len(pids)]
        if pid_ not in book.holders(task):
            book.give(task, pid_, TaskType.ACTIVE)
    task = all_tasks[probe]
    taken = book.holders(task)
    free = [p for p in pids if p not in taken]
    if free:
        assert least_loaded_anywhere(book, task, taken) == least_loaded_of(book, task, free)


@settings(max_examples=40, deadline=None)
@given(shared.app_states(max_clients=6), st.integers(0, 1000))
def test_order_of_the_input_mappings_does_not_matter(app: ApplicationState, seed: int) -> None:
    """With lags, racks and tags from the shared strategy; mappings shuffled, not re-sorted."""
    result = StickyTaskAssignor().assign(app)
    assert validate(app, result) is AssignmentError.NONE
    assert StickyTaskAssignor().assign(shared.shuffled(app, seed)) == result


def test_rack_trim_moves_tasks_to_their_rack_without_changing_counts() -> None:
    """MIN_TRAFFIC with traffic dominating: each task ends on the client in its partition's rack.

    The changelogs have replicas in both racks, so where the standbys go costs nothing: with a
    changelog in one rack only, exchanging roles back to the previous owners would cost the same
    traffic and win on stickiness (``rack/joint.py``).
    """
    from kassign.assignor.streams.model import (
        AssignmentConfigs,
        TaskInfo,
        TaskTopicPartition,
        application_state,
    )

    def task(n: int, rack: str) -> TaskInfo:
        partition = TaskTopicPartition("in", n, True, False, frozenset({rack}))
        changelog = TaskTopicPartition("log", n, False, True, frozenset({"r1", "r2"}))
        return TaskInfo(TaskId(0, n), True, ("store",), (partition, changelog))

    infos = [task(0, "r2"), task(1, "r1"), task(2, "r2"), task(3, "r1")]
    clients = [
        client(1, rack="r1", active=[TaskId(0, 0), TaskId(0, 2)]),
        client(2, rack="r2", active=[TaskId(0, 1), TaskId(0, 3)]),
    ]
    configs = AssignmentConfigs(
        assignor="sticky",
        num_standby_replicas=1,
        rack_aware_strategy=RackAwareStrategy.MIN_TRAFFIC,
        traffic_cost=10,
        non_overlap_cost=1,
    )
    app = application_state(infos, clients, configs)
    result = StickyTaskAssignor().assign(app)
    assert validate(app, result) is AssignmentError.NONE
    assert _active(result, 1) == {TaskId(0, 1), TaskId(0, 3)}
    assert _active(result, 2) == {TaskId(0, 0), TaskId(0, 2)}
    assert result.diagnostics.rack_optimisation != "off"
    plain = StickyTaskAssignor().assign(
        replace(app, configs=replace(configs, rack_aware_strategy=RackAwareStrategy.NONE))
    )
    assert _active(plain, 1) == {TaskId(0, 0), TaskId(0, 2)}  # sticky alone keeps them


def test_rack_module_is_not_imported_without_a_strategy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from kassign.assignor.streams.sticky import StickyTaskAssignor\n"
        "from tests.assignor.builders import client, state, tasks\n"
        "StickyTaskAssignor().assign(state([client(1), client(2)], tasks('0_0 0_1'), num_standby_replicas=1))\n"
        "print('kassign.assignor.streams.rack.optimise' in sys.modules, 'ortools' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.split() == ["False", "False"]


def test_standbys_follow_tags_when_configured() -> None:
    """Kafka's legacy sticky ignores KIP-708 tags; ours places its standbys by them."""
    clients = [
        client(n, tags={"zone": z}, active=[t])
        for n, z, t in ((1, "a", T00), (2, "a", T01), (3, "b", T02))
    ]
    app = state(
        clients,
        [T00, T01, T02],
        assignor="sticky",
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
    )
    result = StickyTaskAssignor().assign(app)
    assert T00 in _standby(result, 3) and T01 in _standby(result, 3)
    assert _active(result, 1) == {T00} and _active(result, 3) == {T02}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=2, max_size=6),
    st.integers(1, 3),
    st.integers(0, 5),
    st.randoms(use_true_random=False),
)
def test_when_a_client_leaves_only_its_tasks_move(
    threads: list[int], per_thread: int, leaver: int, rng: random.Random
) -> None:
    n_tasks = sum(threads) * per_thread
    all_tasks = [TaskId(i % 3, i) for i in range(n_tasks)]
    rng.shuffle(all_tasks)
    clients, start = [], 0
    for n, t in enumerate(threads, start=1):
        clients.append(client(n, threads=t, active=all_tasks[start : start + t * per_thread]))
        start += t * per_thread
    gone = clients.pop(leaver % len(clients))
    result = _run(clients, all_tasks).by_process()
    for c in clients:
        assert set(result[c.process_id].active) >= c.previous_active_tasks
    moved = [t for a in result.values() for t in a.active if t in gone.previous_active_tasks]
    assert sorted(moved, key=lambda t: t.sort_key) == sorted(
        gone.previous_active_tasks, key=lambda t: t.sort_key
    )


def _single_standby_group(strategy: RackAwareStrategy) -> ApplicationState:
    """Clients in racks c, a, b, four tasks, one standby replica, traffic dominating."""
    from tests.assignor import rack_cases as rc

    infos = [
        rc.task_info(TaskId(0, 0), [["a"], ["b"]]),
        rc.task_info(TaskId(0, 1), [["a"]]),
        rc.task_info(TaskId(0, 2), [["a"], ["b"]]),
        rc.task_info(TaskId(0, 3), [["b"], ["a"]]),
    ]
    clients = [rc.client(0, "c"), rc.client(1, "a"), rc.client(2, "b")]
    return rc.state_of(
        infos,
        clients,
        strategy,
        assignor="sticky",
        num_standby_replicas=1,
        traffic_cost=10,
        non_overlap_cost=1,
    )


def _standby_misses(app: ApplicationState, result: TaskAssignment) -> int:
    from tests.assignor.rack_cases import misses

    return sum(
        misses(app, t, a.process_id, standby=True) for a in result.assignments for t in a.standby
    )


def test_a_single_standby_replica_is_rack_optimised_too() -> None:
    """KIP-925 optimises standbys whenever there are any: one replica is enough to trigger it.

    The actives are already where the optimiser leaves them, so only the standbys can differ
    from the run without a strategy, and they must cross fewer racks.
    """
    app = _single_standby_group(RackAwareStrategy.MIN_TRAFFIC)
    tuned = StickyTaskAssignor().assign(app)
    untuned = StickyTaskAssignor().assign(_single_standby_group(RackAwareStrategy.NONE))
    assert validate(app, tuned) is AssignmentError.NONE
    assert [a.active for a in tuned.assignments] == [a.active for a in untuned.assignments]
    assert _standby_misses(app, tuned) < _standby_misses(app, untuned)


def test_the_standby_optimisation_is_reported_in_the_diagnostics() -> None:
    # the actives gain nothing here, so a lower reported cost can only come from the standbys
    app = _single_standby_group(RackAwareStrategy.MIN_TRAFFIC)
    diagnostics = StickyTaskAssignor().assign(app).diagnostics
    assert diagnostics.cross_rack_cost_after < diagnostics.cross_rack_cost_before
    assert any("standbys" in note for note in diagnostics.notes)


def test_the_short_note_counts_every_task_and_names_the_first_five() -> None:
    # one client cannot hold a standby of anything; the note counts all seven, names five
    result = _run([client(1)], [T00, T01, T02, T03, T04, T05, T06], 1)
    (note,) = result.diagnostics.notes
    assert note.startswith("7 task(s)")
    assert note.endswith("(first: 0_0, 0_1, 0_2, 0_3, 0_4)")


@settings(max_examples=40, deadline=None)
@given(app_states())
def test_sticky_actives_are_the_assignors_actives(app: ApplicationState) -> None:
    from kassign.assignor.streams.sticky import sticky_actives

    result = StickyTaskAssignor().assign(app)
    assert sticky_actives(app) == {a.process_id: frozenset(a.active) for a in result.assignments}


def _rack_trim_group(*, standbys: int) -> ApplicationState:
    """Two clients in racks r1/r2, each running the other rack's tasks; traffic dominates.

    Stateful 0_0/0_2 and stateless 1_0 read from r2 and run on client 1; 0_1/0_3 and 1_1
    read from r1 and run on client 2.
    """
    from tests.assignor import rack_cases as rc

    infos = [
        rc.task_info(TaskId(0, 0), [["r2"]]),
        rc.task_info(TaskId(0, 1), [["r1"]]),
        rc.task_info(TaskId(0, 2), [["r2"]]),
        rc.task_info(TaskId(0, 3), [["r1"]]),
        rc.task_info(TaskId(1, 0), [["r2"]], stateful=False),
        rc.task_info(TaskId(1, 1), [["r1"]], stateful=False),
    ]
    clients = [
        client(1, rack="r1", active=[T00, T02, T10]),
        client(2, rack="r2", active=[T01, T03, T11]),
    ]
    return rc.state_of(
        infos,
        clients,
        RackAwareStrategy.MIN_TRAFFIC,
        assignor="sticky",
        num_standby_replicas=standbys,
        traffic_cost=10,
        non_overlap_cost=1,
    )


def test_rack_trim_moves_stateless_tasks_to_their_rack_too() -> None:
    app = _rack_trim_group(standbys=0)
    result = StickyTaskAssignor().assign(app).by_process()
    p1, p2 = sorted(app.clients)
    assert set(result[p1].active) == {T01, T03, T11}
    assert set(result[p2].active) == {T00, T02, T10}


def test_standbys_are_placed_against_the_trimmed_actives() -> None:
    # after the trim each client runs the other's old tasks: a standby placed against the old
    # actives would land beside its own active
    app = _rack_trim_group(standbys=1)
    result = StickyTaskAssignor().assign(app)
    assert validate(app, result) is AssignmentError.NONE
    for a in result.assignments:
        assert not set(a.active) & set(a.standby)
        assert set(a.standby) == {T00, T01, T02, T03} - set(a.active)


def test_tag_aware_standby_notes_reach_the_diagnostics() -> None:
    app = state(
        [client(1, tags={"zone": "a"})],
        [T00],
        assignor="sticky",
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
    )
    notes = StickyTaskAssignor().assign(app).diagnostics.notes
    assert any("fewer than 1 standby" in note for note in notes)


def test_rack_trim_costs_count_the_stateless_tasks() -> None:
    # each of the six tasks reads one partition from the other rack before the trim, none after
    diagnostics = StickyTaskAssignor().assign(_rack_trim_group(standbys=0)).diagnostics
    assert (diagnostics.cross_rack_cost_before, diagnostics.cross_rack_cost_after) == (6, 0)
