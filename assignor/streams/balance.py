"""Spreading tasks evenly over stream threads: Kafka's round-robin, then pairwise balancing.

The HA assignor's first guess for stateful actives ignores where tasks ran before: tasks go
round-robin over the clients in process order, then tasks move from the client with more work
per thread to the one with less until no move helps (Kafka's ``balanceTasksOverThreads``).
KIP-441 movements then pull tasks back to caught-up clients (``movement.py``).

Everything here is in index space: clients ``0..C-1`` in process order, tasks as sorted
integers, so integer order is Kafka's order. Load is ``assigned tasks / threads`` (a float,
as in Kafka), counting actives *and* standbys.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

import numpy as np
from kassign.assignor.interrupt import checkpoint

__all__ = ["MoveAllowed", "balance_over_threads", "round_robin"]

MoveAllowed = Callable[[int, int], bool]
"""Whether a task may move from client ``source`` to client ``destination`` (both indices)."""


def round_robin(
    n_tasks: int, n_clients: int, numbers: Sequence[int] | None = None
) -> list[list[int]]:
    """Task ``i`` to client ``i mod C``: Kafka's first, load-blind, stateful active guess.
    ``numbers``: the objects to list for ``0..n_tasks-1`` (a caller's shared ints)."""
    tasks = range(n_tasks) if numbers is None else numbers[:n_tasks]
    return [list(tasks[c::n_clients]) for c in range(n_clients)]


def _should_move(source_count: int, source_cap: int, target_count: int, target_cap: int) -> bool:
    """Kafka's ``shouldMoveATask``: the move must shrink the per-thread skew without flipping it.

    With positive capacities that reduces to: after the move the source still carries at
    least as much per thread as the destination (computed in floats, as Kafka does).
    """
    return (source_count - 1) / source_cap >= (target_count + 1) / target_cap


def balance_over_threads(
    movable: Sequence[Sequence[int]],
    counts: Sequence[int],
    *,
    capacities: Sequence[int],
    held: list[set[int]] | None,
    allowed: MoveAllowed | None = None,
    fixed: Sequence[int] = (),
) -> list[Sequence[int]]:
    """Move tasks of one kind between clients until no pair can improve; the new lists.

    ``movable[c]``: the sorted tasks of the kind being balanced on client ``c``;
    ``counts[c]``: every task it holds (all kinds), the load numerator; ``held[c]``: every task
    it holds, which it may not receive again: the caller's scratch, updated as tasks move (a
    copy would hold every task of the group once more; issue 16), or ``None``: made here, from
    ``movable``, only for the clients a move visits (issue 24: a caller that keeps no set per
    client makes none for the many a balanced group never touches); ``fixed[t]``, if given, the
    client holding task ``t`` in a kind that never moves here (its active; -1: none), which may
    not receive it either (so ``held`` need not copy them in; issue 24: one column, not a set
    per client). Kafka's loop:
    repeat whole passes until one moves nothing; in a pass every ordered pair (source,
    destination) in process order, the source giving its smallest tasks the destination may
    take while ``_should_move`` holds.

    A pass only visits destinations that could take a task from the source at its current
    count (a vectorised search for the next one); the source's count only falls during its
    turn, so a destination the search skips could not take a task later in it either, and a
    source no client could relieve is skipped outright. The result is Kafka's full scan's.
    A client's list is copied only when a task arrives (a client that neither gives nor takes
    gets its ``movable`` list back, not a copy: issue 24).
    """
    tasks = list(movable)
    count = list(counts)
    loads = _Loads(counts, capacities)
    holding: _Holding = held if held is not None else _Visited(tasks)
    changed = True
    while changed:
        changed = False
        for source in range(len(tasks)):
            checkpoint()
            if (count[source] - 1) / loads.caps[source] < loads.lightest_after_one_more():
                continue  # no client could take a task from this one
            for target in loads.targets(source, count):
                if allowed is None or allowed(source, target):
                    moved = _move_pair(tasks, holding, fixed, count, loads.caps, source, target)
                    if moved:
                        changed = True
                        loads.moved(source, target, moved)
    return tasks


class _Loads:
    """Scratch: the per-client counts as a numpy vector, for the vectorised target search."""

    def __init__(self, counts: Sequence[int], capacities: Sequence[int]) -> None:
        self.caps = [int(c) for c in capacities]
        self._count = np.asarray(counts, dtype=np.float64).copy()
        self._cap = np.asarray(capacities, dtype=np.float64)
        self._after = (self._count + 1) / self._cap
        """Each client's ``(count + 1) / capacity``, kept up to date by ``moved`` (two entries
        a move) rather than recomputed whole for each search: a Streams load answer's standbys
        take some 180,000 searches over 1,000 clients."""
        self._lightest: float | None = None

    def lightest_after_one_more(self) -> float:
        """min over clients of ``(count + 1) / capacity`` (cached until a move)."""
        if self._lightest is None:
            self._lightest = float(self._after.min())
        return self._lightest

    def moved(self, source: int, target: int, n: int) -> None:
        self._count[source] -= n
        self._count[target] += n
        for c in (source, target):
            self._after[c] = (self._count[c] + 1) / self._cap[c]
        self._lightest = None

    def targets(self, source: int, count: Sequence[int]) -> Iterator[int]:
        """In process order, each client that could take one of the source's tasks when the
        search reaches it (``count[source]`` read then: it falls as the caller moves tasks).

        The clients that fit are found once for the source's count at the start; a move only
        lowers the threshold and changes the source and the client just visited, so the ones
        still ahead that fit are among them: after a move they are filtered again, a
        comparison per remaining candidate rather than per client (2,000 clients' standbys
        in a Streams load answer took 2.6 s of one per client)."""
        threshold = (count[source] - 1) / self.caps[source]
        ahead = np.flatnonzero(self._after <= threshold)
        i = 0
        while i < len(ahead):
            target = int(ahead[i])
            i += 1
            if target == source:
                continue
            yield target
            now = (count[source] - 1) / self.caps[source]
            if now != threshold:
                threshold = now
                rest = ahead[i:]
                ahead, i = rest[self._after[rest] <= threshold], 0


class _Holding(Protocol):
    def __getitem__(self, client: int, /) -> set[int]: ...


class _Visited:
    """Each client's set of ``tasks[client]``, made when a move first visits it (and from then
    on kept up to date by the moves, as a caller's ``held`` is)."""

    __slots__ = ("_sets", "_tasks")

    def __init__(self, tasks: list[Sequence[int]]) -> None:
        self._tasks = tasks
        self._sets: dict[int, set[int]] = {}

    def __getitem__(self, client: int) -> set[int]:
        found = self._sets.get(client)
        if found is None:  # before any move changed the client's list
            found = self._sets[client] = set(self._tasks[client])
        return found


def _move_pair(
    tasks: list[Sequence[int]],
    holding: _Holding,
    fixed: Sequence[int],
    count: list[int],
    caps: Sequence[int],
    source: int,
    target: int,
) -> int:
    """Move the source's smallest eligible tasks to ``target`` while a move still helps; how many."""
    moved: list[int] = []
    for task in tasks[source]:
        if not _should_move(count[source], caps[source], count[target], caps[target]):
            break
        if task in holding[target] or (fixed and fixed[task] == target):
            continue
        moved.append(task)
        count[source] -= 1
        count[target] += 1
        holding[source].discard(task)
        holding[target].add(task)
    if moved:
        gone = set(moved)
        tasks[source] = [t for t in tasks[source] if t not in gone]
        arrived = list(tasks[target])  # a new list: the caller's ``movable`` stays as given
        for task in moved:
            bisect.insort(arrived, task)
        tasks[target] = arrived
    return len(moved)
