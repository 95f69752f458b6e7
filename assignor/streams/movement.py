"""KIP-441 task movements: keep work on caught-up clients, warm up the balanced one.

The balanced guess (``balance.py``) may put a stateful task on a client that would need a long
restore. For each such task (its *lagging* client is the one the balanced guess chose, not
caught up, while some other client lags less), in Kafka's order a *runner* takes it now:

1. a caught-up client holding a standby of it runs it, the lagging client keeps a standby
   (a swap: no extra replica, no warm-up budget);
2. else the least loaded caught-up client runs it, and the lagging client gets a warm-up
   replica while the budget (``max_warmup_replicas``) lasts;
3. else (nobody caught up) the most caught-up client takes it, by swap or move as above.

Standbys are then checked the same way: a standby on a lagging client, when a more caught-up
client could hold it, gets a copy there; the lagging one stays as a warm-up while budget
remains. Warm-ups placed by step 2/3 are never moved again in the same assignment. (Kafka
calls the lagging client the movement's "destination": where the task should end up once
warm, though it is the client the task is taken away from now.)

"Least loaded" is ``(actives + standbys) / threads`` then process order (Kafka's
``ConstrainedPrioritySet``). Kafka collects the movements of each pass in a ``PriorityQueue``
ordered by number of caught-up clients, then task id, and takes them with ``poll()`` until it is
empty (``TaskMovement.assignActiveTaskMovements`` and ``assignStandbyTaskMovements``, Kafka 3.8
and later), so in sorted order. Sorting alone is not enough: in the standby pass one task can be
queued for several lagging clients under one key, and ``poll()`` hands out equal keys in the order
its binary heap leaves them, not the order they were offered. ``_JavaQueue`` therefore keeps
Java's heap (sift-up on ``offer``, sift-down on ``poll``) so ties fall where Kafka's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.holders import pairs
from kassign.assignor.streams.lags import CatchUpIndex

__all__ = ["ActiveMoves", "StandbyMoves", "move_active_tasks", "move_standby_tasks"]


@dataclass(frozen=True, slots=True)
class ActiveMoves:
    """Holdings after the active movements; ``warmups[c]``: warm-ups placed on client ``c``.

    The sets are the pass's own, handed over rather than frozen into copies (issue 16: a copy
    holds every task of the group once more); read them, never change them."""

    active: tuple[AbstractSet[int], ...]
    standby: tuple[AbstractSet[int], ...]
    warmups: tuple[AbstractSet[int], ...]
    movements: int
    warmups_left: int


@dataclass(frozen=True, slots=True)
class StandbyMoves:
    """Holdings after the standby movements; ``warmups_placed`` counts lagging copies kept,
    ``kept`` names them as ``(task, lagging client)`` (warm-ups: the explanation and the moves
    split tell them from standbys; at most the warm-up budget, so free to record). The sets
    are the pass's own, as in ``ActiveMoves``."""

    standby: tuple[AbstractSet[int], ...]
    movements: int
    warmups_placed: int
    warmups_left: int
    kept: tuple[tuple[int, int], ...] = ()


_NO_TASKS: frozenset[int] = frozenset()
"""The warm-ups of a client given none (most clients): one set shared by all of them."""


class _JavaQueue:
    """A ``java.util.PriorityQueue`` of movements keyed ``(caught-up count, task)``, each entry
    carrying its lagging client; ``offer`` and ``poll`` move entries exactly as Java's do, so
    entries with equal keys come out in Java's order too."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int]] = []

    def __len__(self) -> int:
        return len(self._heap)

    def offer(self, num_caught_up: int, task: int, lagging: int) -> None:
        """Java's ``siftUp``: climb while strictly smaller than the parent."""
        heap = self._heap
        entry = (num_caught_up, task, lagging)
        heap.append(entry)
        k = len(heap) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if entry[:2] >= heap[parent][:2]:  # Java stops on compareTo >= 0
                break
            heap[k] = heap[parent]
            k = parent
        heap[k] = entry

    def poll(self) -> tuple[int, int, int]:
        """Java's ``poll``: take the root, put the last entry there and ``siftDown``."""
        heap = self._heap
        head = heap[0]
        last = heap.pop()
        n = len(heap)
        if n == 0:
            return head
        k = 0
        while k < n >> 1:
            child = 2 * k + 1
            if child + 1 < n and heap[child][:2] > heap[child + 1][:2]:
                child += 1  # Java takes the right child only when strictly smaller
            if last[:2] <= heap[child][:2]:  # Java stops on compareTo <= 0
                break
            heap[k] = heap[child]
            k = child
        heap[k] = last
        return head

    def drain(self) -> Iterator[tuple[int, int, int]]:
        """Kafka's ``while (!queue.isEmpty()) queue.poll()``: nothing is offered meanwhile."""
        while self._heap:
            yield self.poll()


