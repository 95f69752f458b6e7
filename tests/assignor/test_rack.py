"""Rack-aware optimisation (KIP-925): when it runs, what it moves, what it must never change.

Scenarios follow the behaviours Kafka's RackAwareTaskAssignorTest, RackAwareGraphConstructorTest
and the min_traffic / balance_subtopology assignor cases check, written as our own.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kassign.assignor.errors import InvalidAssignment, InvalidRequest
from kassign.assignor.streams.model import (
    AssignmentConfigs,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
)
from kassign.assignor.streams.rack.active_flow import ActiveProblem, subtopology_bounds
from kassign.assignor.streams.rack.costs import CostPhase, resolve_costs
from kassign.assignor.streams.rack.optimise import optimize_active_tasks, optimize_standby_tasks

from tests.assignor.rack_cases import (
    client,
    cost,
    counts,
    diversity,
    kafka_standby_swaps,
    pid,
    state_of,
    task_info,
)

if TYPE_CHECKING:
    from kassign_native import StandbyInput

T = [TaskId(0, i) for i in range(6)]


def _two_racks_crossed():
    """Tasks 0-2 read from rack b, tasks 3-5 from rack a; client 0 (a) starts with 0-2."""
    tasks = [task_info(t, [{"b"}]) for t in T[:3]] + [task_info(t, [{"a"}]) for t in T[3:]]
    state = state_of(tasks, [client(0, "a"), client(1, "b")])
    start = {pid(0): frozenset(T[:3]), pid(1): frozenset(T[3:])}
    return state, start


def test_tasks_swap_to_the_rack_holding_their_partitions() -> None:
    state, start = _two_racks_crossed()
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == {pid(0): frozenset(T[3:]), pid(1): frozenset(T[:3])}
    assert diag.rack_optimisation == "optimal"
    assert (diag.cross_rack_cost_before, diag.cross_rack_cost_after) == (6, 0)
    assert not diag.solver_fallback


def test_high_non_overlap_cost_keeps_the_start() -> None:
    state, start = _two_racks_crossed()
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=1, non_overlap_cost=10)
    assert result == start and diag.rack_optimisation == "optimal"


def test_strategy_none_is_off_and_changes_nothing() -> None:
    state, start = _two_racks_crossed()
    state = dataclasses.replace(state, configs=AssignmentConfigs())
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == start and diag.rack_optimisation == "off"


def test_disabled_when_a_client_has_no_rack() -> None:
    state, start = _two_racks_crossed()
    state = state_of(state.tasks.values(), [client(0, "a"), client(1, None)])
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == start
    assert diag.rack_optimisation == f"disabled: client {pid(1)} has no rack"


def test_disabled_when_a_partition_has_no_known_racks() -> None:
    state, start = _two_racks_crossed()
    tasks = list(state.tasks.values())
    tasks[4] = task_info(T[4], [set()])
    state = state_of(tasks, state.clients.values())
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == start
    assert diag.rack_optimisation.startswith("disabled: partition topic0-4 of task 0_4")


def test_disabled_when_traffic_cannot_differ() -> None:
    state, start = _two_racks_crossed()
    _, zero = optimize_active_tasks(state, T, start, traffic_cost=0, non_overlap_cost=5)
    assert zero.rack_optimisation == "disabled: traffic_cost is 0"
    everywhere = state_of([task_info(t, [{"a", "b"}]) for t in T], state.clients.values())
    result, same = optimize_active_tasks(everywhere, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == start and same.rack_optimisation.startswith("disabled: every task")


def test_clients_keep_their_task_counts_including_zero() -> None:
    tasks = [task_info(t, [{"c"}]) for t in T]
    state = state_of(tasks, [client(0, "a"), client(1, "b"), client(2, "c"), client(3, "c")])
    start = {
        pid(0): frozenset(T[:4]),
        pid(1): frozenset(T[4:]),
        pid(2): frozenset(),
        pid(3): frozenset(),
    }
    result, _ = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=0)
    assert counts(result) == counts(start)


def test_only_the_given_tasks_move_and_others_stay_put() -> None:
    state, start = _two_racks_crossed()
    extra = TaskId(9, 0)
    state = state_of(
        [*state.tasks.values(), task_info(extra, [{"b"}], stateful=False)], state.clients.values()
    )
    start = {pid(0): start[pid(0)] | {extra}, pid(1): start[pid(1)]}
    result, _ = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert extra in result[pid(0)] and len(result[pid(0)]) == 4


def test_a_task_on_no_client_or_on_two_is_the_callers_error() -> None:
    state, start = _two_racks_crossed()
    with pytest.raises(InvalidAssignment):
        optimize_active_tasks(
            state,
            T,
            {pid(0): start[pid(0)], pid(1): frozenset()},
            traffic_cost=1,
            non_overlap_cost=1,
        )
    with pytest.raises(InvalidAssignment):
        optimize_active_tasks(
            state,
            T,
            {pid(0): frozenset(T), pid(1): start[pid(1)]},
            traffic_cost=1,
            non_overlap_cost=1,
        )


def test_negative_or_huge_costs_are_rejected() -> None:
    state, start = _two_racks_crossed()
    with pytest.raises(InvalidRequest):
        optimize_active_tasks(state, T, start, traffic_cost=-1, non_overlap_cost=1)
    with pytest.raises(InvalidRequest):
        optimize_active_tasks(state, T, start, traffic_cost=1, non_overlap_cost=1 << 40)


def test_an_exhausted_time_budget_falls_back_to_the_input() -> None:
    state, start = _two_racks_crossed()
    state = dataclasses.replace(
        state, configs=dataclasses.replace(state.configs, assignment_time_budget_ms=0)
    )
    result, diag = optimize_active_tasks(state, T, start, traffic_cost=10, non_overlap_cost=1)
    assert result == start and diag.solver_fallback
    assert diag.rack_optimisation.startswith("fallback: time budget of 0 ms")
    assert diag.cross_rack_cost_before == diag.cross_rack_cost_after == 6


def _with_budget(state, budget_ms: int):  # type: ignore[no-untyped-def]
    configs = dataclasses.replace(state.configs, assignment_time_budget_ms=budget_ms)
    return dataclasses.replace(state, configs=configs)


def _optimise(kind: str, budget_ms: int | None):  # type: ignore[no-untyped-def]
    """One optimisation call of ``kind`` on its small case, under ``budget_ms``."""
    if kind == "active":
        state, start = _two_racks_crossed()
        return optimize_active_tasks(
            _with_budget(state, budget_ms), T, start, traffic_cost=10, non_overlap_cost=1
        )
    state, active, standby = _swappable_standbys()
    return optimize_standby_tasks(
        _with_budget(state, budget_ms), active, standby, traffic_cost=10, non_overlap_cost=1
    )


@pytest.mark.parametrize("kind", ["active", "standby"])
def test_a_slow_machine_changes_nothing(monkeypatch, kind: str) -> None:  # type: ignore[no-untyped-def]
    # Every clock read a second after the last: as if the machine were loaded or paused.
    expected = _optimise(kind, 40)
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(ticks)))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))
    assert _optimise(kind, 40) == expected
    assert expected[1].rack_optimisation == "optimal"


_ESTIMATE = re.compile(r"too small for (\d+) arcs \(about (\d+) ms\)")


@pytest.mark.parametrize("kind", ["active", "standby"])
def test_the_budget_is_compared_with_the_estimated_work_alone(monkeypatch, kind: str) -> None:  # type: ignore[no-untyped-def]
    # With a millisecond per arc, the smallest budget that lets every solve run is the
    # number of arcs solved; one millisecond less falls back, with the estimate in the reason.
    from kassign.assignor.streams.rack import outcomes

    monkeypatch.setattr(outcomes, "_MS_PER_ARC", 1.0)
    budget, reasons = 1, []
    result, diag = _optimise(kind, budget)
    while diag.solver_fallback:
        found = _ESTIMATE.search(diag.rack_reason)
        assert found and found[1] == found[2], diag.rack_reason
        reasons.append(diag.rack_reason)
        budget = int(found[1])
        result, diag = _optimise(kind, budget)
    assert reasons and diag.rack_optimisation == "optimal"
    short, short_diag = _optimise(kind, budget - 1)
    assert short_diag.solver_fallback and short != result
    assert short_diag.rack_reason.startswith(f"time budget of {budget - 1} ms too small for ")
    assert short_diag.cross_rack_cost_before == short_diag.cross_rack_cost_after


def test_default_costs_per_assignor() -> None:
    none = AssignmentConfigs()
    assert resolve_costs(none, CostPhase.HIGH_AVAILABILITY) == (10, 1)
    assert resolve_costs(none, CostPhase.STICKY) == (1, 10)
    assert resolve_costs(none, CostPhase.STATELESS) == (1, 0)
    set_ = AssignmentConfigs(traffic_cost=3, non_overlap_cost=4)
    assert resolve_costs(set_, CostPhase.STICKY) == (3, 4)
    assert resolve_costs(set_, CostPhase.STATELESS) == (1, 0)


def test_kip_example_subtopology_bounds() -> None:
    # KIP-925 4.B.II: clients with 1, 2, 3 tasks; two subtopologies of three: caps 1, 1, 2.
    problem = ActiveProblem(
        client_rack=np.zeros(3, np.int64),
        start=np.array([0, 1, 1, 2, 2, 2]),
        misses=np.zeros((6, 1), np.int64),
        traffic_cost=1,
        non_overlap_cost=0,
        subtopology=np.array([0, 0, 0, 1, 1, 1]),
    )
    assert subtopology_bounds(problem).tolist() == [[1, 1, 2], [1, 1, 2]]


def test_balance_subtopology_spreads_what_min_traffic_would_stack() -> None:
    # Every subtopology-0 task reads from rack a: min traffic stacks them on client 0 (rack a).
    sub0 = [task_info(TaskId(0, i), [{"a"}]) for i in range(4)]
    sub1 = [task_info(TaskId(1, i), [{"b"}]) for i in range(4)]
    clients = [client(0, "a"), client(1, "b")]
    ids = [t.id for t in sub0 + sub1]
    start = {pid(0): frozenset(ids[::2]), pid(1): frozenset(ids[1::2])}
    stacked, _ = optimize_active_tasks(
        state_of(sub0 + sub1, clients), ids, start, traffic_cost=1, non_overlap_cost=0
    )
    assert stacked[pid(0)] == frozenset(t.id for t in sub0)
    balanced_state = state_of(sub0 + sub1, clients, RackAwareStrategy.BALANCE_SUBTOPOLOGY)
    spread, diag = optimize_active_tasks(
        balanced_state, ids, start, traffic_cost=1, non_overlap_cost=0
    )
    assert diag.rack_optimisation == "optimal"
    for p in (pid(0), pid(1)):
        assert sum(1 for t in spread[p] if t.subtopology == 0) == 2  # ceil(4 * 4 / 8)


def test_compact_graph_has_tasks_times_racks_arcs_not_tasks_times_clients(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from kassign.assignor.streams.rack import active_flow as rack_graph

    seen = []

    def recording_solve(graph):  # type: ignore[no-untyped-def]
        seen.append(graph.num_arcs)
        return flow_solve(graph)

    flow_solve = rack_graph.solve
    monkeypatch.setattr(rack_graph, "solve", recording_solve)
    rng = np.random.default_rng(0)
    t_n, c_n = 300, 60
    p = ActiveProblem(
        client_rack=np.arange(c_n) % 3,
        start=np.arange(t_n) % c_n,
        misses=rng.integers(0, 3, (t_n, 3)),
        traffic_cost=10,
        non_overlap_cost=1,
    )
    compact, dense = rack_graph.solve_active_compact(p), rack_graph.solve_active_dense(p)
    assert seen == [t_n * (3 + 1) + c_n, t_n * c_n]
    assert rack_graph.placement_cost(p, compact) == rack_graph.placement_cost(p, dense)
    assert np.array_equal(np.bincount(compact, minlength=c_n), p.counts)


def _standby_case(tags: bool):
    """Three racks; active on 0 (rack a); standby starts on client 1 (rack b), far from its data."""
    tasks = [task_info(TaskId(0, 0), [{"c"}])]
    zone = (lambda z: {"zone": z}) if tags else (lambda z: {})
    clients = [
        client(0, "a", **zone("z1")),
        client(1, "b", **zone("z2")),
        client(2, "c", **zone("z2")),
        client(3, "c", **zone("z1")),
        client(4, "a", **zone("z2")),
    ]
    extra: dict[str, object] = (
        {"rack_aware_assignment_tags": ("zone",)} if tags else {"standby_rack_spread": True}
    )
    state = state_of(tasks, clients, num_standby_replicas=1, **extra)
    active = {pid(0): frozenset({TaskId(0, 0)})}
    standby = {pid(1): frozenset({TaskId(0, 0)}), pid(4): frozenset()}
    return state, active, standby


def _swappable_standbys():  # type: ignore[no-untyped-def]
    state, _, _ = _standby_case(tags=True)
    # Client 1 holds nothing else, so only a swap could move it; give client 2 a standby to swap.
    tasks = [*state.tasks.values(), task_info(TaskId(0, 1), [{"b"}])]
    state = state_of(
        tasks, state.clients.values(), num_standby_replicas=1, rack_aware_assignment_tags=("zone",)
    )
    active = {pid(0): frozenset({TaskId(0, 0), TaskId(0, 1)})}
    standby = {pid(1): frozenset({TaskId(0, 0)}), pid(2): frozenset({TaskId(0, 1)})}
    return state, active, standby


def test_standby_moves_toward_its_data_when_tags_allow() -> None:
    state, active, standby = _swappable_standbys()
    result, diag = optimize_standby_tasks(
        state, active, standby, traffic_cost=10, non_overlap_cost=1
    )
    assert result[pid(2)] == {TaskId(0, 0)} and result[pid(1)] == {TaskId(0, 1)}
    assert diag.cross_rack_cost_after == 0 and diag.cross_rack_cost_before == 2
    assert diversity(state, active, result) == diversity(state, active, standby)


def _diversity_case(tags: bool):
    """The only cheaper swap would put each standby in its active's zone (clients 1 and 3)."""
    tasks = [task_info(TaskId(0, 1), [{"c"}]), task_info(TaskId(0, 2), [{"b"}])]
    clients = [
        client(0, "a", zone="z1"),
        client(1, "b", zone="z2"),
        client(3, "c", zone="z1"),
        client(4, "a", zone="z2"),
    ]
    extra: dict[str, object] = (
        {"rack_aware_assignment_tags": ("zone",)} if tags else {"standby_rack_spread": True}
    )
    state = state_of(tasks, clients, num_standby_replicas=1, **extra)
    active = {pid(0): frozenset({TaskId(0, 1)}), pid(4): frozenset({TaskId(0, 2)})}
    standby = {pid(1): frozenset({TaskId(0, 1)}), pid(3): frozenset({TaskId(0, 2)})}
    return state, active, standby


