"""Scratch book of the sticky assignor: who holds what, and Kafka's ``findClient`` over it.

Kept apart from ``sticky.py`` (the phases) because the choice of a client is where the time
goes: with 10,000 tasks and 1,000 clients a scan of every client per task (as Kafka does) takes
most of a minute in Python; heaps keep it to about a second with the same answers.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.holders import Holders, add_holder, holders_of
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskType

__all__ = ["ClientBook", "find_client", "least_loaded_anywhere", "least_loaded_of"]


class _Held(AbstractSet[TaskId]):
    """A client's tasks of both kinds, read through its two sets (a client never holds a task
    twice): a third set of them would hold every task once more (issue 16)."""

    __slots__ = ("_active", "_standby")

    def __init__(self, active: Mapping[TaskId, None], standby: Mapping[TaskId, None]) -> None:
        self._active, self._standby = active, standby

    def __contains__(self, task: object) -> bool:
        return task in self._active or task in self._standby

    def __iter__(self) -> Iterator[TaskId]:
        return chain(self._active, self._standby)

    def __len__(self) -> int:
        return len(self._active) + len(self._standby)


class ClientBook:
    """Scratch: tasks given so far per client (actives, standbys, both), and co-located pairs.

    A pair (a, b) is made when b joins a client holding a; preferring clients that gain a new
    pair spreads the tasks of a sub-topology and keeps two clients from holding the same set
    (Kafka's ``TaskPairs``). Tasks never leave the book, so the pairs made are exactly the
    pairs some client holds both of: they are read from the holdings, not stored (Kafka's
    set of pairs grows with the square of the tasks per client: 50,000 tasks on 10 clients
    made 125 million, 9 GB here; issue 16). Load is all tasks held per thread, as in Kafka's
    ``ClientState``.
    Clients sit in a heap by ``(load, -threads, process order)`` (entries go stale when a client
    gets a task; its count tells) and the empty ones in a heap by process order, so the roomiest
    client is found without a scan of all clients.
    """

    def __init__(
        self, state: ApplicationState, active: Mapping[ProcessId, AbstractSet[TaskId]] | None = None
    ) -> None:
        self.capacity = {pid: max(1, c.num_threads) for pid, c in state.clients.items()}
        # dicts used as sets: grown one task at a time, a set's table ends up to six slots of
        # 16 bytes a task, a dict's about 40 bytes a task (issue 16)
        self.active: dict[ProcessId, dict[TaskId, None]] = {pid: {} for pid in state.clients}
        self.standby: dict[ProcessId, dict[TaskId, None]] = {pid: {} for pid in state.clients}
        self.tasks = {pid: _Held(self.active[pid], self.standby[pid]) for pid in state.clients}
        self._holders: Holders = {}
        # per ordered pair of clients, how many tasks both hold (for ``has_new_pair``)
        self._common: dict[tuple[ProcessId, ProcessId], int] = {}
        self._key = {pid: process_key(pid) for pid in state.clients}
        self._heap: list[tuple[float, int, int, int, ProcessId]] = []
        self._empty = sorted((self._key[pid], pid) for pid in state.clients)
        for pid in state.clients:
            self._push(pid)
        for pid, tasks in (active or {}).items():
            for task in sorted(tasks):
                self.give(task, pid, TaskType.ACTIVE)

    def _push(self, pid: ProcessId) -> None:
        count = len(self.tasks[pid])
        entry = (count / self.capacity[pid], -self.capacity[pid], self._key[pid], count, pid)
        heapq.heappush(self._heap, entry)

    @staticmethod
    def frozen(
        which: Mapping[ProcessId, dict[TaskId, None]],
    ) -> dict[ProcessId, frozenset[TaskId]]:
        return {pid: frozenset(tasks) for pid, tasks in which.items()}

    @staticmethod
    def handed(
        which: Mapping[ProcessId, dict[TaskId, None]],
    ) -> dict[ProcessId, AbstractSet[TaskId]]:
        """``which`` as it is (its keys), for a caller that reads it once the book no longer
        changes it: ``frozen``'s copies would hold every task once more (issue 16)."""
        return {pid: tasks.keys() for pid, tasks in which.items()}

    def holders(self, task: TaskId) -> AbstractSet[ProcessId]:
        return frozenset(holders_of(self._holders, task))

    def holder_count(self, task: TaskId) -> int:
        """How many clients hold ``task`` (no set built: asked once per standby replica)."""
        return len(holders_of(self._holders, task))

    def under_quota(self, pid: ProcessId, quota: int) -> bool:
        return len(self.active[pid]) < self.capacity[pid] * quota

    def give(self, task: TaskId, pid: ProcessId, kind: TaskType) -> None:
        (self.active if kind is TaskType.ACTIVE else self.standby)[pid][task] = None
        for other in holders_of(self._holders, task):  # its tuple: no set built per task
            if other != pid:
                self._common[pid, other] = self._common.get((pid, other), 0) + 1
                self._common[other, pid] = self._common.get((other, pid), 0) + 1
        add_holder(self._holders, task, pid)
        self._push(pid)

    def has_new_pair(self, task: TaskId, pid: ProcessId) -> bool:
        """Whether ``task`` joining ``pid`` makes a pair no client holds yet: some task of
        ``pid`` (other than ``task``) that no holder of ``task`` holds too. With one holder
        (the usual case) that is a count: ``pid`` holds a task the holder lacks."""
        holders = holders_of(self._holders, task)  # distinct clients: a client holds it once
        if pid in holders:
            return False
        if len(holders) <= 1:
            common = sum(self._common.get((pid, h), 0) for h in holders)
            return common < len(self.tasks[pid])
        together = [self.tasks[h] for h in holders]
        return any(
            other != task and not any(other in held for held in together)
            for other in self.tasks[pid]
        )

    def roomier(self, a: ProcessId, b: ProcessId) -> bool:
        """Whether ``a`` has more available capacity than ``b`` (lower load, then more threads)."""
        load_a = len(self.tasks[a]) / self.capacity[a]
        load_b = len(self.tasks[b]) / self.capacity[b]
        if load_a != load_b:
            return load_a < load_b
        return self.capacity[a] > self.capacity[b]

    def should_rebalance(self, pid: ProcessId) -> bool:
        """Full (as many tasks as threads) while some client has more room."""
        if len(self.tasks[pid]) < self.capacity[pid]:
            return False
        roomiest = self.roomiest(lambda _: True)
        return roomiest is not None and self.roomier(roomiest, pid)

    def first_empty(self) -> ProcessId | None:
        """The first client in process order holding nothing yet."""
        while self._empty and self.tasks[self._empty[0][1]]:
            heapq.heappop(self._empty)
        return self._empty[0][1] if self._empty else None

    def roomiest(self, accept: Callable[[ProcessId], bool]) -> ProcessId | None:
        """The roomiest client ``accept`` takes, ties to process order (heap entries kept)."""
        popped: list[tuple[float, int, int, int, ProcessId]] = []
        chosen: ProcessId | None = None
        while self._heap:
            entry = heapq.heappop(self._heap)
            if entry[3] != len(self.tasks[entry[4]]):
                continue  # stale: the client got a task since
            popped.append(entry)
            if accept(entry[4]):
                chosen = entry[4]
                break
        for entry in popped:
            heapq.heappush(self._heap, entry)
        return chosen


def find_client(
    book: ClientBook,
    task: TaskId,
    previous_active: ProcessId | None,
    previous_standbys: Sequence[ProcessId],
) -> ProcessId:
    """Kafka's ``findClient`` among clients not holding ``task``: previous owner unless balance
    says otherwise, else least loaded."""
    taken = book.holders(task)
    if len(book.tasks) - len(taken) == 1:
        return next(pid for pid in book.tasks if pid not in taken)
    standbys = [p for p in previous_standbys if p not in taken]
    if previous_active is not None and previous_active not in taken:
        previous: ProcessId | None = previous_active
    else:
        previous = least_loaded_of(book, task, standbys)
    if previous is None:
        return least_loaded_anywhere(book, task, taken)
    if not book.should_rebalance(previous):
        return previous
    standby = least_loaded_of(book, task, standbys)
    if standby is None or book.should_rebalance(standby):
        return least_loaded_anywhere(book, task, taken)
    return standby


def least_loaded_of(
    book: ClientBook, task: TaskId, candidates: Sequence[ProcessId]
) -> ProcessId | None:
    """Kafka's ``leastLoaded`` over a few candidates, scanned in process order: an empty one
    first, else the roomiest gaining a new task pair, else the roomiest."""
    for check_pairs in (True, False):
        best: ProcessId | None = None
        for pid in candidates:
            if not book.tasks[pid]:
                return pid
            roomier = best is None or book.roomier(pid, best)
            if roomier and (not check_pairs or book.has_new_pair(task, pid)):
                best = pid
        if best is not None:
            return best
    return None


def least_loaded_anywhere(
    book: ClientBook, task: TaskId, taken: AbstractSet[ProcessId]
) -> ProcessId:
    """``_least_loaded_of`` over every client not in ``taken``, through the book's heaps."""
    empty = book.first_empty()
    if empty is not None:
        return empty  # a holder of the task is never empty
    chosen = book.roomiest(lambda pid: pid not in taken and book.has_new_pair(task, pid))
    if chosen is None:
        chosen = book.roomiest(lambda pid: pid not in taken)
    if chosen is None:  # callers make sure some client is free
        raise ValueError(f"no client can take task {task}")
    return chosen
