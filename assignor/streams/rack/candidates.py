"""The joint stage's candidate moves of actives, and what they may not change.

Why a module of its own: both joint steps (``joint`` on maps, ``joint_replicas`` on integers)
build the same ``Candidates`` - a task, its active's client and a target client each - weigh
their stickiness the same way, keep the same KIP-708 spread (``spread_keeper``) and the same
``balance_subtopology`` bounds (``subtopology_bounds``), and hand them to the one circulation
(``circulation.solve_exchanges``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import overload

import numpy as np
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import (
    ApplicationState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.rack.circulation import RoleProblem, solve_exchanges
from kassign.assignor.streams.rack.int_sets import isin
from kassign.assignor.streams.tags import tag_layout

__all__ = ["Candidates", "spread_keeper", "subtopology_bounds"]


class _Named(Sequence[TaskId]):
    """``tasks[i]`` for each position ``i`` in ``used``, made when first read: an integer
    step reads its candidates' task ids only under ``balance_subtopology`` or to say why racks
    cannot help (issue 24: a list of every candidate task made and not read, otherwise)."""

    __slots__ = ("_named", "_tasks", "_used")

    def __init__(self, tasks: Sequence[TaskId], used: IntArray) -> None:
        self._tasks, self._used = tasks, used
        self._named: list[TaskId] | None = None

    def _list(self) -> list[TaskId]:
        if self._named is None:
            self._named = [self._tasks[i] for i in self._used.tolist()]
        return self._named

    def __len__(self) -> int:
        return int(self._used.size)

    @overload
    def __getitem__(self, i: int) -> TaskId: ...

    @overload
    def __getitem__(self, i: slice) -> list[TaskId]: ...

    def __getitem__(self, i: int | slice) -> TaskId | list[TaskId]:
        return self._list()[i]

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._list())


def spread_keeper(
    state: ApplicationState,
) -> Callable[[ProcessId, ProcessId, Sequence[ProcessId]], bool]:
    """Whether moving an active from one client to another keeps its replicas' KIP-708 spread.

    Per tag key (the rack when no tags are configured, ``tags.tag_layout``), the count of
    distinct values over the task's clients must not drop, whether an unset tag counts as a
    value or not: the old client's value is among the standbys' anyway, or the new client's is
    not, and is unset only if the old one's was.
    """
    layout = tag_layout(state)
    if not layout.tag_aware:
        return lambda source, target, others: True
    values = layout.values

    def keeps(source: ProcessId, target: ProcessId, others: Sequence[ProcessId]) -> bool:
        for k, (old, new) in enumerate(zip(values[source], values[target], strict=True)):
            seen = {values[o][k] for o in others}
            if old not in seen and (new in seen or (new is None and old is not None)):
                return False
        return True

    return keeps


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate moves of actives, in the caller's order: candidate ``i`` takes task
    ``tasks[task[i]]`` from client ``source[i]`` (its active's) to client ``target[i]``.
    ``leaves[i]`` / ``returns[i]``: 1 where the source / target ran the task before (``None``
    when no previous owners were given); ``positions``: ``tasks``' rows in the caller's list of
    every task, for integer callers (``None`` for maps)."""

    tasks: Sequence[TaskId]
    task: IntArray
    source: IntArray
    target: IntArray
    leaves: IntArray | None
    returns: IntArray | None
    positions: IntArray | None = None

    @staticmethod
    def of(
        state: ApplicationState,
        owner: Mapping[TaskId, ProcessId],
        pairs: Sequence[tuple[TaskId, ProcessId]],
        previous: Mapping[TaskId, AbstractSet[ProcessId]] | None,
    ) -> Candidates:
        """``pairs`` of (task, target client); each task's source is its ``owner``."""
        clients = list(state.clients)
        index = {pid: i for i, pid in enumerate(clients)}
        tasks = sorted({t for t, _ in pairs})  # TaskId's own order is Kafka's
        row = {t: i for i, t in enumerate(tasks)}
        task = np.array([row[t] for t, _ in pairs], np.int64)
        source = np.array([index[owner[t]] for t, _ in pairs], np.int64)
        target = np.array([index[pid] for _, pid in pairs], np.int64)
        if previous is None:
            return Candidates(tasks, task, source, target, None, None)
        empty: frozenset[ProcessId] = frozenset()
        owned = [previous.get(tasks[t], empty) for t in task.tolist()]
        leaves = np.array([clients[a] in o for a, o in zip(source.tolist(), owned)], np.int64)
        returns = np.array([clients[b] in o for b, o in zip(target.tolist(), owned)], np.int64)
        return Candidates(tasks, task, source, target, leaves, returns)

    @staticmethod
    def of_positions(
        tasks: Sequence[TaskId],
        task: IntArray,
        moves: tuple[IntArray, IntArray],
        previous: IntArray,
        n_clients: int,
    ) -> Candidates:
        """Candidates given as positions in ``tasks`` and (source, target) client indices;
        ``previous``: each task's previous active clients as ``task * n_clients + client``."""
        source, target = moves
        used, row = np.unique(task, return_inverse=True)
        leaves = isin(task * n_clients + source, previous).astype(np.int64)
        returns = isin(task * n_clients + target, previous).astype(np.int64)
        named = _Named(tasks, used)  # read only under balance_subtopology or when blind
        return Candidates(named, row.astype(np.int64), source, target, leaves, returns, used)

    def solve(
        self,
        state: ApplicationState,
        gain: IntArray,
        room: tuple[IntArray, IntArray] | None,
        bounds: tuple[IntArray, IntArray] | None,
    ) -> IntArray:
        """The candidates to apply for ``gain`` (``solve_exchanges``' circulation). ``room``:
        per client, how many more actives it may give than take and take than give.
        ``bounds``: under ``balance_subtopology``, the KIP-925 (held, bound) per (subtopology,
        client) within which a client may trade one subtopology for another
        (``subtopology_bounds``)."""
        groups = _groups(state, self.tasks, self.task)
        lose, take = room if room is not None else (None, None)
        held, bound = bounds if bounds is not None else (None, None)
        problem = RoleProblem(
            len(state.clients),
            self.task,
            self.source,
            self.target,
            gain,
            groups,
            lose,
            take,
            held,
            bound,
        )
        return solve_exchanges(problem)

    def stickiness(self, non_overlap_cost: int, *, replicas: int) -> IntArray:
        """What each candidate costs in stickiness.

        Without previous owners: ``non_overlap_cost`` for each replica that changes client
        (KIP-925's rule against the assignment given). With them: the objective is the traffic
        plus ``non_overlap_cost`` for each active on a client that did not run it
        (``moved.moved_counts``' definition), so a candidate pays it for taking a task off a
        previous owner and earns it back for returning one there; moving a task between two
        clients that did not run it costs nothing (both are caught up, neither was where it
        ran).
        """
        if self.leaves is None or self.returns is None:
            return np.full(self.source.size, replicas * non_overlap_cost, np.int64)
        cost: IntArray = non_overlap_cost * (self.leaves - self.returns)
        return cost