def test_standby_never_loses_tag_diversity_for_cheaper_traffic() -> None:
    state, active, standby = _diversity_case(tags=True)
    result, diag = optimize_standby_tasks(
        state, active, standby, traffic_cost=10, non_overlap_cost=0
    )
    assert result == {p: standby.get(p, frozenset()) for p in state.clients}
    assert diag.cross_rack_cost_after == diag.cross_rack_cost_before == 2
    assert diag.rack_optimisation == "optimal" and not diag.solver_fallback  # not a fallback
    # With no tags and standby_rack_spread the rack is the tag: moving to a third rack keeps two
    # racks per task, so it may.
    state, active, standby = _diversity_case(tags=False)
    result, diag = optimize_standby_tasks(
        state, active, standby, traffic_cost=10, non_overlap_cost=0
    )
    assert result[pid(3)] == {TaskId(0, 1)} and result[pid(1)] == {TaskId(0, 2)}
    assert diag.cross_rack_cost_after == 0
    assert diversity(state, active, result) == diversity(state, active, standby)
    # Kafka's swaps only move standbys between clients with equal tags (here: racks): no move.
    kafka = kafka_standby_swaps(state, active, standby, 10, 0)
    assert cost(state, kafka, standby, 10, 0, standby=True) == 20
    for p, ts in result.items():
        assert not ts & active.get(p, frozenset())


