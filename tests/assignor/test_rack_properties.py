"""Properties of the rack-aware optimiser on random inputs, against slow but obvious references.

- the compact (rack-routed) graph reaches the same optimum as the dense task x client graph;
- on tiny inputs that optimum is the brute-force one; it never costs more than the start;
- counts, exclusions and tag diversity survive; traffic_cost 0 leaves the start alone;
- standbys: never worse than Kafka's four rounds of pairwise swaps;
- with ``anchored`` (the sticky assignor's stickiness to clients with state), the same holds and
  a task or replica that is not anchored moves for any traffic it saves;
- the same input, in any mapping order, gives the same output.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.api import assign
from kassign.assignor.streams.model import (
    ApplicationState,
    RackAwareStrategy,
    TaskTopicPartition,
    application_state,
)
from kassign.assignor.streams.rack.active_flow import (
    ActiveProblem,
    placement_cost,
    solve_active_compact,
    solve_active_dense,
    subtopology_bounds,
)
from kassign.assignor.streams.rack.optimise import optimize_active_tasks, optimize_standby_tasks
from kassign.assignor.streams.rack.standby_flow import (
    StandbyProblem,
    solve_standby_compact,
    solve_standby_dense,
    standby_cost,
)
from kassign.assignor.streams.validate import AssignmentError, validate

from tests.assignor.rack_cases import (
    Small,
    brute_force_active,
    cost,
    counts,
    diversity,
    kafka_standby_swaps,
    small_groups,
    within_subtopology_bounds,
)
from tests.assignor.strategies import app_states

COSTS = st.tuples(st.integers(0, 12), st.integers(0, 12))


@st.composite
def active_problems(draw: st.DrawFn) -> ActiveProblem:
    t_n, c_n, r_n = draw(st.integers(1, 40)), draw(st.integers(1, 12)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    balance = draw(st.booleans())
    sub = np.unique(rng.integers(0, 4, t_n), return_inverse=True)[1] if balance else None
    traffic, overlap = draw(COSTS)
    return ActiveProblem(
        client_rack=rng.integers(0, r_n, c_n),
        start=rng.integers(0, c_n, t_n),
        misses=rng.integers(0, 4, (t_n, r_n)),
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        subtopology=None if sub is None else sub.astype(np.int64),
        anchored=rng.random(t_n) < 0.6 if draw(st.booleans()) else None,
    )


@settings(max_examples=150, deadline=None)
@given(active_problems())
def test_compact_and_dense_graphs_have_the_same_optimum(p: ActiveProblem) -> None:
    compact, dense = solve_active_compact(p), solve_active_dense(p)
    assert placement_cost(p, compact) == placement_cost(p, dense)
    assert np.array_equal(np.bincount(compact, minlength=p.num_clients), p.counts)
    if _start_within_bounds(p):  # else balance_subtopology may have to pay to fix the start
        assert placement_cost(p, compact) <= placement_cost(p, p.start)
        if p.traffic_cost == 0:
            assert np.array_equal(compact, p.start)  # nothing to gain: nothing moves


def _start_within_bounds(p: ActiveProblem) -> bool:
    if p.subtopology is None:
        return True
    on = np.zeros((int(p.subtopology.max()) + 1, p.num_clients), np.int64)
    np.add.at(on, (p.subtopology, p.start), 1)
    return bool((on <= subtopology_bounds(p)).all())


@settings(max_examples=60, deadline=None)
@given(small_groups(max_tasks=6, max_clients=4), COSTS)
def test_actives_reach_the_brute_force_optimum(group: Small, costs: tuple[int, int]) -> None:
    traffic, overlap = costs
    state, start = group.state, group.active
    result, diag = optimize_active_tasks(
        state, list(state.tasks), start, traffic_cost=traffic, non_overlap_cost=overlap
    )
    assert counts(result) == counts(start)
    assert sorted(t for ts in result.values() for t in ts) == sorted(state.tasks)
    balance = state.configs.rack_aware_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY
    if diag.rack_optimisation == "optimal":
        best = brute_force_active(state, start, traffic, overlap, balance=balance)
        assert cost(state, result, start, traffic, overlap) == best
        assert balance is False or within_subtopology_bounds(result, start)
    else:
        assert result == start and diag.rack_optimisation.startswith("disabled: ")
    if not balance or within_subtopology_bounds(start, start):
        assert cost(state, result, start, traffic, overlap) <= cost(
            state, start, start, traffic, overlap
        )


@settings(max_examples=40, deadline=None)
@given(small_groups(), st.integers(1, 12))
def test_zero_traffic_cost_leaves_the_start_unchanged(group: Small, overlap: int) -> None:
    state = group.state
    result, _ = optimize_active_tasks(
        state, list(state.tasks), group.active, traffic_cost=0, non_overlap_cost=overlap
    )
    assert result == group.active
    standbys, _ = optimize_standby_tasks(
        state, group.active, group.standby, traffic_cost=0, non_overlap_cost=overlap
    )
    assert standbys == group.standby


@settings(max_examples=80, deadline=None)
@given(small_groups(max_tasks=7, max_clients=6, tags=True), COSTS, st.booleans())
def test_standbys_keep_guarantees_and_beat_kafkas_swaps(
    group: Small, costs: tuple[int, int], tags: bool
) -> None:
    traffic, overlap = costs
    state = group.state
    if not tags:
        state = dataclasses.replace(
            state, configs=dataclasses.replace(state.configs, rack_aware_assignment_tags=())
        )
    result, diag = optimize_standby_tasks(
        state, group.active, group.standby, traffic_cost=traffic, non_overlap_cost=overlap
    )
    loose, loose_diag = optimize_standby_tasks(
        state,
        group.active,
        group.standby,
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        task_spread=True,
    )
    assert not loose_diag.solver_fallback
    assert counts(loose) == counts(group.standby)
    # the built-in assignors' rule: a task's standbys may change class, its diversity may not drop
    assert all(
        a >= b
        for t, row in diversity(state, group.active, group.standby).items()
        for a, b in zip(diversity(state, group.active, loose)[t], row, strict=True)
    )
    loose_cost = cost(state, loose, group.standby, traffic, overlap, standby=True)
    assert loose_cost <= cost(state, result, group.standby, traffic, overlap, standby=True)
    assert not diag.solver_fallback
    assert counts(result) == counts(group.standby)
    for p, ts in result.items():
        assert not ts & group.active.get(p, frozenset())
    before, after = (
        diversity(state, group.active, group.standby),
        diversity(state, group.active, result),
    )
    assert all(a >= b for t in before for a, b in zip(after[t], before[t], strict=True))
    ours = cost(state, result, group.standby, traffic, overlap, standby=True)
    kafka = kafka_standby_swaps(state, group.active, group.standby, traffic, overlap)
    assert ours <= cost(state, kafka, group.standby, traffic, overlap, standby=True)
    assert ours <= cost(state, group.standby, group.standby, traffic, overlap, standby=True)


@st.composite
def standby_problems(draw: st.DrawFn) -> StandbyProblem:
    """Random replicas (1-2 per task) on distinct clients, never on the active's client."""
    c_n, t_n, r_n = draw(st.integers(3, 9)), draw(st.integers(1, 20)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q_n = draw(st.integers(1, 3))
    class_values = np.unique(rng.integers(0, 3, (q_n, 2)), axis=0)
    client_class = rng.integers(0, class_values.shape[0], c_n)
    active = rng.integers(0, c_n, t_n)
    reps = []
    for t in range(t_n):
        others = [c for c in range(c_n) if c != active[t]]
        for c in rng.choice(others, size=int(rng.integers(1, 3)), replace=False):
            reps.append((t, int(c)))
    reps.sort()
    traffic, overlap = draw(COSTS)
    room = draw(st.booleans())
    return StandbyProblem(
        client_rack=rng.integers(0, r_n, c_n),
        client_class=client_class.astype(np.int64),
        class_values=class_values.astype(np.int64),
        rep_task=np.array([r[0] for r in reps]),
        rep_client=np.array([r[1] for r in reps]),
        active_client=active.astype(np.int64),
        misses=rng.integers(0, 3, (t_n, r_n)),
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        anchored=rng.random(len(reps)) < 0.6 if draw(st.booleans()) else None,
        fixed=rng.random(len(reps)) < 0.3 if draw(st.booleans()) else None,
        may_lose=rng.integers(0, 3, c_n) if room else None,
        may_gain=rng.integers(0, 3, c_n) if room else None,
        loose=rng.random(t_n) < 0.5 if draw(st.booleans()) else None,
    )


@settings(max_examples=120, deadline=None)
@given(standby_problems())
def test_standby_compact_graph_matches_the_per_client_graph(p: StandbyProblem) -> None:
    dense = solve_standby_dense(p)
    compact = solve_standby_compact(p)
    if compact is not None:  # None: the hub split failed and the caller solves dense instead
        assert standby_cost(p, *compact) == standby_cost(p, *dense)
    for tasks, clients in [dense] if compact is None else [dense, compact]:
        pairs = set(zip(tasks.tolist(), clients.tolist(), strict=True))
        assert len(pairs) == tasks.size  # no client holds a task twice
        assert not np.any(p.active_client[tasks] == clients)
        change = np.bincount(clients, minlength=p.client_rack.size) - p.counts
        lose, gain = p.room  # counts kept, or moved within the room given
        assert np.all(-lose <= change) and np.all(change <= gain)
        assert sorted(tasks.tolist()) == sorted(p.rep_task.tolist())
        if p.fixed is not None:  # warm-ups stay where they are
            stay = zip(p.rep_task[p.fixed].tolist(), p.rep_client[p.fixed].tolist(), strict=True)
            assert set(stay) <= pairs
    assert standby_cost(p, *dense) <= standby_cost(p, p.rep_task, p.rep_client)


@settings(max_examples=30, deadline=None)
@given(small_groups(tags=True), COSTS, st.randoms(use_true_random=False))
def test_output_does_not_depend_on_input_order(group: Small, costs: tuple[int, int], rnd) -> None:  # type: ignore[no-untyped-def]
    traffic, overlap = costs
    state = group.state
    tasks = list(state.tasks)
    shuffled_tasks = tasks[:]
    rnd.shuffle(shuffled_tasks)
    items = list(group.active.items())
    rnd.shuffle(items)
    first = optimize_active_tasks(
        state, tasks, group.active, traffic_cost=traffic, non_overlap_cost=overlap
    )
    second = optimize_active_tasks(
        state, shuffled_tasks, dict(items), traffic_cost=traffic, non_overlap_cost=overlap
    )
    assert first == second
    s_items = list(group.standby.items())
    rnd.shuffle(s_items)
    one = optimize_standby_tasks(
        state, group.active, group.standby, traffic_cost=traffic, non_overlap_cost=overlap
    )
    two = optimize_standby_tasks(
        state, dict(items), dict(s_items), traffic_cost=traffic, non_overlap_cost=overlap
    )
    assert one == two


@st.composite
def rack_aware_states(draw: st.DrawFn) -> ApplicationState:
    """A random group (lags, previous owners, tags) whose tasks read partitions on random racks."""
    state = draw(app_states(max_clients=5))
    racks = ["rack-1", "rack-2", "rack-3"]
    subsets = st.sets(st.sampled_from(racks), min_size=1, max_size=2).map(frozenset)
    tasks = [
        dataclasses.replace(
            info,
            topic_partitions=tuple(
                TaskTopicPartition(
                    f"t{k}", t.partition, k == 0, info.stateful and k > 0, draw(subsets)
                )
                for k in range(draw(st.integers(1, 2)))
            ),
        )
        for t, info in state.tasks.items()
    ]
    clients = [
        dataclasses.replace(c, rack_id=draw(st.sampled_from(racks))) for c in state.clients.values()
    ]
    configs = dataclasses.replace(
        state.configs,
        assignor=draw(st.sampled_from(["high_availability", "sticky"])),
        rack_aware_strategy=draw(
            st.sampled_from([RackAwareStrategy.MIN_TRAFFIC, RackAwareStrategy.BALANCE_SUBTOPOLOGY])
        ),
        traffic_cost=draw(st.none() | st.integers(0, 10)),
        non_overlap_cost=draw(st.none() | st.integers(0, 10)),
    )
    return application_state(tasks, clients, configs, now_ms=state.now_ms)


@settings(max_examples=40, deadline=None)
@given(rack_aware_states())
def test_built_in_assignors_stay_valid_with_rack_awareness(state: ApplicationState) -> None:
    result = assign(state)
    assert validate(state, result) is AssignmentError.NONE
    diag = result.diagnostics
    assert not diag.solver_fallback
    assert diag.rack_optimisation == "off" or diag.rack_optimisation.split(":")[0] in (
        "optimal",
        "disabled",
    )
    if (
        state.configs.rack_aware_strategy is RackAwareStrategy.MIN_TRAFFIC
        and diag.rack_optimisation == "optimal"
        and state.configs.non_overlap_cost == 0
    ):
        # Traffic weighs in every phase; only non_overlap_cost > 0 may trade it for fewer moves.
        assert diag.cross_rack_cost_after <= diag.cross_rack_cost_before
    assert assign(state) == result


@settings(max_examples=80, deadline=None)
@given(active_problems())
def test_an_unanchored_task_moves_for_any_traffic_saved(p: ActiveProblem) -> None:
    """Without its anchor, a task is placed as if leaving its start were free: the optimum is the
    one of the same problem where the non-overlap cost is charged to anchored tasks only."""
    loose = dataclasses.replace(p, anchored=np.zeros(p.num_tasks, np.bool_))
    free = dataclasses.replace(p, non_overlap_cost=0, anchored=None)
    assert placement_cost(free, solve_active_compact(loose)) == placement_cost(
        free, solve_active_dense(free)
    )
