"""Rack-aware active-task graphs (KIP-925 4.B): compact (routed through racks) and dense.

Why compact: the cost of task ``t`` on client ``c`` is
``traffic_cost * misses[t, rack(c)] + non_overlap_cost * (c != start[t])``, so it depends on ``c``
only through its rack and whether it is ``t``'s starting client. Routing each task to one node
per rack (plus one direct arc to its starting client), and each rack to its clients, gives
O(tasks x racks + clients) arcs and the same optimum as Kafka's dense task x client graph: any
dense solution maps to a compact flow of equal cost, and any compact flow splits back into a
placement of no greater cost (a rack's clients are interchangeable for the tasks routed to it).

Ties: every cost is scaled by ``units + 1`` and every arc that moves a task gets ``+1``, so among
the optimal assignments the solver returns one that moves the fewest tasks. What is left is
broken by arc order (tasks in ``TaskId`` order, racks sorted, clients in Java UUID order) and by
the split of a rack's inflow: arriving tasks in task order fill the rack's free slots in client
order. ``balance_subtopology`` adds one node per (subtopology, rack) and (subtopology, client)
for each subtopology the KIP-925 4.B.II ceiling actually constrains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from kassign.assignor.errors import SolverError
from kassign.assignor.flow import ArcBlock, FlowGraph, IntArray, layout, solve

__all__ = [
    "ActiveProblem",
    "placement_cost",
    "solve_active_compact",
    "solve_active_dense",
    "split_inflow",
    "subtopology_bounds",
]


@dataclass(frozen=True, slots=True)
class ActiveProblem:
    """Tasks ``0..T-1`` placed on clients ``0..C-1``; every array indexed by those numbers.

    ``misses[t, r]``: partitions of task ``t`` with no replica in rack ``r``. ``subtopology``
    (dense group index per task) turns on the 4.B.II bound; ``None`` is plain min traffic.
    ``anchored[t]``: whether moving task ``t`` off ``start[t]`` costs ``non_overlap_cost``;
    ``None`` is every task (KIP-925's rule: the starting placement is what stickiness keeps).
    """

    client_rack: IntArray
    start: IntArray
    misses: IntArray
    traffic_cost: int
    non_overlap_cost: int
    subtopology: IntArray | None = None
    anchored: npt.NDArray[np.bool_] | None = None

    @property
    def num_tasks(self) -> int:
        return int(self.start.size)

    @property
    def num_clients(self) -> int:
        return int(self.client_rack.size)

    @property
    def counts(self) -> IntArray:
        return np.bincount(self.start, minlength=self.num_clients).astype(np.int64)

    @property
    def anchors(self) -> npt.NDArray[np.bool_]:
        """``anchored`` with ``None`` spelled out: every task."""
        if self.anchored is None:
            return np.ones(self.num_tasks, np.bool_)
        return self.anchored


def placement_cost(p: ActiveProblem, placement: IntArray) -> int:
    """Total KIP-925 cost of ``placement`` (client index per task)."""
    traffic = p.misses[np.arange(p.num_tasks), p.client_rack[placement]]
    moved = (placement != p.start) & p.anchors
    return int((p.traffic_cost * traffic + p.non_overlap_cost * moved).sum())


def subtopology_bounds(p: ActiveProblem) -> IntArray:
    """KIP-925 4.B.II: subtopology ``s`` may put at most ceil(S[s] * C[c] / n) tasks on client ``c``."""
    groups = p.subtopology if p.subtopology is not None else np.zeros(p.num_tasks, np.int64)
    sizes = np.bincount(groups).astype(np.int64)
    n = max(p.num_tasks, 1)
    return (sizes[:, None] * p.counts[None, :] + n - 1) // n


def split_inflow(
    arrival_hub: IntArray,
    arrival_unit: IntArray,
    slot_hub: IntArray,
    slot_target: IntArray,
    slot_flow: IntArray,
) -> tuple[IntArray, IntArray]:
    """Pair the units routed into each hub with the hub's outgoing slots, both in id order.

    A unit arriving at a hub may take any of its slots (they cost the same), so the pairing is
    ours to fix: units sorted by (hub, unit), slots by (hub, target), matched position by position.
    """
    order = np.lexsort((arrival_unit, arrival_hub))
    units = arrival_unit[order]
    keep = slot_flow > 0
    s_hub, s_target, s_flow = slot_hub[keep], slot_target[keep], slot_flow[keep]
    s_order = np.lexsort((s_target, s_hub))
    targets = np.repeat(s_target[s_order], s_flow[s_order])
    if targets.size != units.size:
        raise SolverError("BAD_RESULT", f"{units.size} units routed, {targets.size} slots filled")
    return units, targets


def _costs(p: ActiveProblem, scale: int) -> tuple[IntArray, IntArray]:
    """Scaled cost of staying (per task) and of moving to each rack (per task x rack, +1 tie-break)."""
    tasks = np.arange(p.num_tasks)
    stay = p.traffic_cost * p.misses[tasks, p.client_rack[p.start]] * scale
    move = (p.traffic_cost * p.misses + p.non_overlap_cost * p.anchors[:, None]) * scale + 1
    return stay.astype(np.int64), move.astype(np.int64)


def _constrained(p: ActiveProblem, subtopology: IntArray, bounds: IntArray) -> IntArray:
    """Subtopologies whose bound binds on some client (the others route like min traffic)."""
    sizes = np.bincount(subtopology, minlength=bounds.shape[0])
    binding = bounds < np.minimum(sizes[:, None], p.counts[None, :])
    return np.flatnonzero(binding.any(axis=1))


def solve_active_compact(p: ActiveProblem) -> IntArray:
    """Optimal placement through rack nodes (O(T x R + S' x C) arcs)."""
    t_n, c_n, r_n = p.num_tasks, p.num_clients, int(p.misses.shape[1])
    counts, scale = p.counts, t_n + 1
    stay, move = _costs(p, scale)
    if p.subtopology is None:
        bounds, cons = np.zeros((0, c_n), np.int64), np.zeros(0, np.int64)
    else:
        bounds = subtopology_bounds(p)
        cons = _constrained(p, p.subtopology, bounds)
    k = int(cons.size)
    lay = layout(
        ("task", t_n),
        ("rack", r_n),
        ("sub_rack", k * r_n),
        ("sub_client", k * c_n),
        ("client", c_n),
    )
    t0, r0, sr0, sc0, c0 = (
        lay.start(n) for n in ("task", "rack", "sub_rack", "sub_client", "client")
    )
    local = np.full(bounds.shape[0], -1, np.int64)
    local[cons] = np.arange(k)
    task_local = local[p.subtopology] if p.subtopology is not None else np.full(t_n, -1, np.int64)
    bound_to = task_local >= 0
    tasks = np.arange(t_n)
    direct_head = np.where(bound_to, sc0 + task_local * c_n + p.start, c0 + p.start)
    rack_head = (
        np.where(bound_to[:, None], sr0 + task_local[:, None] * r_n, r0) + np.arange(r_n)[None, :]
    )
    clients = np.arange(c_n)
    sub_c = np.repeat(np.arange(k), c_n), np.tile(clients, k)
    sub_cap = bounds[cons][sub_c[0], sub_c[1]] if k else np.zeros(0, np.int64)
    blocks: list[ArcBlock] = [
        (t0 + tasks, direct_head, 1, stay),
        (np.repeat(t0 + tasks, r_n), rack_head.ravel(), 1, move.ravel()),
        (r0 + p.client_rack, c0 + clients, counts, 0),
        (
            sr0 + sub_c[0] * r_n + p.client_rack[sub_c[1]],
            sc0 + sub_c[0] * c_n + sub_c[1],
            sub_cap,
            0,
        ),
        (sc0 + sub_c[0] * c_n + sub_c[1], c0 + sub_c[1], sub_cap, 0),
    ]
    supplies = np.zeros(lay.num_nodes, np.int64)
    supplies[t0 : t0 + t_n] = 1
    supplies[c0 : c0 + c_n] = -counts
    graph = FlowGraph.of(lay.num_nodes, blocks, supplies)
    flows = solve(graph).flows
    n_direct, n_rack, n_hub = t_n, t_n * r_n, c_n
    stays = flows[:n_direct] > 0
    rack_flow = flows[n_direct : n_direct + n_rack].reshape(t_n, r_n)
    hub_flow = flows[n_direct + n_rack : n_direct + n_rack + n_hub]
    sr_flow = flows[n_direct + n_rack + n_hub : n_direct + n_rack + n_hub + k * c_n]
    a_task, a_rack = np.nonzero(rack_flow)
    a_hub = np.where(bound_to[a_task], 1 + r_n + task_local[a_task] * r_n + a_rack, 1 + a_rack)
    slot_hub = np.concatenate(
        [1 + p.client_rack, 1 + r_n + sub_c[0] * r_n + p.client_rack[sub_c[1]]]
    )
    slot_target = np.concatenate([clients, sub_c[1]])
    # Flow into a constrained subtopology's client node arrives from its rack hub; the plain
    # rack->client arcs also carry that flow onward only via sub_client->client, never twice.
    units, targets = split_inflow(
        a_hub, a_task, slot_hub, slot_target, np.concatenate([hub_flow, sr_flow])
    )
    placement = p.start.copy()
    placement[units] = targets
    if int(stays.sum()) + units.size != t_n:
        raise SolverError("BAD_RESULT", "flow placed a task twice or not at all")
    return placement


def solve_active_dense(p: ActiveProblem) -> IntArray:
    """Optimal placement on Kafka's graph shape: an arc from every task to every client."""
    t_n, c_n = p.num_tasks, p.num_clients
    counts, scale = p.counts, t_n + 1
    clients = np.arange(c_n)
    moved = clients[None, :] != p.start[:, None]
    cost = (
        p.traffic_cost * p.misses[:, p.client_rack]
        + p.non_overlap_cost * (moved & p.anchors[:, None])
    ) * scale + moved
    tails = np.repeat(np.arange(t_n), c_n)
    if p.subtopology is None:
        lay = layout(("task", t_n), ("client", c_n))
        heads = lay.start("client") + np.tile(clients, t_n)
        extra: list[tuple[IntArray, IntArray, IntArray, int]] = []
    else:
        bounds = subtopology_bounds(p)
        s_n = bounds.shape[0]
        lay = layout(("task", t_n), ("sub_client", s_n * c_n), ("client", c_n))
        sc0, c0 = lay.start("sub_client"), lay.start("client")
        heads = sc0 + np.repeat(p.subtopology, c_n) * c_n + np.tile(clients, t_n)
        extra = [(sc0 + np.arange(s_n * c_n), c0 + np.tile(clients, s_n), bounds.ravel(), 0)]
    supplies = np.zeros(lay.num_nodes, np.int64)
    supplies[:t_n] = 1
    supplies[lay.start("client") :] = -counts
    graph = FlowGraph.of(lay.num_nodes, [(tails, heads, 1, cost.ravel()), *extra], supplies)
    flows = solve(graph).flows[: t_n * c_n].reshape(t_n, c_n)
    return np.asarray(flows.argmax(axis=1), dtype=np.int64)