def test_standby_costs_count_changelog_partitions_only() -> None:
    source_only = task_info(TaskId(0, 0), [{"c"}], stateful=False)
    state = state_of([source_only], [client(0, "a"), client(1, "b")])
    state = state_of([dataclasses.replace(source_only, stateful=True)], state.clients.values())
    _, diag = optimize_standby_tasks(
        state,
        {pid(0): frozenset({TaskId(0, 0)})},
        {pid(1): frozenset({TaskId(0, 0)})},
        traffic_cost=10,
        non_overlap_cost=1,
    )
    assert diag.rack_optimisation.startswith("disabled: every standby")


def test_standby_on_its_active_is_the_callers_error() -> None:
    state, active, _ = _standby_case(tags=False)
    with pytest.raises(InvalidAssignment):
        optimize_standby_tasks(
            state, active, {pid(0): frozenset({TaskId(0, 0)})}, traffic_cost=1, non_overlap_cost=1
        )


def test_results_do_not_depend_on_mapping_order() -> None:
    state, start = _two_racks_crossed()
    first, _ = optimize_active_tasks(state, T, start, traffic_cost=1, non_overlap_cost=0)
    again, _ = optimize_active_tasks(
        state,
        list(reversed(T)),
        dict(reversed(list(start.items()))),
        traffic_cost=1,
        non_overlap_cost=0,
    )
    assert first == again
    assert cost(state, first, start, 1, 0) == 0


