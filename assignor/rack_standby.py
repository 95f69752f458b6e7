"""Rack-aware standby graphs (KIP-925 4.C): one min-cost flow over all standbys, not pairwise swaps.

Why: Kafka swaps standbys between pairs of clients for at most four rounds, a local search that can
stop short of the optimum. Here every standby replica may go anywhere its guarantees allow, in one
solve, so the result is never worse than any sequence of such swaps:

- a standby never lands on the client running its active, nor on a client already holding the task;
- per-client standby counts of the starting placement are kept;
- KIP-708 tag diversity never drops. A task with one standby may move it to any client that still
  differs from the active on every tag key where it differed before. A task with several standbys
  keeps each on clients with the same tag values (Kafka's own rule for every task).

The compact graph routes replica groups through (tag class, rack) hubs; the per-client exclusions
are then honoured when a hub's inflow is split over its clients. Should that split ever fail
(``None``), ``solve_standby_dense`` solves the exact per-client graph instead.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assignor.flow import FlowGraph, IntArray, layout, solve

__all__ = [
    "StandbyProblem",
    "solve_standby_compact",
    "solve_standby_dense",
    "standby_cost",
]


@dataclass(frozen=True, slots=True)
class StandbyProblem:
    """Standby replicas ``(rep_task[i], rep_client[i])``, sorted; clients and tasks by index.

    ``class_values[q]`` holds the tag values of tag class ``q`` as codes (0: unset); ``active_client[t]``
    is the client running task ``t`` (-1: none); ``misses`` counts changelog partitions.
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

    @property
    def counts(self) -> IntArray:
        return np.bincount(self.rep_client, minlength=self.client_rack.size).astype(np.int64)


def standby_cost(p: StandbyProblem, tasks: IntArray, clients: IntArray) -> int:
    """Total KIP-925 cost of replicas ``(tasks[i], clients[i])`` against the starting placement."""
    n_c = p.client_rack.size
    moved = ~np.isin(tasks * n_c + clients, p.rep_task * n_c + p.rep_client)
    traffic = p.misses[tasks, p.client_rack[clients]]
    return int((p.traffic_cost * traffic + p.non_overlap_cost * moved).sum())


@dataclass(frozen=True, slots=True)
class _Groups:
    """Replicas that may go to the same places, and where that is (group x tag class)."""

    of_replica: IntArray
    task: IntArray
    supply: IntArray
    allowed: npt.NDArray[np.bool_]


def _distinct(a: IntArray, b: IntArray) -> IntArray:
    """Distinct set values among two replicas' tag codes, per key (code 0 is "unset")."""
    distinct: IntArray = (a != 0).astype(np.int64) + (b != 0) - ((a == b) & (a != 0))
    return distinct


def _groups(p: StandbyProblem) -> _Groups:
    """A task's single standby is a group of its own; several are grouped by tag class."""
    q_n = p.class_values.shape[0]
    per_task = np.bincount(p.rep_task, minlength=p.active_client.size)[p.rep_task]
    active = p.active_client[p.rep_task]
    single = (per_task == 1) & (active >= 0)
    own_class = p.client_class[p.rep_client]
    key = p.rep_task * (q_n + 1) + np.where(single, 0, own_class + 1)
    uniq, of_replica = np.unique(key, return_inverse=True)
    first = np.zeros(uniq.size, np.int64)
    first[of_replica[::-1]] = np.arange(of_replica.size)[::-1]
    g_single = single[first]
    same = np.arange(q_n)[None, :] == own_class[first][:, None]
    a_vals = p.class_values[p.client_class[np.maximum(active[first], 0)]]
    keeps = (
        _distinct(a_vals[:, None, :], p.class_values[None, :, :])
        >= _distinct(a_vals, p.class_values[own_class[first]])[:, None, :]
    ).all(axis=2)
    allowed = np.where(g_single[:, None], keeps, same)
    supply = np.bincount(of_replica).astype(np.int64)
    return _Groups(of_replica.astype(np.int64), p.rep_task[first], supply, allowed)


