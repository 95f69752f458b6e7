"""Place items so that the largest load per unit of capacity is small, moving few of them.

Minimising the largest load on machines of different speeds is NP-hard (it contains bin
packing), so ``balance`` searches for the smallest *target* ``T`` (a load per unit of
capacity) at which a placement is found: from the bound it steps up until a fill fits, then
bisects. At a target each member has room for ``T x capacity``; a *fill* places every item,
heaviest first, on the eligible member with the most room left (worst fit), or fails.

At the target found, the *sticky* fill first lets each member keep its previous items,
heaviest first, each that still fits in its room (light items are the ones that move: they fit
in the little room a drift leaves others), then fills the rest. ``slack`` trades a little
balance for stickiness: when the target found is within ``slack`` of the bound, the sticky fill
may use up to ``bound x (1 + slack)``, so loads drifting a little move few items. Without a
sticky fill the fresh one stands. Last, moves and swaps off the peak member while the peak is
above that goal (the heuristics' leftovers on small groups).

Ties break by member and item index: the same problem gives the same placement.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from kassign.assignor.load.bound import FloatArray, IntArray, lower_bound, peak_ratio

__all__ = ["BoolArray", "LoadPlan", "LoadProblem", "balance"]

BoolArray = np.ndarray[tuple[int, int], np.dtype[np.bool_]]

_PRECISION = 1e-3  # bisection stops when the target is known to this share of the bound
_GROWTH = 1.25  # the target's steps up from the bound until a placement fits
_EPS = 1e-9  # float sums compared with this share of the room
_ROUNDS = 64  # moves or swaps tried off the peak member, at most


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """Items with loads and previous owners (``-1``: none), members with capacities; an item of
    class ``c`` may go to member ``m`` only if ``eligible[c, m]`` (no ``eligible``: anywhere).
    ``stay``: what moving each item away from its owner costs (a Streams task's state bytes);
    a member over its room keeps the costliest first, so the cheap ones move (none: by load)."""

    loads: FloatArray
    capacities: FloatArray
    owners: IntArray
    classes: IntArray | None = None
    eligible: BoolArray | None = None
    stay: FloatArray | None = None

    def __post_init__(self) -> None:
        if (self.loads < 0).any() or not np.isfinite(self.loads).all():
            raise ValueError("loads must be finite and non-negative")
        if (self.capacities <= 0).any() or not np.isfinite(self.capacities).all():
            raise ValueError("capacities must be finite and positive")
        if len(self.owners) != len(self.loads):
            raise ValueError("one previous owner (or -1) per item")
        if (self.classes is None) != (self.eligible is None):
            raise ValueError("classes and eligible come together")
        if self.stay is not None and len(self.stay) != len(self.loads):
            raise ValueError("one stay cost per item")

    def allowed(self, item: int) -> IntArray:
        """The members ``item`` may go to, in index order."""
        if self.eligible is None or self.classes is None:
            return np.arange(len(self.capacities))
        return np.flatnonzero(self.eligible[self.classes[item]])


@dataclass(frozen=True, slots=True)
class LoadPlan:
    """An owner per item, the bound, the peak reached and how many items changed owner."""

    owners: IntArray
    bound: float
    peak: float
    moves: int


def balance(problem: LoadProblem, *, slack: float = 0.01) -> LoadPlan:
    """The placement described in the module's docstring."""
    for i in range(len(problem.loads)) if problem.eligible is not None else ():
        if not len(problem.allowed(i)):
            raise ValueError(f"item {i} may go to no member")
    bound = lower_bound(problem.loads, problem.capacities)
    lo = hi = bound
    found = _fill(problem, hi, keep=False)
    while found is None:  # the bound is rarely reached: raise the target until a fill fits
        lo, hi = hi, hi * _GROWTH
        found = _fill(problem, hi, keep=False)
    best = found
    while hi - lo > _PRECISION * bound:
        target = (lo + hi) / 2
        found = _fill(problem, target, keep=False)
        if found is None:
            lo = target
        else:
            hi, best = target, found
    relaxed = max(hi, min(bound * (1 + slack), hi * (1 + slack)))
    sticky = None
    if (problem.owners >= 0).any():
        sticky = _fill(problem, relaxed, keep=True)
        if sticky is None and relaxed > hi:
            sticky = _fill(problem, hi, keep=True)
    owners = _improve(problem, sticky if sticky is not None else best, bound * (1 + slack))
    return LoadPlan(
        owners=owners,
        bound=bound,
        peak=peak_ratio(problem.loads, problem.capacities, owners),
        moves=int(((problem.owners >= 0) & (owners != problem.owners)).sum()),
    )


def _fill(problem: LoadProblem, target: float, *, keep: bool) -> IntArray | None:
    """Kept items, then the rest heaviest first into the roomiest eligible member."""
    loads, caps = problem.loads, problem.capacities
    rooms = target * caps * (1 + _EPS)
    owners = np.full(len(loads), -1, dtype=np.int64)
    if keep:
        kept = _kept(problem, rooms)
        owners[kept] = problem.owners[kept]
        rooms -= np.bincount(owners[kept], weights=loads[kept], minlength=len(caps))
    pool = np.flatnonzero(owners < 0)
    pool = pool[np.lexsort((pool, -loads[pool]))]
    return owners if _worst_fit(problem, pool, rooms, owners) else None


def _kept(problem: LoadProblem, rooms: FloatArray) -> IntArray:
    """The previous items each member keeps: heaviest first, each that still fits in its room.

    Keeping the heavy ones leaves light items to move, which fit in the little room the other
    members have left when loads drift; a member within its room keeps everything. With
    ``stay``, the costliest to move come first (ties: heaviest)."""
    loads, prev = problem.loads, problem.owners
    mine = np.flatnonzero(prev >= 0)
    if problem.eligible is not None and problem.classes is not None:
        mine = mine[problem.eligible[problem.classes[mine], prev[mine]]]
    keys = [mine, -loads[mine], prev[mine]]
    if problem.stay is not None:  # the costliest to move first, then the heaviest
        keys.insert(2, -problem.stay[mine])
    order = mine[np.lexsort(keys)]
    if not len(order):
        return order
    owner = prev[order]
    total = np.cumsum(loads[order])
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    ends = np.r_[starts[1:], len(order)]
    before = np.repeat(np.r_[0.0, total][starts], ends - starts)
    keep = total - before <= rooms[owner]
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if keep[end - 1]:
            continue  # the whole list fits
        room = float(rooms[owner[start]])
        for k in range(start, end):  # first fit down the list
            w = float(loads[order[k]])
            keep[k] = w <= room
            room -= w if keep[k] else 0.0
    kept: IntArray = order[keep]
    return kept


def _worst_fit(problem: LoadProblem, pool: IntArray, rooms: FloatArray, owners: IntArray) -> bool:
    """Each pool item (in order) to the eligible member with the most room; False when the
    roomiest has too little. Writes ``owners`` and ``rooms``."""
    loads = problem.loads
    if problem.eligible is None or problem.classes is None:
        heap = [(-r, m) for m, r in enumerate(rooms.tolist())]
        heapq.heapify(heap)
        chosen = []
        for w in loads[pool].tolist():
            room, m = heap[0]
            if w > -room:
                return False
            chosen.append(m)
            heapq.heapreplace(heap, (room + w, m))
        owners[pool] = chosen
        rooms[:] = [-r for r, _ in sorted(heap, key=lambda e: e[1])]
        return True
    heaps: dict[int, list[tuple[float, int]]] = {}
    for i in pool.tolist():
        c = int(problem.classes[i])
        if c not in heaps:
            heaps[c] = [(-float(rooms[m]), int(m)) for m in problem.allowed(i)]
            heapq.heapify(heaps[c])
        heap = heaps[c]
        while heap and -heap[0][0] != rooms[heap[0][1]]:  # stale: another class took room
            heapq.heapreplace(heap, (-float(rooms[heap[0][1]]), heap[0][1]))
        if not heap or loads[i] > -heap[0][0]:
            return False
        m = heap[0][1]
        rooms[m] -= loads[i]
        owners[i] = m
        heapq.heapreplace(heap, (-float(rooms[m]), m))
    return True


def _improve(
    problem: LoadProblem, owners: IntArray, goal: float, rounds: int = _ROUNDS
) -> IntArray:
    """Moves and swaps off the peak member while each lowers it and the peak is above ``goal``
    (moves bought below it would cost stickiness for nothing the caller asked for): the
    heuristics' leftovers on small groups, where one heavy item decides the peak. Each round takes the first move (the
    peak's heaviest item first, to the member it leaves least loaded) or else the first swap
    (with a lighter item elsewhere) that leaves both members below the old peak."""
    loads, caps = problem.loads, problem.capacities
    owners = owners.copy()
    totals: FloatArray = np.bincount(owners, weights=loads, minlength=len(caps)).astype(float)
    for _ in range(rounds):
        ratios = totals / caps
        p = int(np.argmax(ratios))
        peak = float(ratios[p]) * (1 - _EPS)
        if peak <= goal:
            break
        mine = np.flatnonzero(owners == p)
        mine = mine[np.lexsort((mine, -loads[mine]))]
        if not _step(problem, owners, totals, p, peak, mine):
            break
    return owners


def _step(
    problem: LoadProblem,
    owners: IntArray,
    totals: FloatArray,
    p: int,
    peak: float,
    mine: IntArray,
) -> bool:
    """One move or swap off member ``p`` that leaves both sides below ``peak``."""
    loads, caps = problem.loads, problem.capacities
    others = np.flatnonzero(owners != p)
    for i in mine.tolist():
        allowed = problem.allowed(i)
        allowed = allowed[allowed != p]
        if not len(allowed):
            continue
        after = (totals[allowed] + loads[i]) / caps[allowed]
        q = int(allowed[np.argmin(after)])
        if after.min() < peak:
            _give(owners, totals, loads, i, p, q)
            return True
        # a lighter item j elsewhere, whose member may take i and p may take j
        lighter = others[loads[others] < loads[i]]
        if not len(lighter):
            continue
        qs = owners[lighter]
        gain = loads[i] - loads[lighter]
        fits = ((totals[p] - gain) / caps[p] < peak) & ((totals[qs] + gain) / caps[qs] < peak)
        if problem.eligible is not None and problem.classes is not None:
            fits &= problem.eligible[problem.classes[i], qs]
            fits &= problem.eligible[problem.classes[lighter], p]
        hits = np.flatnonzero(fits)
        if len(hits):
            j = int(lighter[hits[0]])
            q = int(owners[j])
            _give(owners, totals, loads, i, p, q)
            _give(owners, totals, loads, j, q, p)
            return True
    return False


def _give(owners: IntArray, totals: FloatArray, loads: FloatArray, i: int, p: int, q: int) -> None:
    owners[i] = q
    totals[p] -= loads[i]
    totals[q] += loads[i]