@pytest.mark.parametrize("assignor", ["high_availability", "sticky"])
@pytest.mark.parametrize(
    "strategy", [RackAwareStrategy.MIN_TRAFFIC, RackAwareStrategy.BALANCE_SUBTOPOLOGY]
)
def test_built_in_assignors_call_the_optimiser_end_to_end(
    assignor: str, strategy: RackAwareStrategy
) -> None:
    from kassign.assignor.streams.api import assign
    from kassign.assignor.streams.validate import AssignmentError, validate

    # 24 stateful tasks in 3 subtopologies reading from one rack each, 2 stateless ones.
    racks = ["a", "b", "c"]
    tasks = [task_info(TaskId(s, i), [{racks[(s + i) % 3]}]) for s in range(3) for i in range(8)]
    tasks += [task_info(TaskId(3, i), [{"b"}], stateful=False) for i in range(2)]
    clients = [client(j, racks[j % 3], zone=f"z{j % 2}") for j in range(6)]
    # Sticky's default costs (1/10) value stickiness over one partition's traffic: set HA's.
    state = state_of(
        tasks,
        clients,
        strategy,
        assignor=assignor,
        num_standby_replicas=1,
        traffic_cost=10,
        non_overlap_cost=1,
    )
    plain = assign(
        dataclasses.replace(
            state,
            configs=dataclasses.replace(state.configs, rack_aware_strategy=RackAwareStrategy.NONE),
        )
    )
    result = assign(state)
    assert validate(state, result) is AssignmentError.NONE
    diag = result.diagnostics
    assert diag.rack_optimisation == "optimal" and not diag.solver_fallback
    assert diag.cross_rack_cost_after < diag.cross_rack_cost_before
    assert sorted(len(a.active) for a in result.assignments) == sorted(
        len(a.active) for a in plain.assignments
    )


