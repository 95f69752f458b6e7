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

This is a hot path (100,000 tasks x 5,000 clients): the passes run over task positions and
client ranks (``standby_heap``), and the task ids and process ids are read only to translate
the answer. ``place_standby_indexed`` is that core for callers that hold positions already (the
high-availability assignor).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.standby_heap import Eligible, Picker, TagGroups, picker
from kassign.assignor.streams.tags import TagLayout, tag_layout

__all__ = [
    "IndexedPlacement",
    "StandbyPlacement",
    "assign_standby_tasks",
    "named_placement",
    "place_standby_indexed",
    "place_standby_tasks",
]

_Held = int | tuple[int, ...] | None
"""A task's holders by rank: one client as itself (most tasks), more as a tuple (issue 16)."""


@dataclass(frozen=True, slots=True)
class StandbyPlacement:
    """Standbys for every client (empty where none) and notes for ``Diagnostics.notes``.

    ``untagged``: with tags configured, the replicas tags could not place, placed least loaded
    instead (``(task, client)``; the explanation's fallback rule). Empty without tags.
    """

    standby: Mapping[ProcessId, frozenset[TaskId]]
    notes: tuple[str, ...] = ()
    untagged: frozenset[tuple[TaskId, ProcessId]] = frozenset()


@dataclass(frozen=True, slots=True)
class IndexedPlacement:
    """``StandbyPlacement`` over positions: per client rank, the task positions it received (in
    placement order); ``untagged`` as ``(position, rank)``."""

    placed: Sequence[Sequence[int]]
    notes: tuple[str, ...]
    untagged: Sequence[tuple[int, int]]


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
    targets = tuple(sorted(state.stateful_tasks if tasks is None else tasks))
    clients = tuple(sorted(state.clients, key=process_key))
    position = {task: i for i, task in enumerate(targets)}
    held = [[position[t] for t in active.get(c, ()) if t in position] for c in clients]
    counts = [len(active.get(c, ())) for c in clients]
    indexed = place_standby_indexed(state, clients, held, targets, counts=counts)
    return named_placement(state, clients, targets, indexed)


def named_placement(
    state: ApplicationState,
    clients: Sequence[ProcessId],
    targets: Sequence[TaskId],
    indexed: IndexedPlacement,
) -> StandbyPlacement:
    """``indexed`` read as task and process ids, every client of ``state`` in its order."""
    by_client = dict(zip(clients, indexed.placed, strict=True))
    standby = {  # sized up front, not grown (issue 16)
        pid: frozenset(dict.fromkeys([targets[t] for t in by_client[pid]])) for pid in state.clients
    }
    untagged = frozenset((targets[t], clients[c]) for t, c in indexed.untagged)
    return StandbyPlacement(standby, indexed.notes, untagged)


def place_standby_indexed(
    state: ApplicationState,
    clients: Sequence[ProcessId],
    active: Sequence[Collection[int]],
    targets: Sequence[TaskId],
    *,
    counts: Sequence[int] | None = None,
    numbers: Sequence[int] | None = None,
) -> IndexedPlacement:
    """Standbys of ``targets`` (sorted) given each client's actives as positions in them.

    ``clients`` are ``state``'s clients in process order (ranks); ``counts`` the load each
    starts from (default: its actives given); ``numbers`` the int objects to list for the
    positions (a caller's shared ints, issue 16: not one more int per task placed).
    """
    replicas = state.configs.num_standby_replicas
    placed: list[list[int]] = [[] for _ in clients]
    layout = tag_layout(state)
    if replicas <= 0 or not targets or not clients:
        return IndexedPlacement(placed, layout.notes, ())
    holding = _holding(active, len(targets))
    groups = TagGroups.of([layout.values[c] for c in clients], len(layout.keys))
    capacities = [max(1, state.clients[c].num_threads) for c in clients]
    loads = [len(a) for a in active] if counts is None else counts
    heap = picker(capacities, loads, groups)
    untagged: list[tuple[int, int]] = []
    tasks = range(len(targets)) if numbers is None else numbers
    pending: Iterable[tuple[int, int]]
    if layout.tag_aware:
        pending = _place_by_tags(tasks, replicas, layout, groups, holding, heap, placed)
    else:  # a generator: not a pair per task held at once
        pending = ((t, replicas) for t in tasks)
    short = _place_least_loaded(pending, holding, heap, placed, untagged, layout.tag_aware)
    del holding, heap, pending  # scratch, gone before the answer is built (issue 16)
    notes = layout.notes
    if short:
        first = ", ".join(str(targets[t]) for t in short[:5])
        notes += (
            f"{len(short)} task(s) got fewer than {replicas} standby replica(s): "
            + f"not enough clients (first: {first})",
        )
    return IndexedPlacement(placed, notes, untagged)


