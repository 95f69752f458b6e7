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
``ConstrainedPrioritySet``). Kafka collects movements in a ``PriorityQueue`` ordered by number
of caught-up clients then task, but walks it with its iterator, that is in *heap-array* order,
not sorted order; ``_JavaQueue`` builds the same array (Java's sift-up on insert) and we walk it
the same way, so our choices fall where Kafka's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kassign.assignor.streams.lags import CatchUpIndex

__all__ = ["ActiveMoves", "StandbyMoves", "move_active_tasks", "move_standby_tasks"]


@dataclass(frozen=True, slots=True)
class ActiveMoves:
    """Holdings after the active movements; ``warmups[c]``: warm-ups placed on client ``c``."""

    active: tuple[frozenset[int], ...]
    standby: tuple[frozenset[int], ...]
    warmups: tuple[frozenset[int], ...]
    movements: int
    warmups_left: int


@dataclass(frozen=True, slots=True)
class StandbyMoves:
    """Holdings after the standby movements; ``warmups_placed`` counts lagging copies kept."""

    standby: tuple[frozenset[int], ...]
    movements: int
    warmups_placed: int
    warmups_left: int


class _JavaQueue:
    """The array of a ``java.util.PriorityQueue`` filled by ``offer`` only, keys compared by
    ``(caught-up count, task)``; entries carry their lagging client alongside."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int]] = []

    def offer(self, num_caught_up: int, task: int, lagging: int) -> None:
        items = self.items
        items.append((num_caught_up, task, lagging))
        k = len(items) - 1
        entry = items[k]
        while k > 0:
            parent = (k - 1) >> 1
            if entry[:2] >= items[parent][:2]:  # Java stops on compareTo >= 0
                break
            items[k] = items[parent]
            k = parent
        items[k] = entry


class _Board:
    """Scratch copy of the stateful holdings, private to one movement pass."""

    def __init__(
        self,
        active: Sequence[Iterable[int]],
        standby: Sequence[Iterable[int]],
        capacities: Sequence[int],
    ) -> None:
        self.active = [set(ts) for ts in active]
        self.standby = [set(ts) for ts in standby]
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

    def swap(self, task: int, runner: int, lagging: int) -> None:
        """The runner's standby becomes the active; the lagging client's active a standby."""
        self.standby[runner].discard(task)
        self.active[runner].add(task)
        self.active[lagging].discard(task)
        self.standby[lagging].add(task)

    def move_active(self, task: int, runner: int, lagging: int, *, warm_up: bool) -> None:
        self.active[runner].add(task)
        self.active[lagging].discard(task)
        if warm_up:
            self.standby[lagging].add(task)


def _frozen(sets: Sequence[set[int]]) -> tuple[frozenset[int], ...]:
    return tuple(frozenset(s) for s in sets)


def move_active_tasks(
    index: CatchUpIndex,
    active: Sequence[Iterable[int]],
    *,
    standby: Sequence[Iterable[int]],
    capacities: Sequence[int],
    warmups_left: int,
) -> ActiveMoves:
    """Give each stateful active back to a (more) caught-up client; see the module docstring."""
    board = _Board(active, standby, capacities)
    queue = _JavaQueue()
    for client, tasks in enumerate(board.active):
        for task in sorted(tasks):
            if index.has_more_caught_up_than(client, task):
                queue.offer(index.num_caught_up(task), task, client)
    warmups: list[set[int]] = [set() for _ in capacities]
    for _, task, lagging in queue.items:
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
            warmups[lagging].add(task)
            warmups_left -= 1
    return ActiveMoves(
        _frozen(board.active),
        _frozen(board.standby),
        _frozen(warmups),
        len(queue.items),
        warmups_left,
    )


def move_standby_tasks(
    index: CatchUpIndex,
    active: Sequence[Iterable[int]],
    *,
    standby: Sequence[Iterable[int]],
    capacities: Sequence[int],
    warmups: Sequence[frozenset[int]],
    warmups_left: int,
) -> StandbyMoves:
    """Copy lagging standbys to more caught-up clients; the lagging copy stays while budget lasts."""
    board = _Board(active, standby, capacities)
    queue = _JavaQueue()
    for client, tasks in enumerate(board.standby):
        for task in sorted(tasks - warmups[client]):
            if index.has_more_caught_up_than(client, task):
                queue.offer(index.num_caught_up(task), task, client)
    movements = placed = 0
    for _, task, lagging in queue.items:
        holder = board.least_loaded(c for c in index.caught_up(task) if not board.holds(c, task))
        if holder is None:
            holder = _most_caught_up_free(index, board, task, lagging)
        if holder is None:
            continue  # every more caught-up client already holds a copy
        board.standby[holder].add(task)
        if warmups_left > 0:
            warmups_left -= 1
            placed += 1
        else:
            board.standby[lagging].discard(task)
        movements += 1
    return StandbyMoves(_frozen(board.standby), movements, placed, warmups_left)


def _most_caught_up_free(index: CatchUpIndex, board: _Board, task: int, lagging: int) -> int | None:
    """The first client by lag that holds no copy, looking no further than the lagging one."""
    for client in index.by_lag(task):
        if client == lagging:
            return None
        if not board.holds(client, task):
            return client
    return None
