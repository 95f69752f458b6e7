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
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["MoveAllowed", "balance_over_threads", "round_robin"]

MoveAllowed = Callable[[int, int], bool]
"""Whether a task may move from client ``source`` to client ``destination`` (both indices)."""


def round_robin(n_tasks: int, n_clients: int) -> list[list[int]]:
    """Task ``i`` to client ``i mod C``: Kafka's first, load-blind, stateful active guess."""
    return [list(range(c, n_tasks, n_clients)) for c in range(n_clients)]


def _should_move(source_count: int, source_cap: int, target_count: int, target_cap: int) -> bool:
    """Kafka's ``shouldMoveATask``: the move must shrink the per-thread skew without flipping it.

    With positive capacities that reduces to: after the move the source still carries at
    least as much per thread as the destination (computed in floats, as Kafka does).
    """
    return (source_count - 1) / source_cap >= (target_count + 1) / target_cap


def balance_over_threads(
    movable: Sequence[Sequence[int]],
    counts: Sequence[int],
    capacities: Sequence[int],
    *,
    held: Sequence[frozenset[int] | set[int]],
    allowed: MoveAllowed | None = None,
) -> list[list[int]]:
    """Move tasks of one kind between clients until no pair can improve; the new lists.

    ``movable[c]``: the sorted tasks of the kind being balanced on client ``c``;
    ``counts[c]``: every task it holds (all kinds), the load numerator; ``held[c]``: every task
    it holds, which it may not receive again. Kafka's loop: repeat whole passes until one moves
    nothing; in a pass every ordered pair (source, destination) in process order, the source
    giving its smallest tasks the destination may take while ``_should_move`` holds.

    A pass only visits destinations that could take a task from the source at its starting
    count (one vectorised test); the source's count only falls during its turn, so no other
    destination can qualify later in it. The result is the one Kafka's full scan gives.
    """
    tasks = [list(ts) for ts in movable]
    holding = [set(h) for h in held]
    count = np.asarray(counts, dtype=np.int64).copy()
    cap = np.asarray(capacities, dtype=np.float64)
    caps = [int(c) for c in capacities]
    changed = True
    while changed:
        changed = False
        for source in range(len(tasks)):
            threshold = (int(count[source]) - 1) / caps[source]
            for target in np.flatnonzero((count + 1) / cap <= threshold).tolist():
                if target == source or (allowed is not None and not allowed(source, target)):
                    continue
                moved = _move_pair(tasks, holding, count, caps, source, target)
                changed = changed or moved
    return tasks


def _move_pair(
    tasks: list[list[int]],
    holding: list[set[int]],
    count: np.ndarray,
    caps: Sequence[int],
    source: int,
    target: int,
) -> bool:
    """Move the source's smallest eligible tasks to ``target`` while the move still helps."""
    moved: list[int] = []
    for task in tasks[source]:
        if not _should_move(int(count[source]), caps[source], int(count[target]), caps[target]):
            break
        if task in holding[target]:
            continue
        moved.append(task)
        count[source] -= 1
        count[target] += 1
        holding[source].discard(task)
        holding[target].add(task)
        bisect.insort(tasks[target], task)
    if moved:
        gone = set(moved)
        tasks[source] = [t for t in tasks[source] if t not in gone]
    return bool(moved)