def _holding(active: Sequence[Collection[int]], tasks: int) -> list[_Held]:
    """The holders (ranks) of each target before any replica is placed."""
    holding: list[_Held] = [None] * tasks
    for rank, held in enumerate(active):
        for t in held:
            found = holding[t]
            holding[t] = rank if found is None else (*_holders(found), rank)
    return holding


def _holders(found: _Held) -> tuple[int, ...]:
    if found is None:
        return ()
    return found if isinstance(found, tuple) else (found,)


def _kept(holders: set[int]) -> _Held:
    if len(holders) > 1:
        return tuple(holders)
    return next(iter(holders)) if holders else None


def _place_by_tags(
    tasks: Iterable[int],
    replicas: int,
    layout: TagLayout,
    groups: TagGroups,
    holding: list[_Held],
    heap: Picker,
    placed: list[list[int]],
) -> list[tuple[int, int]]:
    """KIP-708 pass: each replica on a client differing from the task's holders on every key.

    A key stops constraining once the task occupies as many clients as the key has values
    (``tags.exclude_used_values``, here one group bitmask per key). Returns, in task order, the
    replicas tags could not place.
    """
    bars = _Bars(layout.distinct, groups)
    eligible = Eligible(groups)
    group = groups.group
    pending: list[tuple[int, int]] = []
    for task in tasks:
        checkpoint()
        found = holding[task]
        if found is None:
            pending.append((task, replicas))
            continue
        if isinstance(found, int):  # most tasks: one holder, no min() to take
            task_holding, last = {found}, found
        else:
            task_holding = set(found)
            last = min(task_holding)
        used, remaining = 1, replicas
        bar = bars.none
        while remaining > 0:
            bar, barred = bars.after(bar, group[last], used)
            if eligible.available(barred, task_holding) <= 0:
                break
            chosen = heap.poll(task_holding, barred)
            if chosen is None:
                break
            placed[chosen].append(task)
            task_holding.add(chosen)
            last, used, remaining = chosen, used + 1, remaining - 1
        if remaining:  # only the least-loaded pass reads the holders again
            holding[task] = _kept(task_holding)
            pending.append((task, remaining))
    return pending


class _Bars:
    """``tags.exclude_used_values`` over group bitmasks, one bitmask per tag key, cached.

    A task's bars after a replica lands depend only on its bars before, the receiving
    client's group and how many clients the task occupies: a few combinations, so each is
    worked out once (issue 24: per task, this was a loop over keys and values).
    """

    def __init__(self, distinct: Sequence[int], groups: TagGroups) -> None:
        self._distinct, self._groups = distinct, groups
        self.none: tuple[int, ...] = (0,) * len(distinct)
        self._cache: dict[tuple[tuple[int, ...], int, int], tuple[tuple[int, ...], int]] = {}

    def after(self, bars: tuple[int, ...], group: int, used: int) -> tuple[tuple[int, ...], int]:
        """The bars once a client of ``group`` holds the task on ``used`` clients, and their
        union (the groups barred)."""
        key = (bars, group, used)
        found = self._cache.get(key)
        if found is None:
            masks, values = self._groups.masks, self._groups.values[group]
            new = tuple(
                bar if v < 0 else 0 if self._distinct[k] <= used else bar | masks[k][v]
                for k, (bar, v) in enumerate(zip(bars, values, strict=True))
            )
            union = 0
            for bar in new:
                union |= bar
            found = self._cache[key] = (new, union)
        return found


def _place_least_loaded(
    pending: Iterable[tuple[int, int]],
    holding: list[_Held],
    heap: Picker,
    placed: list[list[int]],
    untagged: list[tuple[int, int]],
    tagged: bool,
) -> list[int]:
    """Place each pending task's remaining replicas least-loaded, ``pending`` in task order
    (position, replicas); return the tasks left short. With tags configured, ``untagged``
    receives each replica placed."""
    short: list[int] = []
    clients = len(placed)
    for task, replicas in pending:
        checkpoint()
        task_holding = set(_holders(holding[task]))
        for _ in range(replicas):
            chosen = heap.poll(task_holding) if len(task_holding) < clients else None
            if chosen is None:
                short.append(task)
                break
            placed[chosen].append(task)
            task_holding.add(chosen)
            if tagged:
                untagged.append((task, chosen))
    return short
