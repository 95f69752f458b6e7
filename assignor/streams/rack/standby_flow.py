"""Rack-aware standby graphs (KIP-925 4.C): one min-cost flow over all standbys, not pairwise swaps.

Why: Kafka swaps standbys between pairs of clients for at most four rounds, a local search that can
stop short of the optimum. Here every standby replica may go anywhere its guarantees allow, in one
solve, so the result is never worse than any sequence of such swaps:

- a standby never lands on the client running its active, nor on a client already holding the task;
- per-client standby counts of the starting placement are kept, or move within the caller's
  room (``may_lose`` / ``may_gain``);
- KIP-708 tag diversity never drops. A task with one standby may move it to any client that still
  differs from the active on every tag key where it differed before. A task with several standbys
  keeps each on clients with the same tag values (Kafka's own rule for every task), unless the
  task is ``loose``: then its standbys go anywhere as one group, and the caller checks the
  task's diversity afterwards (``diversity``) and locks the tasks where it dropped.

The compact graph routes replica groups through (tag class, rack) hubs; the per-client exclusions
are then honoured when a hub's inflow is split over its clients. Should that split ever fail
(``None``), ``solve_standby_dense`` solves the exact per-client graph instead.

The groups, the compact graph's arrays and the tag diversity count are built by the compiled
core (``kassign_native``, ``src/standby_graph.rs``; the one implementation, from the columns
``native_input`` hands it): in numpy they were some fifteen whole-array steps, each a fresh
allocation, about 2.5 ms a solve at 10,000 standbys (issue 24); so is the split of each hub's
inflow over its clients and the standbys' final order (``standby_split.rs``). The dense graph
stays here.
"""

from __future__ import annotations

from dataclasses import dataclass

import kassign_native
import numpy as np
import numpy.typing as npt
from kassign.assignor.flow import FlowGraph, IntArray, layout, solve
from kassign.assignor.streams.rack.int_sets import isin, pair_order

__all__ = [
    "StandbyProblem",
    "native_input",
    "solve_standby_compact",
    "solve_standby_dense",
    "standby_cost",
]


@dataclass(frozen=True, slots=True)
class StandbyProblem:
    """Standby replicas ``(rep_task[i], rep_client[i])``, sorted; clients and tasks by index.

    ``class_values[q]`` holds the tag values of tag class ``q`` as codes (0: unset); ``active_client[t]``
    is the client running task ``t`` (-1: none); ``misses`` counts changelog partitions.
    ``anchored[i]``: whether moving replica ``i`` costs ``non_overlap_cost`` (``None``: all);
    ``fixed[i]``: replica ``i`` may not move (a warm-up), but still counts toward its task's
    diversity and keeps its client from taking the task (``None``: none fixed);
    ``may_lose[c]`` / ``may_gain[c]``: how many fewer or more standbys client ``c`` may end
    with than it starts with (``None``: its count is kept); ``loose[t]``: task ``t``'s several
    standbys may change tag class (``None``: none may).
    """

    client_rack: IntArray
    client_class: IntArray
    class_values: IntArray
    rep_task: IntArray
    rep_client: IntArray
    active_client: IntArray
    misses: IntArray
    traffic_cost: int
    non_overlap_cost: int
    anchored: npt.NDArray[np.bool_] | None = None
    fixed: npt.NDArray[np.bool_] | None = None
    may_lose: IntArray | None = None
    may_gain: IntArray | None = None
    loose: npt.NDArray[np.bool_] | None = None

    @property
    def counts(self) -> IntArray:
        return np.bincount(self.rep_client, minlength=self.client_rack.size).astype(np.int64)

    @property
    def anchors(self) -> npt.NDArray[np.bool_]:
        """``anchored`` with ``None`` spelled out: every replica."""
        if self.anchored is None:
            return np.ones(self.rep_task.size, np.bool_)
        return self.anchored

    @property
    def room(self) -> tuple[IntArray, IntArray]:
        """``(may_lose, may_gain)`` with ``None`` spelled out: no room."""
        none = np.zeros(self.client_rack.size, np.int64)
        lose = none if self.may_lose is None else self.may_lose
        gain = none if self.may_gain is None else self.may_gain
        return lose, gain

    def anchor_keys(self) -> IntArray:
        """``task * clients + client`` of the anchored starting replicas."""
        keys: IntArray = (self.rep_task * self.client_rack.size + self.rep_client)[self.anchors]
        return keys


def standby_cost(p: StandbyProblem, tasks: IntArray, clients: IntArray) -> int:
    """Total KIP-925 cost of replicas ``(tasks[i], clients[i])`` against the starting placement:
    traffic, plus ``non_overlap_cost`` per anchored starting replica no longer in place (not
    looked for when that cost is 0: the reports' traffic-only measure, twice a solve)."""
    traffic = int((p.traffic_cost * p.misses[tasks, p.client_rack[clients]]).sum())
    if not p.non_overlap_cost:
        return traffic
    n_c = p.client_rack.size
    anchors = p.anchor_keys()
    left = int(anchors.size - isin(anchors, tasks * n_c + clients).sum())
    return traffic + p.non_overlap_cost * left


@dataclass(frozen=True, slots=True)
class _Groups:
    """Replicas that may go to the same places, and where that is (group x tag class)."""

    of_replica: IntArray
    task: IntArray
    supply: IntArray
    allowed: npt.NDArray[np.bool_]


