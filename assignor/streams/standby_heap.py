"""Scratch of standby placement over client ranks: the least-loaded pick and the tag bars.

Clients are numbered by their rank in Kafka's process order (``process_key``), so a heap entry
is ``(load, rank)`` and a holder set is a set of small ints: no ``UUID`` hashed or compared per
poll (issue 24: at 100,000 tasks x 5,000 clients that hashing was most of the placement). A tag
bar is an int bitmask over tag-value groups, so "is this group barred" is one shift.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Eligible", "FewGroups", "LeastLoaded", "Picker", "TagGroups", "picker"]

_Key = tuple[float, int]


@dataclass(frozen=True, slots=True)
class TagGroups:
    """Clients grouped by their tag values, the values numbered per key (``-1``: unset).

    ``group[rank]`` is a client's group; ``values[g]`` the value numbers of group ``g``;
    ``masks[k][v]`` the groups whose value on key ``k`` is ``v``, as a bitmask.
    """

    group: tuple[int, ...]
    values: tuple[tuple[int, ...], ...]
    masks: tuple[tuple[int, ...], ...]
    sizes: tuple[int, ...]

    @staticmethod
    def of(client_values: Sequence[tuple[str | None, ...]], keys: int) -> TagGroups:
        """Groups of clients (by rank) sharing every tag value, labels in sorted order."""
        labels = sorted(set(client_values), key=lambda g: tuple((v is None, v or "") for v in g))
        number = {label: n for n, label in enumerate(labels)}
        group = tuple(number[v] for v in client_values)
        sizes = [0] * len(labels)
        for g in group:
            sizes[g] += 1
        ids: list[dict[str, int]] = [{} for _ in range(keys)]
        values = tuple(
            tuple(-1 if v is None else ids[k].setdefault(v, len(ids[k])) for k, v in enumerate(g))
            for g in labels
        )
        masks = [[0] * len(ids[k]) for k in range(keys)]
        for gid, vals in enumerate(values):
            for k, v in enumerate(vals):
                if v >= 0:
                    masks[k][v] |= 1 << gid
        return TagGroups(group, values, tuple(tuple(m) for m in masks), tuple(sizes))


class Eligible:
    """How many clients a bar leaves, per barred-group mask and cached.

    Lets the tag pass skip a poll that would scan every client only to find none.
    """

    def __init__(self, groups: TagGroups) -> None:
        self._group = groups.group
        self._sizes = groups.sizes
        self._cache: dict[int, int] = {}

    def available(self, barred: int, holding: AbstractSet[int]) -> int:
        total = self._cache.get(barred)
        if total is None:
            total = sum(n for g, n in enumerate(self._sizes) if not (barred >> g) & 1)
            self._cache[barred] = total
        group = self._group
        for c in holding:  # a loop, not sum() over a generator: one or two holders a task
            if not (barred >> group[c]) & 1:
                total -= 1
        return total


class LeastLoaded:
    """Clients by ``(assigned / threads, rank)``, one heap per tag-value group.

    Kafka's ``ConstrainedPrioritySet`` with the load it re-reads on every offer. A heap of
    groups is keyed by each group's best client, so a poll skips a barred group in one step
    however many clients it holds. Only the client that got a replica changes load; it alone is
    pushed back with its new key.
    """

    def __init__(
        self, capacities: Sequence[int], counts: Sequence[int], group: Sequence[int], groups: int
    ) -> None:
        self._capacity = list(capacities)
        self._count = list(counts)
        self._group = group
        self._members: list[list[_Key]] = [[] for _ in range(groups)]
        for rank, (count, capacity) in enumerate(zip(counts, capacities, strict=True)):
            self._members[group[rank]].append((count / capacity, rank))
        self._listed: list[_Key | None] = [None] * groups
        self._tops: list[tuple[float, int, int]] = []
        for gid, members in enumerate(self._members):
            heapq.heapify(members)
            self._list(gid)

    def _list(self, gid: int) -> None:
        """Put group ``gid`` in the heap of groups under its best client's key (if changed)."""
        members = self._members[gid]
        key = members[0] if members else None
        if key is not None and key != self._listed[gid]:
            heapq.heappush(self._tops, (key[0], key[1], gid))
        self._listed[gid] = key

    def poll(self, holding: AbstractSet[int], barred: int = 0) -> int | None:
        """Give a replica to the least loaded client outside ``holding`` in a group not in the
        ``barred`` mask; its rank, or ``None``."""
        touched: list[int] = []
        stashed: list[tuple[int, _Key]] = []
        chosen: _Key | None = None
        tops, listed, all_members = self._tops, self._listed, self._members
        while tops:
            load, rank, gid = heapq.heappop(tops)
            key = listed[gid]
            if key is None or key[1] != rank or key[0] != load:
                continue  # stale: the group's best client changed since
            listed[gid] = None
            touched.append(gid)
            if (barred >> gid) & 1:
                continue
            members = all_members[gid]
            if members[0][1] in holding:  # set holders aside, re-list under the next best
                while members and members[0][1] in holding:
                    stashed.append((gid, heapq.heappop(members)))
                self._list(gid)
                continue
            chosen = heapq.heappop(members)
            break
        for gid, entry in stashed:
            heapq.heappush(all_members[gid], entry)
        if chosen is not None:
            rank = chosen[1]
            self._count[rank] += 1
            heapq.heappush(
                all_members[self._group[rank]], (self._count[rank] / self._capacity[rank], rank)
            )
        for gid in touched:
            self._list(gid)
        return None if chosen is None else chosen[1]


