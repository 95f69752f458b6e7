"""A stateful assignment as integer arrays, and the rack tables of its tasks, built once a request.

Why: the rack layer took maps of task ids per client (``Mapping[ProcessId, AbstractSet[TaskId]]``)
and the high-availability assignor, which holds integers, built them for every step, and each step
numbered tasks and clients again, sorted them, hashed a ``UUID`` per replica and computed its miss
tables afresh (most of a 100,000-task ``min_traffic`` call, issue 24). ``Replicas`` is what those
steps read and return instead, and ``RackTables`` their miss tables over every task of the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.rack.cost_tables import miss_columns, partition_rows
from kassign.assignor.streams.rack.costs import CostModel, counted_partitions
from kassign.assignor.streams.rack.int_sets import pair_order
from kassign.assignor.streams.rack.problems import client_racks, tag_classes
from kassign.assignor.streams.result import TaskType

__all__ = ["RackTables", "Replicas"]


@dataclass(frozen=True, slots=True)
class Replicas:
    """Task ``t`` is ``tasks[t]`` (sorted: ``TaskId`` order is Kafka's), client ``c`` is the
    ``c``-th of ``state.clients`` (the rack layer's order); ``owner[t]`` runs task ``t``'s
    active (-1: none); standby ``i`` is ``(rep_task[i], rep_client[i])``, sorted by task then
    client, as the map-based steps number them."""

    tasks: Sequence[TaskId]
    owner: IntArray
    rep_task: IntArray
    rep_client: IntArray

    def with_standbys(
        self, rep_task: IntArray, rep_client: IntArray, *, ordered: bool = False
    ) -> Replicas:
        """The same actives, these standbys (sorted here, unless the caller says they are:
        ``ordered``, as a standby solve returns them; issue 24: a sort a step saved)."""
        if ordered:
            return replace(self, rep_task=rep_task, rep_client=rep_client)
        order = pair_order(rep_task, rep_client)
        return replace(self, rep_task=rep_task[order], rep_client=rep_client[order])

    def standby_codes(self, n_clients: int) -> IntArray:
        """``task * n_clients + client`` of each standby (a pair as one sortable int)."""
        codes: IntArray = self.rep_task * n_clients + self.rep_client
        return codes

    def active_counts(self, n_clients: int) -> IntArray:
        counts: IntArray = np.bincount(self.owner[self.owner >= 0], minlength=n_clients)
        return counts


@dataclass(frozen=True, slots=True)
class RackTables:
    """Kafka's built-in miss tables (``misses[t, r]``: an active's source partitions, a standby's
    changelogs with no replica in rack ``r``) of every task of a ``Replicas``, with the clients'
    racks; ``active_blind[t]`` / ``standby_blind[t]``: a partition of task ``t`` that kind needs
    has unknown racks, so a step that reads task ``t`` as that kind is disabled, as the
    map-based step's own table would have said. ``client_order[c]``: client ``c``'s rank by
    process id (``UUID`` order), by which the map-based steps sorted their candidates.
    ``classes``: each client's KIP-708 tag class and each class's value codes
    (``problems.tag_classes``), which every standby solve of the request reads."""

    racks: list[str]
    client_rack: IntArray
    active: IntArray
    standby: IntArray
    active_blind: np.ndarray
    standby_blind: np.ndarray
    client_order: IntArray
    classes: tuple[IntArray, IntArray]

    def cost_of(self, replicas: Replicas) -> int | None:
        """Cross-rack partitions of every replica (actives and standbys) by these tables;
        ``None`` where a held task's racks are unknown, as its own tables would say."""
        held = np.flatnonzero(replicas.owner >= 0)
        used = np.concatenate([held, replicas.rep_task])
        if (self.active_blind[used] | self.standby_blind[used]).any():
            return None
        active = self.active[held, self.client_rack[replicas.owner[held]]]
        standby = self.standby[replicas.rep_task, self.client_rack[replicas.rep_client]]
        return int(active.sum()) + int(standby.sum())

    @staticmethod
    def of(state: ApplicationState, tasks: Sequence[TaskId]) -> RackTables | None:
        """The tables, or ``None`` where no step can use racks (a client without one)."""
        if any(not c.rack_id for c in state.clients.values()):
            return None
        racks = sorted({str(c.rack_id) for c in state.clients.values()})
        tables, blind = [], []
        rows = partition_rows(state, tasks)  # both kinds read the same rows (issue 24)
        for kind in (TaskType.ACTIVE, TaskType.STANDBY):
            checkpoint()
            misses, _, blind_task = miss_columns(
                state,
                tasks,
                racks,
                counted=counted_partitions(CostModel.BUILT_IN, kind),
                required=counted_partitions(CostModel.TASK_ASSIGNMENT_UTILS, kind),
                rows=rows,
            )
            tables.append(misses)
            blind.append(np.zeros(len(tasks), np.bool_))
            blind[-1][blind_task] = True
        client_rack = client_racks(state, racks)
        pids = list(state.clients)
        order = np.zeros(len(pids), np.int64)
        by_id = [p.int for p in pids]  # ``UUID`` order is its 128-bit number's, compared in C
        order[sorted(range(len(pids)), key=by_id.__getitem__)] = np.arange(len(pids))
        classes = tag_classes(state, pids)
        return RackTables(
            racks, client_rack, tables[0], tables[1], blind[0], blind[1], order, classes
        )
