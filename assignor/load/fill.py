"""One *fill* of the load core: every item placed at a target load per unit of capacity.

Each member has room for ``target x capacity``. A fill places the items heaviest first, each on
the eligible member with the most room left (worst fit). Variants, as ``balance`` needs them:

- ``strict=False`` never fails: an item goes to the roomiest member even past its room (the
  search reads the peak that gives);
- ``keep``: each member first keeps its previous items, heaviest first, while they fit;
- ``racks``: an item goes to the roomiest *rack-local* eligible member that still has room for
  it, else to its previous owner if that one has room (a move that buys nothing is not made),
  else to the roomiest; ``racks_first`` also lets go of kept items that are cross-rack where a
  rack-local member is eligible, so they are placed again by that rule.

Ties break by member and item index. Light items with no classes or racks are placed in bulk
(``bulk``): the same worst fit, numpy doing the choosing.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.load.bulk import place_light

if TYPE_CHECKING:
    from kassign.assignor.load.balance import LoadProblem

__all__ = ["fill"]

_EPS = 1e-9  # float sums compared with this share of the room
_LIGHT = 1e-3  # items this share of the target (on the smallest member) or lighter go in bulk
_BULK = 256  # ... when there are at least this many
_CHECK = 4095  # the caller's stop check runs every 4,096 items placed one by one


def fill(
    problem: LoadProblem,
    target: float,
    *,
    keep: bool = False,
    racks: bool = False,
    racks_first: bool = False,
    strict: bool = True,
) -> IntArray | None:
    """An owner per item at ``target``, or None when a strict fill does not fit."""
    loads, caps = problem.loads, problem.capacities
    racks = racks and problem.sites is not None
    rooms = target * caps * (1 + _EPS)
    owners = np.full(len(loads), -1, dtype=np.int64)
    if keep:
        kept = _kept(problem, rooms, racks_first=racks and racks_first)
        owners[kept] = problem.owners[kept]
        rooms -= np.bincount(owners[kept], weights=loads[kept], minlength=len(caps))
    pool = np.flatnonzero(owners < 0)
    pool = pool[np.lexsort((pool, -loads[pool]))]
    if problem.classes is None and not racks:
        light = _LIGHT * target * float(caps.min())
        placed = _worst_fit_any(loads, pool, rooms, owners, strict=strict, light=light)
    else:
        placed = _worst_fit_classes(problem, pool, rooms, owners, racks=racks, strict=strict)
    return owners if placed else None


def _kept(problem: LoadProblem, rooms: FloatArray, *, racks_first: bool) -> IntArray:
    """The previous items each member keeps: heaviest first, each that still fits in its room.

    Keeping the heavy ones leaves light items to move, which fit in the little room the other
    members have left when loads drift; a member within its room keeps everything. With
    ``stay``, the costliest to move come first (ties: heaviest)."""
    loads, prev = problem.loads, problem.owners
    mine = np.flatnonzero(prev >= 0)
    if problem.eligible is not None and problem.classes is not None:
        mine = mine[problem.eligible[problem.classes[mine], prev[mine]]]
    if racks_first:
        mine = mine[_local_or_nowhere_better(problem, mine)]
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


def _local_or_nowhere_better(problem: LoadProblem, items: IntArray) -> np.ndarray:
    """Whether each item is rack-local at its previous owner, or no eligible member is."""
    assert problem.sites is not None and problem.local is not None
    sites = problem.sites[items]
    here = problem.local[sites, problem.owners[items]]
    local = problem.local.astype(np.int64)
    if problem.eligible is None or problem.classes is None:
        anywhere = local.sum(axis=1) > 0
        return np.asarray(here | ~anywhere[sites])
    reachable = problem.eligible.astype(np.int64) @ local.T > 0  # class x site
    return np.asarray(here | ~reachable[problem.classes[items], sites])


def _worst_fit_any(
    loads: FloatArray,
    pool: IntArray,
    rooms: FloatArray,
    owners: IntArray,
    *,
    strict: bool,
    light: float,
) -> bool:
    """Each pool item (in order) to the member with the most room, those of load ``light`` or
    less in bulk; False when a strict fill's roomiest has too little. Writes ``owners`` and
    ``rooms``."""
    heavy = pool[: _bulk_from(loads[pool], light)]
    heap = [(-r, m) for m, r in enumerate(rooms.tolist())]
    heapq.heapify(heap)
    chosen = []
    for k, w in enumerate(loads[heavy].tolist()):
        if not k & _CHECK:
            checkpoint()
        room, m = heap[0]
        if strict and w > -room:
            return False
        chosen.append(m)
        heapq.heapreplace(heap, (room + w, m))
    owners[heavy] = chosen
    rooms[:] = [-r for r, _ in sorted(heap, key=lambda e: e[1])]
    tail = pool[len(heavy) :]
    if not len(tail):
        return True
    owners[tail] = place_light(loads[tail], rooms)
    return not strict or bool((rooms >= 0).all())


def _bulk_from(ordered: FloatArray, light: float) -> int:
    """How many of the (heaviest first) loads go one by one before the light ones go in bulk:
    all of them when the light ones are too few to pay."""
    first = int(np.searchsorted(-ordered, -light, side="left"))
    return first if len(ordered) - first >= _BULK else len(ordered)


def _worst_fit_classes(
    problem: LoadProblem,
    pool: IntArray,
    rooms: FloatArray,
    owners: IntArray,
    *,
    racks: bool,
    strict: bool,
) -> bool:
    """As ``_worst_fit_any`` among each item's eligible members, rack-local ones first when
    ``racks``. A heap of (room, member) per class (and per class and site), refreshed lazily:
    rooms only shrink, so an entry that is stale shows too much room and is fixed on top."""
    m_all = len(rooms)
    classes = problem.classes if problem.classes is not None else np.zeros(len(owners), np.int64)
    eligible = problem.eligible if problem.eligible is not None else np.ones((1, m_all), bool)
    room = rooms.tolist()
    heaps: dict[tuple[int, int], list[tuple[float, int]]] = {}

    def roomiest(key: tuple[int, int]) -> list[tuple[float, int]]:
        heap = heaps.get(key)
        if heap is None:
            c, s = key
            members = eligible[c] if s < 0 else eligible[c] & local[s]
            heap = heaps[key] = [(-room[m], m) for m in np.flatnonzero(members).tolist()]
            heapq.heapify(heap)
        while heap and -heap[0][0] != room[heap[0][1]]:
            heapq.heapreplace(heap, (-room[heap[0][1]], heap[0][1]))
        return heap

    local = problem.local if problem.local is not None else np.ones((1, m_all), bool)
    sites = problem.sites[pool].tolist() if racks and problem.sites is not None else None
    prev = problem.owners[pool].tolist()
    chosen = []
    for k, (c, w) in enumerate(
        zip(classes[pool].tolist(), problem.loads[pool].tolist(), strict=True)
    ):
        if not k & _CHECK:
            checkpoint()
        m = -1
        if sites is not None:
            near = roomiest((c, sites[k]))
            o = prev[k]
            if near and -near[0][0] >= w:
                m = near[0][1]
            elif o >= 0 and room[o] >= w and eligible[c, o]:
                m = o
        if m < 0:
            heap = roomiest((c, -1))
            if not heap or (strict and w > -heap[0][0]):
                return False
            m = heap[0][1]
        room[m] -= w
        chosen.append(m)
    owners[pool] = chosen
    rooms[:] = room
    return True