class _Board:
    """The holdings one movement pass works on: its standbys (``_scratch``) and the actives,
    only read here (the standby pass moves no active: no copy of every task, issue 16)."""

    def __init__(
        self,
        active: Sequence[AbstractSet[int]],
        standby: list[set[int]],
        capacities: Sequence[int],
    ) -> None:
        self.active = active
        self.standby = standby
        self.capacities = capacities

    def holds(self, client: int, task: int) -> bool:
        return task in self.active[client] or task in self.standby[client]

    def least_loaded(self, candidates: Iterable[int]) -> int | None:
        best: tuple[float, int] | None = None
        for c in candidates:
            key = ((len(self.active[c]) + len(self.standby[c])) / self.capacities[c], c)
            if best is None or key < best:
                best = key
        return None if best is None else best[1]


def candidates(
    index: CatchUpIndex,
    holdings: Sequence[AbstractSet[int]],
    skipped: Sequence[AbstractSet[int]] = (),
) -> list[tuple[int, int, int]]:
    """Every movement a pass offers, ``(caught-up count, task, lagging client)`` in the order
    Kafka offers them: client by client in process order, each client's tasks ascending; a
    held (client, task) pair is one when ``index.movable`` (not caught up there, some client
    lags less). ``skipped``: per client, tasks it holds that are not looked at (the standby
    pass's warm-ups). The whole group's pairs at once, as columns: a step per pair was most of
    a 10,000-task next round's movements (issue 24)."""
    checkpoint()
    tasks, clients = pairs(holdings)
    if any(skipped):
        n_c = len(holdings)
        skip = np.array([t * n_c + c for c, ts in enumerate(skipped) for t in ts], np.int64)
        keep = ~np.isin(tasks * n_c + clients, skip)
        tasks, clients = tasks[keep], clients[keep]
    moves = index.movable(clients, tasks)
    tasks, clients = tasks[moves], clients[moves]
    order = np.lexsort((tasks, clients))
    tasks, clients = tasks[order], clients[order]
    counts = index.caught_up_column()[tasks]
    checkpoint()
    return list(zip(counts.tolist(), tasks.tolist(), clients.tolist(), strict=True))


def _queued(
    index: CatchUpIndex,
    holdings: Sequence[AbstractSet[int]],
    skipped: Sequence[AbstractSet[int]] = (),
) -> _JavaQueue:
    """Kafka's queue of a pass: its ``candidates`` offered one by one (few: the ties in
    the queue fall by the order they were offered in)."""
    queue = _JavaQueue()
    for entry in candidates(index, holdings, skipped):
        queue.offer(*entry)
    return queue


def _scratch(holdings: Sequence[Iterable[int]], taking: bool) -> list[set[int]]:
    """Sets a pass may change: the caller's own (``taking``: it gives them up, so a group's
    holdings are not copied once more; issue 16), else copies."""
    if not taking:
        return [set(ts) for ts in holdings]
    if not all(isinstance(ts, set) for ts in holdings):
        raise TypeError("taking: the holdings must be the caller's sets")
    return [ts for ts in holdings if isinstance(ts, set)]


