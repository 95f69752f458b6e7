"""The bulk min-cost-flow layer: layout, range checks before the solver, every status mapped."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidRequest, SolverError
from kassign.assignor.flow import MAX_ABS_COST, MAX_CAPACITY, FlowGraph, layout, solve


def _assignment_graph(cost: np.ndarray) -> FlowGraph:
    """Workers x tasks, each worker one task: the OR-Tools sample's shape, built in bulk."""
    n, m = cost.shape
    lay = layout(("worker", n), ("task", m))
    tails = np.repeat(np.arange(n), m)
    heads = lay.start("task") + np.tile(np.arange(m), n)
    supplies = np.concatenate([np.ones(n, np.int64), -np.ones(m, np.int64)])
    return FlowGraph.of(lay.num_nodes, [(tails, heads, 1, cost.ravel())], supplies)


def test_layout_lays_ranges_out_in_declared_order() -> None:
    lay = layout(("tasks", 3), ("racks", 0), ("clients", 2), ("sink", 1))
    assert lay.start("tasks") == 0 and lay.start("racks") == 3 and lay.start("clients") == 3
    assert lay.start("sink") == 5 and lay.size("clients") == 2 and lay.num_nodes == 6


def test_layout_rejects_duplicate_or_negative_layers() -> None:
    with pytest.raises(InvalidRequest):
        layout(("a", 1), ("a", 2))
    with pytest.raises(InvalidRequest):
        layout(("a", -1))


def test_assignment_matches_brute_force() -> None:
    cost = np.array([[90, 76, 75, 70], [35, 85, 55, 65], [125, 95, 90, 105], [45, 110, 95, 115]])
    solution = solve(_assignment_graph(cost))
    best = min(sum(cost[i, p[i]] for i in range(4)) for p in itertools.permutations(range(4)))
    assert solution.cost == best == 265
    chosen = solution.flows.reshape(4, 4)
    assert chosen.sum(axis=0).tolist() == [1, 1, 1, 1] and chosen.sum(axis=1).tolist() == [
        1,
        1,
        1,
        1,
    ]
    assert int((chosen * cost).sum()) == solution.cost


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.lists(st.integers(0, 50), min_size=n * n, max_size=n * n)
    )
)
def test_random_assignments_are_optimal(values: list[int]) -> None:
    n = round(len(values) ** 0.5)
    cost = np.array(values, np.int64).reshape(n, n)
    best = min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
    assert solve(_assignment_graph(cost)).cost == best


def test_flows_follow_arc_order_across_blocks() -> None:
    # Two blocks, the second with a scalar capacity broadcast: flows come back in the same order.
    graph = FlowGraph.of(3, [([0], [1], [5], [1]), ([1, 0], [2, 2], 5, [1, 9])], [4, 0, -4])
    solution = solve(graph)
    assert solution.flows.tolist() == [4, 4, 0]
    assert solution.cost == 8


def test_same_graph_gives_same_flows() -> None:
    rng = np.random.default_rng(3)
    cost = rng.integers(0, 3, size=(30, 30))  # many ties
    first, second = solve(_assignment_graph(cost)), solve(_assignment_graph(cost))
    assert np.array_equal(first.flows, second.flows)


def test_infeasible_graph_raises_with_its_status() -> None:
    graph = FlowGraph.of(2, [([0], [1], [1], [0])], [2, -2])
    with pytest.raises(SolverError) as err:
        solve(graph)
    assert err.value.status == "INFEASIBLE"


def test_unbalanced_supplies_are_caught_before_the_solver() -> None:
    with pytest.raises(SolverError) as err:
        solve(FlowGraph.of(2, [([0], [1], [1], [0])], [1, 0]))
    assert err.value.status == "UNBALANCED"


def test_costs_that_could_overflow_are_refused() -> None:
    with pytest.raises(SolverError) as err:
        solve(FlowGraph.of(2, [([0], [1], [1], [MAX_ABS_COST + 1])], [1, -1]))
    assert err.value.status == "BAD_COST_RANGE"
    many = FlowGraph.of(2, [(np.zeros(5000, np.int64), 1, MAX_CAPACITY, MAX_ABS_COST)], [1, -1])
    with pytest.raises(SolverError) as err:
        solve(many)  # each arc is fine, their sum x cost is not
    assert err.value.status == "BAD_COST_RANGE"


def test_capacities_out_of_range_are_refused() -> None:
    for capacity in (-1, MAX_CAPACITY + 1):
        with pytest.raises(SolverError) as err:
            solve(FlowGraph.of(2, [([0], [1], [capacity], [0])], [0, 0]))
        assert err.value.status == "BAD_CAPACITY_RANGE"


def test_malformed_graphs_are_invalid_requests() -> None:
    with pytest.raises(InvalidRequest):
        solve(FlowGraph.of(2, [([0], [2], [1], [0])], [0, 0]))  # head outside the layout
    with pytest.raises(InvalidRequest):
        solve(FlowGraph.of(3, [([0], [1], [1], [0])], [0, 0]))  # supplies too short


def test_empty_graph_costs_nothing() -> None:
    solution = solve(FlowGraph.of(0, [], np.zeros(0, np.int64)))
    assert solution.cost == 0 and solution.flows.size == 0