def subtopology_bounds(
    state: ApplicationState, tasks: Sequence[TaskId], actives: Iterable[tuple[TaskId, int]]
) -> tuple[IntArray, IntArray] | None:
    """Under ``balance_subtopology``, per (subtopology of ``tasks``, numbered as ``_groups``
    does; client): the actives held (``actives``: every (task, client index)), and KIP-925
    4.B.II's bound with the client's share of the threads for its share of the tasks,
    ceil(S[s] x threads[c] / all threads); ``None`` under other strategies.

    Phase 1 bounds by the client's count in its balanced start, which is its thread share; the
    joint stage may move counts toward that share, so the share is what stays fixed.
    """
    if state.configs.rack_aware_strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        return None
    # each active's row found by its task's sub-topology key and counted in one bincount: a
    # name decoded and an item updated per active took 12 ms at 10,000 tasks (issue 24)
    by_held = _rows_by_key(tasks)
    clients = list(state.clients)
    checkpoint()
    held_tasks, held_by = tuple(zip(*actives, strict=True)) or ((), ())
    rows = np.array([by_held.get(t.subtopology_key, -1) for t in held_tasks], np.int64)
    at = np.array(held_by, np.int64)[rows >= 0]
    rows = rows[rows >= 0]
    if at.size and not (0 <= at.min() and at.max() < len(clients)):
        raise IndexError("an active's client index is outside the group")
    cell_count = len(by_held) * len(clients)
    held = np.bincount(rows * len(clients) + at, minlength=cell_count)
    held = held.astype(np.int64).reshape(len(by_held), len(clients))
    sizes = held.sum(axis=1)
    checkpoint()
    threads = np.array([max(1, state.clients[p].num_threads) for p in clients], np.int64)
    total = int(threads.sum())
    bound: IntArray = (sizes[:, None] * threads[None, :] + total - 1) // total
    return held, bound


def _key(t: TaskId) -> tuple[str, int]:
    return (t.named_topology or "", t.subtopology)


def _rows_by_key(tasks: Sequence[TaskId]) -> dict[tuple[bytes, int], int]:
    """The sub-topologies of ``tasks`` numbered by (topology name, sub-topology), keyed by
    ``TaskId.subtopology_key``: one task of each named, so no name is decoded per task."""
    one_of_each = {t.subtopology_key: t for t in tasks}
    row = {k: i for i, k in enumerate(sorted({_key(t) for t in one_of_each.values()}))}
    return {held: row[_key(t)] for held, t in one_of_each.items()}


def _groups(state: ApplicationState, tasks: Sequence[TaskId], t_idx: IntArray) -> IntArray:
    """The conservation class per candidate: its subtopology under ``balance_subtopology``."""
    if state.configs.rack_aware_strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        return np.zeros(t_idx.size, np.int64)
    keys = sorted({(t.named_topology or "", t.subtopology) for t in tasks})
    number = {k: i for i, k in enumerate(keys)}
    per_task = np.array([number[(t.named_topology or "", t.subtopology)] for t in tasks])
    return per_task[t_idx].astype(np.int64)