class _ActiveBoard(_Board):
    """A board whose actives move too (``moving``: the same sets as ``active``)."""

    def __init__(
        self, moving: list[set[int]], standby: list[set[int]], capacities: Sequence[int]
    ) -> None:
        super().__init__(moving, standby, capacities)
        self.moving = moving

    def swap(self, task: int, runner: int, lagging: int) -> None:
        """The runner's standby becomes the active; the lagging client's active a standby."""
        self.standby[runner].discard(task)
        self.moving[runner].add(task)
        self.moving[lagging].discard(task)
        self.standby[lagging].add(task)

    def move_active(self, task: int, runner: int, lagging: int, *, warm_up: bool) -> None:
        self.moving[runner].add(task)
        self.moving[lagging].discard(task)
        if warm_up:
            self.standby[lagging].add(task)


def move_active_tasks(
    index: CatchUpIndex,
    active: Sequence[Iterable[int]],
    *,
    standby: Sequence[Iterable[int]],
    capacities: Sequence[int],
    warmups_left: int,
    taking: bool = False,
) -> ActiveMoves:
    """Give each stateful active back to a (more) caught-up client; see the module docstring.

    ``taking``: ``active`` and ``standby`` are lists of sets the caller gives up (they are
    changed in place and handed back as the answer's sets), so a group's holdings are not
    copied once more (issue 16).
    """
    board = _ActiveBoard(_scratch(active, taking), _scratch(standby, taking), capacities)
    queue = _queued(index, board.moving)
    warmups: dict[int, set[int]] = {}  # only clients given one (issue 24: not a set each)
    movements = len(queue)
    for _, task, lagging in queue.drain():
        checkpoint()
        caught_up = index.caught_up(task)
        runner = board.least_loaded(c for c in caught_up if task in board.standby[c])
        if runner is not None:
            board.swap(task, runner, lagging)
            continue
        runner = board.least_loaded(caught_up)
        if runner is None:
            runner = next(index.by_lag(task))  # some client lags less: never the lagging one
            if task in board.standby[runner]:
                board.swap(task, runner, lagging)
                continue
        warm_up = warmups_left > 0
        board.move_active(task, runner, lagging, warm_up=warm_up)
        if warm_up:
            warmups.setdefault(lagging, set()).add(task)
            warmups_left -= 1
    return ActiveMoves(
        tuple(board.moving),
        tuple(board.standby),
        tuple(warmups.get(c, _NO_TASKS) for c in range(len(capacities))),
        movements,
        warmups_left,
    )


def move_standby_tasks(
    index: CatchUpIndex,
    active: Sequence[AbstractSet[int]],
    *,
    standby: Sequence[Iterable[int]],
    capacities: Sequence[int],
    warmups: Sequence[AbstractSet[int]],
    warmups_left: int,
    taking: bool = False,
) -> StandbyMoves:
    """Copy lagging standbys to more caught-up clients; the lagging copy stays while budget lasts.

    ``taking``: ``standby``'s sets are the caller's to give up (changed in place), as in
    ``move_active_tasks``."""
    board = _Board(active, _scratch(standby, taking), capacities)
    queue = _queued(index, board.standby, warmups)
    movements = placed = 0
    kept: list[tuple[int, int]] = []
    for _, task, lagging in queue.drain():
        checkpoint()
        holder = board.least_loaded(c for c in index.caught_up(task) if not board.holds(c, task))
        if holder is None:
            holder = _most_caught_up_free(index, board, task, lagging)
        if holder is None:
            continue  # every more caught-up client already holds a copy
        board.standby[holder].add(task)
        if warmups_left > 0:
            warmups_left -= 1
            placed += 1
            kept.append((task, lagging))
        else:
            board.standby[lagging].discard(task)
        movements += 1
    return StandbyMoves(tuple(board.standby), movements, placed, warmups_left, tuple(kept))


def _most_caught_up_free(index: CatchUpIndex, board: _Board, task: int, lagging: int) -> int | None:
    """The first client by lag that holds no copy, looking no further than the lagging one."""
    for client in index.by_lag(task):
        if client == lagging:
            return None
        if not board.holds(client, task):
            return client
    return None
