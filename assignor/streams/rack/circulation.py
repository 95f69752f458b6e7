"""The circulation behind the joint stage: which candidate moves of actives to make.

Why a module of its own: the joint stage's two steps (role exchanges and relocations, on maps in
``joint`` and on integers in ``joint_replicas``) weigh their candidates differently but choose
among them the same way, a minimum-cost circulation over clients: one unit from the active's
client, through the task, to the target client. This is that circulation alone, on arrays.
Its one solve is checked for the caller's deadline before and after (``flow.solve``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from kassign.assignor.flow import ArcBlock, FlowGraph, IntArray, layout, solve

__all__ = ["RoleProblem", "solve_exchanges"]


@dataclass(frozen=True, slots=True)
class RoleProblem:
    """Candidate exchanges as parallel arrays: task ``task[i]`` active on client ``source[i]``
    may become active on ``target[i]`` (which holds a standby of it), for ``gain[i]`` less cost.

    ``group[i]`` is the flow-conservation class of the task (its subtopology under
    ``balance_subtopology``, else 0). ``may_lose[c]`` / ``may_gain[c]``: how many more actives
    client ``c`` may give than it takes, and the reverse (``None``: none, counts are kept).
    ``held[g, c]`` / ``bound[g, c]``: with several classes, how many tasks of class ``g`` client
    ``c`` runs and may run; a client may then trade one class for another within the bounds
    (``None``: every (class, client) count is kept). Rows are indexed by ``group`` values.
    """

    num_clients: int
    task: IntArray
    source: IntArray
    target: IntArray
    gain: IntArray
    group: IntArray
    may_lose: IntArray | None = None
    may_gain: IntArray | None = None
    held: IntArray | None = None
    bound: IntArray | None = None


def solve_exchanges(p: RoleProblem) -> IntArray:
    """Indices of the candidates to apply: a minimum-cost circulation, at most one per task."""
    if p.task.size == 0 or not (p.gain > 0).any():
        return np.zeros(0, np.int64)
    tasks, task_node = np.unique(p.task, return_inverse=True)
    groups, group_of = np.unique(p.group, return_inverse=True)
    g_n, c_n, n = groups.size, p.num_clients, p.task.size
    lay = layout(("slot", g_n * c_n), ("task", tasks.size))
    t0 = lay.start("task")
    first = np.zeros(tasks.size, np.int64)
    first[task_node[::-1]] = np.arange(n)[::-1]
    scale = n + 1
    arcs: list[ArcBlock] = [
        (group_of[first] * c_n + p.source[first], t0 + np.arange(tasks.size), 1, 0),
        (t0 + task_node, group_of * c_n + p.target, 1, -p.gain * scale + 1),
    ]
    nodes = lay.num_nodes
    mixes = p.held is not None and p.bound is not None
    banks = p.may_lose is not None and p.may_gain is not None
    if mixes and p.held is not None and p.bound is not None:
        # A client's slots meet at a hub: a slot gives up to what it holds and takes up to its
        # bound, so a client may trade one class for another at no cost of its own.
        hubs, nodes = nodes + np.arange(c_n), nodes + c_n
        slot_client = np.tile(np.arange(c_n), g_n)
        slot_ids = np.arange(g_n * c_n)
        give = p.held[groups].ravel()
        take = np.maximum(p.bound[groups] - p.held[groups], 0).ravel()
        arcs += [(hubs[slot_client], slot_ids, give, 0), (slot_ids, hubs[slot_client], take, 0)]
    elif g_n == 1:
        hubs = np.arange(c_n)  # one class: a client's slot is the client
    else:
        banks = False  # several classes whose counts are kept: nothing to lend
    if banks and p.may_lose is not None and p.may_gain is not None:
        # A bank lets a client give more actives than it takes (up to may_lose) and another
        # take more than it gives (up to may_gain), at no cost of its own.
        arcs += [(nodes, hubs, p.may_lose, 0), (hubs, nodes, p.may_gain, 0)]
        nodes += 1
    graph = FlowGraph.of(nodes, arcs, np.zeros(nodes, np.int64))
    flows = solve(graph).flows[tasks.size : tasks.size + n]
    return np.flatnonzero(flows > 0).astype(np.int64)