def solve_standby_compact(p: StandbyProblem) -> tuple[IntArray, IntArray] | None:
    """Optimal replicas via (class, rack) hubs, or ``None`` if a hub's inflow cannot be split."""
    g = _groups(p)
    c_n, r_n = p.client_rack.size, p.misses.shape[1]
    hub_keys, client_hub = np.unique(p.client_class * r_n + p.client_rack, return_inverse=True)
    hub_class, hub_rack = hub_keys // r_n, hub_keys % r_n
    hub_size = np.bincount(client_hub)
    g_n, h_n, scale, counts = g.task.size, hub_keys.size, p.rep_task.size + 1, p.counts
    act = p.active_client[g.task]
    act_hub = np.where(act >= 0, client_hub[np.maximum(act, 0)], -1)
    ok = g.allowed[:, hub_class]
    cap = np.minimum(g.supply[:, None], hub_size[None, :] - (act_hub[:, None] == np.arange(h_n)))
    arc_g, arc_h = np.nonzero(ok & (cap > 0))
    lay = layout(("group", g_n), ("hub", h_n), ("client", c_n))
    g0, h0, c0 = lay.start("group"), lay.start("hub"), lay.start("client")
    stay = p.traffic_cost * p.misses[p.rep_task, p.client_rack[p.rep_client]] * scale
    move = (
        p.traffic_cost * p.misses[g.task[arc_g], hub_rack[arc_h]] + p.non_overlap_cost
    ) * scale + 1
    supplies = np.zeros(lay.num_nodes, np.int64)
    supplies[g0 : g0 + g_n] = g.supply
    supplies[c0:] = -counts
    n_rep = p.rep_task.size
    graph = FlowGraph.of(
        lay.num_nodes,
        [
            (g0 + g.of_replica, c0 + p.rep_client, 1, stay),
            (g0 + arc_g, h0 + arc_h, cap[arc_g, arc_h], move),
            (h0 + client_hub, c0 + np.arange(c_n), counts, 0),
        ],
        supplies,
    )
    flows = solve(graph).flows
    kept = flows[:n_rep] > 0
    arrive = flows[n_rep : n_rep + arc_g.size]
    slots = flows[n_rep + arc_g.size :]
    units_task = np.repeat(g.task[arc_g], arrive)
    units_hub = np.repeat(arc_h, arrive)
    placed = _split(p, kept, units_task, units_hub, client_hub, slots)
    if placed is None:
        return None
    tasks = np.concatenate([p.rep_task[kept], units_task[placed[0]]])
    clients = np.concatenate([p.rep_client[kept], placed[1]])
    order = np.lexsort((clients, tasks))
    return tasks[order], clients[order]


def _split(
    p: StandbyProblem,
    kept: npt.NDArray[np.bool_],
    units_task: IntArray,
    units_hub: IntArray,
    client_hub: IntArray,
    slots: IntArray,
) -> tuple[IntArray, IntArray] | None:
    """Give each arriving replica a client of its hub that does not hold the task yet.

    Replicas go in (hub, task) order, each to the hub client with the most free slots (ties: client
    order) among those allowed; ``None`` if some replica finds none.
    """
    holders: dict[int, set[int]] = {}
    for t, c in zip(p.rep_task[kept].tolist(), p.rep_client[kept].tolist(), strict=True):
        holders.setdefault(t, set()).add(c)
    heaps: dict[int, list[tuple[int, int]]] = {}
    for c in np.flatnonzero(slots).tolist():
        heaps.setdefault(int(client_hub[c]), []).append((-int(slots[c]), c))
    for heap in heaps.values():
        heapq.heapify(heap)
    active = p.active_client.tolist()
    tasks, hubs = units_task.tolist(), units_hub.tolist()
    chosen = [0] * len(tasks)
    for i in np.lexsort((units_task, units_hub)).tolist():
        t, heap = tasks[i], heaps.get(hubs[i], [])
        held = holders.setdefault(t, set())
        held.add(active[t])
        skipped = []
        while heap and heap[0][1] in held:
            skipped.append(heapq.heappop(heap))
        if not heap:
            return None
        free, c = heapq.heappop(heap)
        if free + 1 < 0:
            heapq.heappush(heap, (free + 1, c))
        for item in skipped:
            heapq.heappush(heap, item)
        held.add(c)
        chosen[i] = c
    return np.arange(len(tasks)), np.array(chosen, np.int64)


def solve_standby_dense(p: StandbyProblem) -> tuple[IntArray, IntArray]:
    """Optimal replicas on the per-client graph: every group to every client it may use."""
    g = _groups(p)
    c_n, scale = p.client_rack.size, p.rep_task.size + 1
    ok = g.allowed[:, p.client_class] & (
        np.arange(c_n)[None, :] != p.active_client[g.task][:, None]
    )
    arc_g, arc_c = np.nonzero(ok)
    t = g.task[arc_g]
    moved = ~np.isin(t * c_n + arc_c, p.rep_task * c_n + p.rep_client)
    cost = (p.traffic_cost * p.misses[t, p.client_rack[arc_c]] + p.non_overlap_cost * moved) * scale
    lay = layout(("group", g.task.size), ("client", c_n))
    supplies = np.concatenate([g.supply, -p.counts])
    graph = FlowGraph.of(
        lay.num_nodes, [(arc_g, lay.start("client") + arc_c, 1, cost + moved)], supplies
    )
    used = solve(graph).flows > 0
    tasks, clients = t[used], arc_c[used]
    order = np.lexsort((clients, tasks))
    return tasks[order], clients[order]