def native_input(p: StandbyProblem) -> kassign_native.StandbyInput:
    """``p`` as the compiled core's standby functions take it: columns as int64 bytes, flags
    as ``bool_`` bytes (issue 24: the groups and the graph built in one pass, not some fifteen
    whole-array steps)."""
    lose, gain = p.room
    columns = [
        p.client_rack,
        p.client_class,
        p.class_values,
        p.rep_task,
        p.rep_client,
        p.active_client,
        p.misses,
        lose,
        gain,
    ]
    anchored, fixed, loose = (
        None if f is None else np.ascontiguousarray(f, np.bool_).tobytes()
        for f in (p.anchored, p.fixed, p.loose)
    )
    classes, width = p.class_values.shape
    return (
        [np.ascontiguousarray(c, np.int64).tobytes() for c in columns],
        (classes, width, p.misses.shape[1]),
        (int(p.traffic_cost), int(p.non_overlap_cost)),
        anchored,
        fixed,
        loose,
    )


def _ints(raw: bytes) -> IntArray:
    return np.frombuffer(raw, np.int64)


def _groups(p: StandbyProblem) -> _Groups:
    """A task's single standby is a group of its own; several are grouped by tag class, or all
    together if the task is loose; a fixed replica is a group of its own that may go nowhere but
    where it is (``kassign_native.standby_groups``: the same groups the compact graph uses)."""
    of_replica, task, supply, allowed = kassign_native.standby_groups(native_input(p))
    tasks = _ints(task)
    flags = np.frombuffer(allowed, np.bool_).reshape(tasks.size, p.class_values.shape[0])
    return _Groups(_ints(of_replica), tasks, _ints(supply), flags)


def solve_standby_compact(p: StandbyProblem) -> tuple[IntArray, IntArray] | None:
    """Optimal replicas via (class, rack) hubs, or ``None`` if a hub's inflow cannot be split.

    The graph (``kassign_native.standby_compact_graph``): groups, (class, rack) hubs, clients
    and a bank. Each replica may stay (its traffic, scaled); a group goes to a hub of a class
    it may use, up to its size and the hub's clients bar its task's active (traffic to the
    hub's rack plus ``non_overlap_cost``, scaled, plus one, so staying wins ties); a hub feeds
    its clients up to their counts plus their room to gain, and a client gives its room to
    lose to the bank. An unanchored replica pays ``non_overlap_cost`` whether it stays or
    moves: the same to the optimum as paying it never, and it keeps the move arcs (shared per
    group) uniform.

    Read back by the compiled core (``kassign_native.standby_split``): replicas in (hub, task)
    order take the hub's slots in client order; a replica that landed where its task already
    is (its active, a kept replica, another arriving one) trades places with the first replica
    of the same hub for which the trade is valid both ways; ``None`` if some replica finds no
    such trade, or a hub's slots do not match its arrivals.
    """
    given = native_input(p)
    nodes, moves, raw = kassign_native.standby_compact_graph(given)
    arcs = p.rep_task.size + moves + 2 * p.client_rack.size
    columns = _ints(raw)
    tails, heads, caps, costs = columns[: 4 * arcs].reshape(4, arcs)
    flows = solve(FlowGraph(nodes, tails, heads, caps, costs, columns[4 * arcs :][:nodes])).flows
    placed = kassign_native.standby_split(given, (nodes, moves, raw), flows.tobytes())
    if placed is None:
        return None
    tasks, clients = _ints(placed).reshape(2, -1)
    return tasks, clients


def solve_standby_dense(p: StandbyProblem) -> tuple[IntArray, IntArray]:
    """Optimal replicas on the per-client graph: every group to every client it may use."""
    g = _groups(p)
    c_n, scale = p.client_rack.size, p.rep_task.size + 1
    ok = g.allowed[:, p.client_class] & (
        np.arange(c_n)[None, :] != p.active_client[g.task][:, None]
    )
    if p.fixed is not None:  # a warm-up stays, and no other replica of its task joins it
        stays = np.flatnonzero(p.fixed)
        held = np.zeros((p.active_client.size, c_n), np.bool_)
        held[p.rep_task[stays], p.rep_client[stays]] = True
        ok &= ~held[g.task]
        ok[g.of_replica[stays], p.rep_client[stays]] = True
    arc_g, arc_c = np.nonzero(ok)
    t = g.task[arc_g]
    moved = ~isin(t * c_n + arc_c, p.rep_task * c_n + p.rep_client)
    unanchored = ~isin(t * c_n + arc_c, p.anchor_keys())
    cost = (
        p.traffic_cost * p.misses[t, p.client_rack[arc_c]] + p.non_overlap_cost * unanchored
    ) * scale
    lay = layout(("group", g.task.size), ("client", c_n), ("bank", 1))
    c0, lose, gain = lay.start("client"), *p.room
    supplies = np.concatenate([g.supply, -(p.counts - lose), [-int(lose.sum())]])
    graph = FlowGraph.of(
        lay.num_nodes,
        [
            (arc_g, c0 + arc_c, 1, cost + moved),
            (c0 + np.arange(c_n), lay.start("bank"), lose + gain, 0),
        ],
        supplies,
    )
    used = solve(graph).flows[: arc_g.size] > 0
    tasks, clients = t[used], arc_c[used]
    order = pair_order(tasks, clients)
    return tasks[order], clients[order]
