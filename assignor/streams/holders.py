"""Who holds each task, as the standby and sticky placements' scratch.

Most tasks have one holder (their active client), so a task maps to that client itself, and to
a tuple of clients only when it has more: a set a task would cost 216 bytes, 20 MB for 100,000
tasks (issue 16). Readers take a task's holders as a tuple and make the set they need.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, TypeVar

import kassign_native
import numpy as np
from kassign.assignor.streams.model import ProcessId, TaskId

if TYPE_CHECKING:  # flow imports OR-Tools, which a call without racks never loads
    from kassign.assignor.flow import IntArray

__all__ = [
    "Holders",
    "add_holder",
    "compact",
    "holders_of",
    "pairs",
    "picked",
    "picked_runs",
    "picked_sorted",
    "set_holders",
]

_T = TypeVar("_T")

Holders = dict[TaskId, ProcessId | tuple[ProcessId, ...]]


def holders_of(holders: Holders, task: TaskId) -> tuple[ProcessId, ...]:
    found = holders.get(task)
    if found is None:
        return ()
    return found if isinstance(found, tuple) else (found,)


def add_holder(holders: Holders, task: TaskId, pid: ProcessId) -> None:
    found = holders.get(task)
    holders[task] = pid if found is None else (*holders_of(holders, task), pid)


def set_holders(holders: Holders, task: TaskId, pids: Collection[ProcessId]) -> None:
    if len(pids) > 1:
        holders[task] = tuple(pids)
    elif pids:
        holders[task] = next(iter(pids))
    else:
        holders.pop(task, None)


def compact(items: Iterable[int]) -> set[int]:
    """A set of ``items`` in the smallest table Python gives a set of its size: built through a
    dict, whose size it takes up front, not grown one insert at a time (which can leave it
    four times too big: 5,000 positions in 512 KB, not 256 KB; issue 16's memory bound)."""
    return set(dict.fromkeys(items))


def pairs(held: Sequence[Collection[int]]) -> tuple[IntArray, IntArray]:
    """Every ``(position, index)`` with ``position in held[index]``, as two int64 columns in
    index order: per-client collections as the columns the compiled core reads."""
    sizes = [len(h) for h in held]
    positions = np.fromiter(chain.from_iterable(held), np.int64, sum(sizes))
    return positions, np.repeat(np.arange(len(held), dtype=np.int64), sizes)


def picked(items: Sequence[_T], positions: Sequence[int]) -> tuple[_T, ...]:
    """``tuple(items[p] for p in positions)`` in one ``itemgetter`` call: a third of the time
    of ``map(items.__getitem__, ...)``, which calls a slot wrapper per item (the answer's task
    lists of a 100,000-task group, issue 24)."""
    if len(positions) > 1:
        found: tuple[_T, ...] = itemgetter(*positions)(items)
        return found
    return tuple(items[p] for p in positions)


def picked_runs(
    items: tuple[_T, ...], positions: IntArray, ends: list[int]
) -> list[tuple[_T, ...]]:
    """Per run ``positions[ends[i-1]:ends[i]]``, ``items`` at those positions in that order,
    compiled (``kassign_native``, every run in one call: the high-availability answer's lists
    read from its integer columns; issue 24). ``items``' own objects, never copies."""
    return kassign_native.picked_runs(items, positions.astype(np.int64, copy=False).tobytes(), ends)


def picked_sorted(items: tuple[_T, ...], held: Sequence[Iterable[int]]) -> list[tuple[_T, ...]]:
    """``[picked(items, sorted(h)) for h in held]`` compiled (``kassign_native``, one call for
    every client: the answer's task lists of a 100,000-task group were a fifth of the call in
    Python; issue 24). ``items``' own objects, never copies."""
    return kassign_native.picked_sorted(items, held)
