"""After the last fill, moves and swaps that bring cross-rack items home within the target.

The fill is greedy: an early item can take the last rack-local room a later one needed (three
members on three racks, each item local on two of them, can end with one item across where a
rotation has none). ``settle`` walks the cross-rack items, heaviest first, and takes for each
the first change that makes it rack-local, leaves every member within ``limit`` (the target the
fill had, so the peak is never raised past it) and makes nothing else cross-rack: a move to a
rack-local eligible member with room, else a swap with an item there that is rack-local where
this one was, or was across anyway. Items kept on their previous owner take no part unless
``racks_first`` (racks before moves); then the ones that moved already go first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from kassign.assignor.load.bound import IntArray, member_loads

if TYPE_CHECKING:
    from kassign.assignor.load.balance import LoadProblem

__all__ = ["settle"]

_EPS = 1e-9  # as the fill: rooms get this share of the target more
_ITEMS = 256  # cross-rack items examined, at most (each a pass over the items)
_PASS = 16  # a numpy pass over n items is priced as a fill of n / this (measured: ~1/50)


def settle(
    problem: LoadProblem,
    owners: IntArray,
    limit: float,
    *,
    racks_first: bool,
    pay: Callable[[int], object],
) -> IntArray:
    """``owners`` with cross-rack items brought home where the module's docstring allows."""
    assert problem.sites is not None and problem.local is not None
    sites, local, loads = problem.sites, problem.local, problem.loads
    n, m = len(loads), len(problem.capacities)
    owners = owners.copy()
    rooms = limit * problem.capacities * (1 + _EPS) - member_loads(loads, owners, m)
    classes = problem.classes if problem.classes is not None else np.zeros(n, np.int64)
    eligible = problem.eligible if problem.eligible is not None else np.ones((1, m), bool)
    stayed = owners == problem.owners
    crossing = np.flatnonzero(~local[sites, owners] & (racks_first | ~stayed))
    for i in crossing[np.lexsort((crossing, -loads[crossing]))][:_ITEMS].tolist():
        pay(max(n // _PASS, 1))
        p, w, c, s = int(owners[i]), float(loads[i]), int(classes[i]), int(sites[i])
        homes = eligible[c] & local[s]
        fits = np.flatnonzero(homes & (rooms >= w))
        if len(fits):
            _give(owners, rooms, loads, i, int(fits[np.argmax(rooms[fits])]))
            continue
        j = _partner(problem, owners, rooms, i, homes, stayed, racks_first, classes, eligible)
        if j >= 0:
            q = int(owners[j])
            _give(owners, rooms, loads, i, q)
            _give(owners, rooms, loads, j, p)
    return owners


def _partner(
    problem: LoadProblem,
    owners: IntArray,
    rooms: np.ndarray,
    i: int,
    homes: np.ndarray,
    stayed: np.ndarray,
    racks_first: bool,
    classes: IntArray,
    eligible: np.ndarray,
) -> int:
    """The first item to swap ``i`` with (-1: none): on a member ``i`` is at home on, free to
    move, allowed on ``i``'s member, no more across there than where it is, and light or
    heavy enough that both members stay within their rooms. Moved items before kept ones."""
    assert problem.sites is not None and problem.local is not None
    sites, local, loads = problem.sites, problem.local, problem.loads
    p, w = int(owners[i]), float(loads[i])
    ok = homes[owners] & eligible[classes, p]
    ok &= local[sites, p] | ~local[sites, owners]
    ok &= (loads <= rooms[p] + w) & (loads >= w - rooms[owners])
    if not racks_first:
        ok &= ~stayed
    hits = np.flatnonzero(ok)
    if not len(hits):
        return -1
    free = hits[~stayed[hits]]
    return int(free[0] if len(free) else hits[0])


def _give(owners: IntArray, rooms: np.ndarray, loads: np.ndarray, i: int, q: int) -> None:
    rooms[owners[i]] += loads[i]
    rooms[q] -= loads[i]
    owners[i] = q
