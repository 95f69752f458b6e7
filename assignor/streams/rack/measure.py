"""Kafka's built-in cross-rack measure of an assignment, and the miss tables it and the joint
stage read.

Why a module: the joint stage (``joint.py``) weighs candidate moves with the same per-task miss
tables the assignors' measurements sum, and the measurements need none of its circulations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.rack.cost_tables import rack_costs
from kassign.assignor.streams.rack.costs import CostModel
from kassign.assignor.streams.rack.int_sets import unique
from kassign.assignor.streams.result import TaskType

__all__ = ["cross_rack_cost", "holdings_cost", "miss_tables"]

Assignment = Mapping[ProcessId, AbstractSet[TaskId]]


def cross_rack_cost(state: ApplicationState, active: Assignment, standby: Assignment) -> int | None:
    """Kafka's built-in measure of an assignment (sources of actives, changelogs of standbys,
    each partition with no replica in its client's rack); ``None`` where racks cannot say."""
    tasks = sorted(
        {t for ts in active.values() for t in ts} | {t for ts in standby.values() for t in ts}
    )
    if not tasks:
        return 0
    tables = miss_tables(state, tasks, 1, (TaskType.ACTIVE, TaskType.STANDBY))
    if isinstance(tables, str):
        return None
    client_rack, misses = tables
    row = dict(zip(tasks, range(len(tasks))))
    index = {pid: i for i, pid in enumerate(state.clients)}
    total = 0
    for assignment, miss in zip((active, standby), misses, strict=True):
        for pid, ts in assignment.items():
            checkpoint()
            rows = np.fromiter(map(row.__getitem__, ts), np.int64, len(ts))
            total += int(miss[rows, client_rack[index[pid]]].sum())
    return total


def holdings_cost(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    active: Sequence[Iterable[int]],
    standby: Sequence[Iterable[int]],
    clients: Sequence[ProcessId],
) -> int | None:
    """``cross_rack_cost`` of holdings given as positions in ``tasks``, per client of
    ``clients``: the same figure without naming every task and client first (issue 24: the
    assignor measured its phases through two maps of task ids each)."""
    held = [[np.fromiter(h, np.int64) for h in holdings] for holdings in (active, standby)]
    used = unique(np.concatenate([a for kind in held for a in kind] + [np.zeros(0, np.int64)]))
    if not used.size:
        return 0
    tables = miss_tables(
        state, [tasks[i] for i in used.tolist()], 1, (TaskType.ACTIVE, TaskType.STANDBY)
    )
    if isinstance(tables, str):
        return None
    client_rack, misses = tables
    row = np.full(len(tasks), -1, np.int64)
    row[used] = np.arange(used.size)
    index = {pid: i for i, pid in enumerate(state.clients)}
    rack = client_rack[np.array([index[pid] for pid in clients], np.int64)]
    total = 0
    for kind, miss in zip(held, misses, strict=True):  # one gather per kind, not per client
        sizes = np.array([a.size for a in kind], np.int64)
        rows = row[np.concatenate([*kind, np.zeros(0, np.int64)])]
        total += int(miss[rows, np.repeat(rack[: sizes.size], sizes)].sum())
    return total


def miss_tables(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    traffic_cost: int,
    kinds: tuple[TaskType, ...],
) -> tuple[IntArray, list[IntArray]] | str:
    """Each client's rack index and, per kind, ``misses[t, r]`` under the built-in model."""
    tables = []
    racks: list[str] = []
    for kind in kinds:
        checkpoint()
        costs = rack_costs(
            state,
            tasks,
            traffic_cost,
            cost_model=CostModel.BUILT_IN,
            task_type=kind,
            allow_uniform=True,
        )
        if isinstance(costs, str):
            return costs
        racks, misses = costs
        tables.append(misses)
    rack_of = {r: i for i, r in enumerate(racks)}
    client_rack = np.array([rack_of[str(c.rack_id)] for c in state.clients.values()], np.int64)
    return client_rack, tables
