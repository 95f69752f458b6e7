"""Standby replica placement, shared by every built-in assignor (KIP-441 standbys, KIP-708 tags).

Two policies, chosen by ``tags.tag_layout``:

- least loaded (Kafka's ``DefaultStandbyTaskAssignor``): each replica of each stateful task, in
  task order, goes to the client with the lowest ``(active + standby) / threads``, ties broken by
  process id, that does not hold the task yet;
- tag aware (``ClientTagAwareStandbyTaskAssignor``): the same least-loaded pick, restricted to
  clients whose value on every still-constraining tag key differs from the clients already
  holding the task. Replicas tags cannot place are placed least-loaded afterwards, in task
  order (Kafka walks a ``HashMap`` there; we sort: ``tests/differential`` lists the groups where
  that changes the answer). Never a failure: a task may end up with fewer standbys only when
  there are not enough clients, and a note says so.

This is a hot path (10,000 tasks x 1,000 clients): one heap keyed by ``(load, process order)``
holds every client once; a poll pops past the few ineligible clients and pushes them back. A
per-exclusion count of eligible clients says beforehand whether a poll can succeed, so a task
that tags cannot place costs no scan of all clients.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.holders import Holders, add_holder, holders_of, set_holders
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId, positions
from kassign.assignor.streams.tags import TagLayout, exclude_used_values, is_excluded, tag_layout

__all__ = ["StandbyPlacement", "assign_standby_tasks", "place_standby_tasks"]

_HeapEntry = tuple[float, tuple[int, int], ProcessId]


@dataclass(frozen=True, slots=True)
class StandbyPlacement:
    """Standbys for every client (empty where none) and notes for ``Diagnostics.notes``.

    ``untagged``: with tags configured, the replicas tags could not place, placed least loaded
    instead (``(task, client)``; the explanation's fallback rule). Empty without tags.
    """

    standby: Mapping[ProcessId, frozenset[TaskId]]
    notes: tuple[str, ...] = ()
    untagged: frozenset[tuple[TaskId, ProcessId]] = frozenset()


def assign_standby_tasks(
    state: ApplicationState, active: Mapping[ProcessId, AbstractSet[TaskId]]
) -> dict[ProcessId, frozenset[TaskId]]:
    """Place ``num_standby_replicas`` standbys of every stateful task (interface 1 of the team)."""
    return dict(place_standby_tasks(state, active).standby)


def place_standby_tasks(
    state: ApplicationState,
    active: Mapping[ProcessId, AbstractSet[TaskId]],
    *,
    tasks: Sequence[TaskId] | None = None,
) -> StandbyPlacement:
    """Standbys for ``tasks`` (default: every stateful task), plus notes on what fell short.

    Loads start from the actives given; a client never receives a standby of a task it holds.
    """
    replicas = state.configs.num_standby_replicas
    targets = tuple(sorted(state.stateful_tasks if tasks is None else tasks))
    placed: dict[ProcessId, list[TaskId]] = {pid: [] for pid in state.clients}
    layout = tag_layout(state)
    if replicas <= 0 or not targets or not state.clients:
        return _freeze(placed, layout.notes)
    holding = _holding(state, active, targets)
    heap = _LeastLoaded(state, active, layout.values)
    untagged: list[tuple[TaskId, ProcessId]] | None = None
    pending: Iterable[tuple[TaskId, int]]
    if layout.tag_aware:
        pending = sorted(_place_by_tags(targets, replicas, layout, holding, heap, placed).items())
        untagged = []
    else:
        pending = ((task, replicas) for task in targets)
    short = _place_least_loaded(pending, holding, heap, placed, untagged)
    del holding, heap, pending  # scratch, gone before the answer is frozen (issue 16)
    notes = layout.notes
    if short:
        first = ", ".join(str(t) for t in short[:5])
        notes += (
            f"{len(short)} task(s) got fewer than {replicas} standby replica(s): "
            + f"not enough clients (first: {first})",
        )
    return _freeze(placed, notes, untagged or ())


def _freeze(
    placed: Mapping[ProcessId, list[TaskId]],
    notes: tuple[str, ...],
    untagged: Sequence[tuple[TaskId, ProcessId]] = (),
) -> StandbyPlacement:
    frozen = {}
    for pid, tasks in placed.items():  # each emptied once copied: one client's tasks twice
        frozen[pid] = frozenset(dict.fromkeys(tasks))  # sized up front, not grown (issue 16)
        tasks.clear()
    return StandbyPlacement(frozen, notes, frozenset(untagged))


def _holding(
    state: ApplicationState,
    active: Mapping[ProcessId, AbstractSet[TaskId]],
    targets: Sequence[TaskId],
) -> Holders:
    """The holders of each target task before any replica is placed (``targets`` sorted)."""
    holding: Holders = {}
    position = positions(targets)
    for pid in state.clients:
        for task in active.get(pid, ()):
            if position(task) is not None:
                add_holder(holding, task, pid)
    return holding


class _LeastLoaded:
    """Scratch: clients by ``(assigned / threads, process order)``, grouped by tag values.

    Kafka's ``ConstrainedPrioritySet`` with the load it re-reads on every offer. Each group of
    clients sharing all tag values has its own heap, and a heap of groups is keyed by each
    group's best client, so a poll skips a barred group in one step however many clients it
    holds (a zone of idle clients barred for a task costs one pop, not one per client). Only the
    client that got a replica changes load; it alone is pushed back with its new key.
    """

    def __init__(
        self,
        state: ApplicationState,
        active: Mapping[ProcessId, AbstractSet[TaskId]],
        groups: Mapping[ProcessId, tuple[str | None, ...]],
    ) -> None:
        self._capacity = {pid: max(1, c.num_threads) for pid, c in state.clients.items()}
        self._count = {pid: len(active.get(pid, ())) for pid in state.clients}
        labels = sorted(set(groups.values()), key=lambda g: tuple((v is None, v or "") for v in g))
        self._labels = labels
        number = {label: n for n, label in enumerate(labels)}
        self._group = {pid: number[groups[pid]] for pid in state.clients}
        self._members: list[list[_HeapEntry]] = [[] for _ in labels]
        for pid in state.clients:
            entry = (self._count[pid] / self._capacity[pid], process_key(pid), pid)
            self._members[self._group[pid]].append(entry)
        self._listed: list[tuple[float, tuple[int, int]] | None] = [None] * len(labels)
        self._tops: list[tuple[tuple[float, tuple[int, int]], int]] = []
        for gid, members in enumerate(self._members):
            heapq.heapify(members)
            self._list(gid)

    def _list(self, gid: int) -> None:
        """Put group ``gid`` in the heap of groups under its best client's key (if changed)."""
        members = self._members[gid]
        key = (members[0][0], members[0][1]) if members else None
        if key is not None and key != self._listed[gid]:
            heapq.heappush(self._tops, (key, gid))
        self._listed[gid] = key

    def poll(
        self,
        holding: AbstractSet[ProcessId],
        barred: Callable[[tuple[str | None, ...]], bool] | None = None,
    ) -> ProcessId | None:
        """Give a replica to the least loaded client outside ``holding`` in a group not ``barred``."""
        touched: list[int] = []
        stashed: list[tuple[int, _HeapEntry]] = []
        chosen: _HeapEntry | None = None
        while self._tops:
            key, gid = heapq.heappop(self._tops)
            if self._listed[gid] != key:
                continue  # stale: the group's best client changed since
            self._listed[gid] = None
            touched.append(gid)
            if barred is not None and barred(self._labels[gid]):
                continue
            members = self._members[gid]
            if members[0][2] in holding:  # set holders aside, re-list under the next best
                while members and members[0][2] in holding:
                    stashed.append((gid, heapq.heappop(members)))
                self._list(gid)
                continue
            chosen = heapq.heappop(members)
            break
        for gid, entry in stashed:
            heapq.heappush(self._members[gid], entry)
        if chosen is not None:
            pid = chosen[2]
            self._count[pid] += 1
            load = self._count[pid] / self._capacity[pid]
            heapq.heappush(self._members[self._group[pid]], (load, chosen[1], pid))
        for gid in touched:
            self._list(gid)
        return None if chosen is None else chosen[2]


def _place_by_tags(
    targets: Sequence[TaskId],
    replicas: int,
    layout: TagLayout,
    holding: Holders,
    heap: _LeastLoaded,
    placed: dict[ProcessId, list[TaskId]],
) -> dict[TaskId, int]:
    """KIP-708 pass: each replica on a client differing from the task's holders on every key.

    A key stops constraining once the task occupies as many clients as the key has values
    (``exclude_used_values``). Returns, per task, the replicas tags could not place.
    """
    values = layout.values
    eligible = _EligibleCount(layout)
    pending: dict[TaskId, int] = {}
    for task in targets:
        checkpoint()
        task_holding = set(holders_of(holding, task))
        if not task_holding:
            pending[task] = replicas
            continue
        excluded: dict[int, set[str]] = {}
        last, used, remaining = min(task_holding, key=process_key), 1, replicas
        while remaining > 0:
            exclude_used_values(excluded, values[last], used, layout.distinct)
            if eligible.available(excluded, task_holding) <= 0:
                break
            chosen = heap.poll(task_holding, _barring(excluded))
            if chosen is None:
                break
            placed[chosen].append(task)
            task_holding.add(chosen)
            last, used, remaining = chosen, used + 1, remaining - 1
        set_holders(holding, task, task_holding)
        if remaining:
            pending[task] = remaining
    return pending


def _barring(excluded: Mapping[int, set[str]]) -> Callable[[tuple[str | None, ...]], bool]:
    """The poll filter of one replica: groups on a barred tag value."""
    return lambda group: is_excluded(group, excluded)


class _EligibleCount:
    """Scratch: how many clients an exclusion leaves, counted per tag-value group and cached.

    Lets the tag pass skip a poll that would scan every client only to find none.
    """

    def __init__(self, layout: TagLayout) -> None:
        self._values = layout.values
        self._groups = Counter(layout.values.values())
        self._cache: dict[tuple[tuple[int, frozenset[str]], ...], int] = {}

    def available(self, excluded: Mapping[int, set[str]], holding: AbstractSet[ProcessId]) -> int:
        signature = tuple(sorted((i, frozenset(v)) for i, v in excluded.items() if v))
        total = self._cache.get(signature)
        if total is None:
            total = sum(n for vals, n in self._groups.items() if not is_excluded(vals, excluded))
            self._cache[signature] = total
        return total - sum(1 for pid in holding if not is_excluded(self._values[pid], excluded))


def _place_least_loaded(
    pending: Iterable[tuple[TaskId, int]],
    holding: Holders,
    heap: _LeastLoaded,
    placed: dict[ProcessId, list[TaskId]],
    untagged: list[tuple[TaskId, ProcessId]] | None,
) -> list[TaskId]:
    """Place each pending task's remaining replicas least-loaded, ``pending`` in task order
    (task, replicas); return the tasks left short. ``untagged``, when given (tags
    configured), receives each replica placed."""
    short: list[TaskId] = []
    clients = len(placed)
    for task, replicas in pending:
        checkpoint()
        task_holding = set(holders_of(holding, task))
        for _ in range(replicas):
            chosen = heap.poll(task_holding) if len(task_holding) < clients else None
            if chosen is None:
                short.append(task)
                break
            placed[chosen].append(task)
            task_holding.add(chosen)
            if untagged is not None:
                untagged.append((task, chosen))
    return short
