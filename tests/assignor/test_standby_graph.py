"""The compiled standby graph (``kassign_native.standby_groups``, ``standby_compact_graph`` and
``standby_diversity``) on one problem worked out by hand: every kind of group (a single standby kept diverse, several
by tag class, a task without an active, a loose task, a fixed replica beside a loose one), the
groups numbered as ``np.unique`` numbered their keys, and the compact graph arc for arc (the
solver's tie-breaks follow the arcs' order, so the order is part of the answer).
"""

from __future__ import annotations

from dataclasses import replace

import kassign_native
import numpy as np
import pytest
from kassign.assignor.flow import FlowGraph
from kassign.assignor.streams.rack import standby_flow
from kassign.assignor.streams.rack.problems import diversity
from kassign.assignor.streams.rack.standby_flow import StandbyProblem


def _problem() -> StandbyProblem:
    """Clients 0-3 on racks 0, 1, 0, 1 with tag values 1, 1, 2, 2 (classes 0, 0, 1, 1).

    t0: active on 0, one standby on 2 (tag 2: only class 1 keeps its two values); t1: active
    on 2, standbys on 0 and 1 (class 0); t2: no active, a standby on 3; t3 (loose): active on
    1, standbys on 2 and 3; t4 (loose): active on 0, standbys on 2 (fixed) and 3.
    """
    ints = lambda *v: np.array(v, np.int64)
    return StandbyProblem(
        client_rack=ints(0, 1, 0, 1),
        client_class=ints(0, 0, 1, 1),
        class_values=np.array([[1], [2]], np.int64),
        rep_task=ints(0, 1, 1, 2, 3, 3, 4, 4),
        rep_client=ints(2, 0, 1, 3, 2, 3, 2, 3),
        active_client=ints(0, 2, -1, 1, 0),
        misses=np.array([[0, 1], [1, 0], [2, 0], [0, 2], [1, 1]], np.int64),
        traffic_cost=2,
        non_overlap_cost=3,
        fixed=np.array([0, 0, 0, 0, 0, 0, 1, 0], np.bool_),
        may_lose=ints(0, 0, 1, 0),
        may_gain=ints(0, 1, 0, 0),
        loose=np.array([0, 0, 0, 1, 1], np.bool_),
    )


def test_groups_keyed_and_allowed_as_worked_out() -> None:
    g = standby_flow._groups(_problem())
    # keys: fixed replica 6 -> -7, t0 0, t1 class 0 -> 4, t2 class 1 -> 8, t3 loose 9, t4 loose 12
    assert g.of_replica.tolist() == [1, 2, 2, 3, 4, 4, 0, 5]
    assert g.task.tolist() == [4, 0, 1, 2, 3, 4]
    assert g.supply.tolist() == [1, 1, 2, 1, 2, 1]
    assert g.allowed.tolist() == [
        [False, False],  # fixed: nowhere but where it is
        [False, True],  # single: class 0 would lose t0's second tag value
        [True, False],  # several, by class
        [False, True],  # no active: grouped by class
        [True, True],  # loose
        [True, True],  # loose beside a fixed replica
    ]


def test_compact_graph_arc_for_arc(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[FlowGraph] = []
    solve = standby_flow.solve
    monkeypatch.setattr(standby_flow, "solve", lambda g: (seen.append(g), solve(g))[1])
    solved = standby_flow.solve_standby_compact(_problem())
    (graph,) = seen
    # nodes: groups 0-5, hubs (class, rack) 6-9, clients 10-13, the bank 14
    assert graph.num_nodes == 15
    stays = [(1, 12, 1, 0), (2, 10, 1, 18), (2, 11, 1, 0), (3, 13, 1, 0)]
    stays += [(4, 12, 1, 0), (4, 13, 1, 36), (0, 12, 1, 18), (5, 13, 1, 18)]
    moves = [(1, 8, 1, 28), (1, 9, 1, 46), (2, 6, 1, 46), (2, 7, 1, 28), (3, 8, 1, 64)]
    moves += [(3, 9, 1, 28), (4, 6, 1, 28), (4, 8, 1, 28), (4, 9, 1, 64)]
    moves += [(5, 7, 1, 46), (5, 8, 1, 46), (5, 9, 1, 46)]  # t4's active's hub is full
    hubs = [(6, 10, 1, 0), (7, 11, 2, 0), (8, 12, 3, 0), (9, 13, 3, 0)]
    bank = [(10, 14, 0, 0), (11, 14, 1, 0), (12, 14, 1, 0), (13, 14, 0, 0)]
    arcs = zip(graph.tails, graph.heads, graph.capacities, graph.unit_costs, strict=True)
    assert [tuple(map(int, a)) for a in arcs] == stays + moves + hubs + bank
    assert graph.supplies.tolist() == [1, 1, 2, 1, 2, 1, 0, 0, 0, 0, -1, -1, -2, -3, -1]
    assert solved is not None
    assert (4, 2) in zip(solved[0].tolist(), solved[1].tolist())  # the fixed replica stayed


def test_columns_that_do_not_fit_are_refused() -> None:
    columns, shape, costs, anchored, fixed, loose = standby_flow.native_input(_problem())
    columns[4] = np.array([0, 0, 0, 0, 0, 0, 0, 9], np.int64).tobytes()  # client 9 of 4
    with pytest.raises(ValueError, match="standby_compact_graph: inconsistent input"):
        kassign_native.standby_compact_graph((columns, shape, costs, anchored, fixed, loose))
    with pytest.raises(ValueError, match="standby_groups: inconsistent input"):
        kassign_native.standby_groups((columns[:8], shape, costs, anchored, fixed, loose))


def test_diversity_counts_set_values_of_replicas_and_active() -> None:
    p = _problem()
    assert diversity(p, p.rep_task, p.rep_client).tolist() == [[2], [2], [1], [2], [2]]
    # others' replicas, given out of order; t2 has none and no active
    given = diversity(p, np.array([1, 0], np.int64), np.array([3, 1], np.int64))
    assert given.tolist() == [[1], [1], [0], [1], [1]]
    unset = replace(p, class_values=np.array([[0], [2]], np.int64))  # clients 0, 1: no tag
    assert diversity(unset, p.rep_task, p.rep_client).tolist() == [[1], [1], [1], [1], [1]]
    with pytest.raises(ValueError, match="standby_diversity: replicas outside the problem"):
        diversity(p, np.array([5], np.int64), np.array([0], np.int64))