class FewGroups:
    """``LeastLoaded`` for a few tag-value groups (a zone tag, or none): each poll looks at
    every allowed group's best client instead of keeping a heap of groups, which costs more
    heap pushes than it saves with three groups. Same pick: the least ``(load, rank)`` outside
    the holders and the barred groups.

    A client's key is one int, ``count * (lcm / threads) * clients + rank``: the same order as
    ``(count / threads, rank)`` (the float quotients order as the fractions do for the counts
    and thread counts ``picker`` allows), compared without building or comparing tuples.
    """

    def __init__(
        self, capacities: Sequence[int], counts: Sequence[int], group: Sequence[int], groups: int
    ) -> None:
        size, lcm = len(capacities), math.lcm(*capacities)
        self._size = size
        self._step = [lcm // c * size for c in capacities]
        self._members: list[list[int]] = [[] for _ in range(groups)]
        for rank, count in enumerate(counts):
            self._members[group[rank]].append(count * self._step[rank] + rank)
        for members in self._members:
            heapq.heapify(members)
        self._allowed: dict[int, tuple[list[int], ...]] = {}

    def _groups(self, barred: int) -> tuple[list[int], ...]:
        """The heaps of the groups ``barred`` leaves, cached per mask."""
        found = self._allowed.get(barred)
        if found is None:
            found = tuple(m for g, m in enumerate(self._members) if not (barred >> g) & 1)
            self._allowed[barred] = found
        return found

    def poll(self, holding: AbstractSet[int], barred: int = 0) -> int | None:
        """As ``LeastLoaded.poll``."""
        size = self._size
        best: list[int] | None = None
        stashed: list[tuple[list[int], int]] = []
        for members in self._groups(barred):
            while members and members[0] % size in holding:
                stashed.append((members, heapq.heappop(members)))
            if members and (best is None or members[0] < best[0]):
                best = members
        rank = None
        if best is not None:  # before the holders go back: they may top the same heap
            key = best[0]
            rank = key % size
            heapq.heapreplace(best, key + self._step[rank])
        for members, entry in stashed:
            heapq.heappush(members, entry)
        return rank


class Picker(Protocol):
    def poll(self, holding: AbstractSet[int], barred: int = 0) -> int | None: ...


_EXACT_THREADS, _EXACT_COUNT = 1 << 10, 1 << 31
"""Below these, two loads ``count / threads`` that differ as fractions (by at least 2^-20)
differ as floats (a float's step below 2^31 is at most 2^-21): ``FewGroups``' int keys order
the clients as Kafka's float loads do."""

FEW_GROUPS = 16
"""Up to this many tag-value groups a poll scans them (``FewGroups``); more, a heap of them."""


def picker(
    capacities: Sequence[int], counts: Sequence[int], groups: TagGroups, *, few: int = FEW_GROUPS
) -> Picker:
    """The least-loaded pick suited to the number of tag-value groups."""
    exact = max(capacities, default=1) < _EXACT_THREADS and max(counts, default=0) < _EXACT_COUNT
    kind = FewGroups if len(groups.sizes) <= few and exact else LeastLoaded
    return kind(capacities, counts, groups.group, len(groups.sizes))