def test_when_a_hub_cannot_be_split_the_per_client_graph_decides(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from kassign.assignor.streams.rack import outcomes as rack

    calls = []

    def recording_dense(problem):  # type: ignore[no-untyped-def]
        calls.append(problem.rep_task.size)
        return real_dense(problem)

    real_dense = rack.solve_standby_dense
    monkeypatch.setattr(rack, "solve_standby_dense", recording_dense)
    # Rack a's only standby slot is on client 1, which runs task 0_0's active: the rack-level
    # relaxation sends 0_0's standby there anyway, the split fails, and the exact graph keeps it.
    tasks = [task_info(TaskId(0, 0), [{"a"}]), task_info(TaskId(0, 1), [{"c"}])]
    clients = [client(0, "b"), client(1, "a"), client(2, "a")]
    state = state_of(tasks, clients, num_standby_replicas=1, rack_aware_assignment_tags=("zone",))
    active = {pid(1): frozenset({TaskId(0, 0)}), pid(2): frozenset({TaskId(0, 1)})}
    standby = {pid(0): frozenset({TaskId(0, 0)}), pid(1): frozenset({TaskId(0, 1)})}
    result, diag = optimize_standby_tasks(
        state, active, standby, traffic_cost=4, non_overlap_cost=1
    )
    assert calls == [2]
    assert result == {pid(0): standby[pid(0)], pid(1): standby[pid(1)], pid(2): frozenset()}
    assert diag.rack_optimisation == "optimal" and not diag.solver_fallback


def test_nothing_to_optimise_is_off() -> None:
    state, start = _two_racks_crossed()
    result, diag = optimize_active_tasks(state, [], start, traffic_cost=10, non_overlap_cost=1)
    assert result == start and diag.rack_optimisation == "off"
    standbys, diag = optimize_standby_tasks(state, start, {}, traffic_cost=10, non_overlap_cost=1)
    assert (
        standbys == {pid(0): frozenset(), pid(1): frozenset()} and diag.rack_optimisation == "off"
    )


def test_unknown_changelog_racks_disable_standbys_only() -> None:
    tasks = [
        TaskInfo(
            TaskId(0, i),
            True,
            ("store",),
            (
                TaskTopicPartition("in", i, True, False, frozenset({"b"})),
                TaskTopicPartition("log", i, False, True, frozenset()),
            ),
        )
        for i in range(2)
    ]
    state = state_of(tasks, [client(0, "a"), client(1, "b")], num_standby_replicas=1)
    ids = [TaskId(0, 0), TaskId(0, 1)]
    start = {pid(0): frozenset(ids[:1]), pid(1): frozenset(ids[1:])}
    _, diag = optimize_active_tasks(state, ids, start, traffic_cost=10, non_overlap_cost=1)
    assert diag.rack_optimisation.startswith("disabled: partition log-0")  # actives read it too
    swapped = {pid(0): start[pid(1)], pid(1): start[pid(0)]}
    _, diag = optimize_standby_tasks(state, start, swapped, traffic_cost=10, non_overlap_cost=1)
    assert diag.rack_optimisation.startswith("disabled: partition log-0 of task 0_0")
    assert diag.notes == (f"rack: 2 standby tasks, {diag.rack_optimisation}",)


def _one_hub(actives: list[int]) -> tuple[StandbyInput, tuple[int, int, bytes]]:
    """Tasks 0..n-1, one standby each on clients 0..n-1 and the active on ``actives[t]``,
    eight clients in one hub (one rack, no tag keys): the problem's native input and its
    compact graph."""
    import kassign_native
    from kassign.assignor.streams.rack.standby_flow import StandbyProblem, native_input

    n, ints = len(actives), lambda v: np.array(v, np.int64)
    problem = StandbyProblem(
        client_rack=ints([0] * 8),
        client_class=ints([0] * 8),
        class_values=np.zeros((1, 0), np.int64),
        rep_task=ints(range(n)),
        rep_client=ints(range(n)),
        active_client=ints(actives),
        misses=np.zeros((n, 1), np.int64),
        traffic_cost=1,
        non_overlap_cost=1,
    )
    given = native_input(problem)
    return given, kassign_native.standby_compact_graph(given)


def _split_in_one_hub(actives: list[int], slots: list[int]) -> list[tuple[int, int]] | None:
    """The compact graph's flows read back (``kassign_native.standby_split``) when every
    standby moved, one to each client in ``slots``."""
    import kassign_native

    given, graph = _one_hub(actives)
    n = len(actives)
    assert graph[1] == n  # one group per task, one hub: a move arc each
    flows = [0] * n + [1] * n + [int(c in slots) for c in range(8)] + [0] * 8
    placed = kassign_native.standby_split(given, graph, np.array(flows, np.int64).tobytes())
    if placed is None:
        return None
    tasks, clients = np.frombuffer(placed, np.int64).reshape(2, -1).tolist()
    return list(zip(tasks, clients, strict=True))


def test_a_clash_in_the_hub_split_is_traded_away_validly() -> None:
    import kassign_native

    # Three replicas arrive at one hub's clients 5, 6, 7 in task order; task 0 landed on client 5,
    # which runs its active. Trading with task 1 would put task 1 on client 5, which runs task 1's
    # active too: trade with task 2.
    assert _split_in_one_hub([5, 5, 3], [5, 6, 7]) == [(0, 7), (1, 6), (2, 5)]
    # Two arrive at clients 5 and 6, both tasks' actives on 5: no trade is valid.
    assert _split_in_one_hub([5, 5], [5, 6]) is None
    # The hub's slots do not match its arrivals: the caller solves the dense graph.
    assert _split_in_one_hub([5, 5, 3], [5, 6]) is None
    # Flows that are not the graph's are refused, not read past.
    given, graph = _one_hub([5, 5, 3])
    with pytest.raises(ValueError, match="standby_split"):
        kassign_native.standby_split(given, graph, b"\0" * 8)
