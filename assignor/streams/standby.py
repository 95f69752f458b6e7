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

This is a hot path (100,000 tasks x 5,000 clients): both passes run compiled
(``kassign_native.standby_placement``, ``assignor/native/src/standby.rs``, without the GIL) over
task positions and client ranks, clients grouped by their tag values (``tag_groups``); a pick is
the least ``(assigned / threads, rank)`` as a double, Kafka's ``ConstrainedPrioritySet`` order.
The task ids and process ids are read only to translate the answer. ``place_standby_indexed`` is
that core for callers that hold positions already (the high-availability assignor).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING

import kassign_native
import numpy as np
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.holders import pairs
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.tag_groups import TagGroups
from kassign.assignor.streams.tags import tag_layout

if TYPE_CHECKING:  # flow imports OR-Tools, which a call without racks never loads
    from kassign.assignor.flow import IntArray

__all__ = [
    "IndexedPlacement",
    "StandbyPlacement",
    "assign_standby_tasks",
    "client_tag_values",
    "named_placement",
    "place_standby_indexed",
    "place_standby_tasks",
]


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
    indexed = place_standby_indexed(state, clients, pairs(held), targets, counts=counts)
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


def client_tag_values(
    state: ApplicationState, clients: Sequence[ProcessId]
) -> list[tuple[str | None, ...]]:
    """Each of ``clients``' KIP-708 tag values (``tags.tag_layout``; ``()`` for a client it
    lacks): read in the layout's own order where ``clients`` are exactly its clients in that
    order, by identity (the usual case; issue 24: no ``UUID`` hashed per client), else looked
    up by process id."""
    values = tag_layout(state).values
    if len(values) == len(clients) and all(map(operator.is_, values, clients)):
        return list(values.values())
    return [tuple(values.get(p, ())) for p in clients]


def place_standby_indexed(
    state: ApplicationState,
    clients: Sequence[ProcessId],
    active: tuple[IntArray, IntArray],
    targets: Sequence[TaskId],
    *,
    counts: Sequence[int],
    capacities: Sequence[int] | None = None,
) -> IndexedPlacement:
    """Standbys of ``targets`` (sorted) given the actives as ``(position, rank)`` columns
    (positions in ``targets``; issue 24: the high-availability assignor holds them so, not as
    a set per client).

    ``clients`` are ``state``'s clients in process order (ranks); ``counts`` the load each
    starts from; ``capacities`` their threads (at least 1), if the caller has them already.
    """
    replicas = state.configs.num_standby_replicas
    layout = tag_layout(state)
    if replicas <= 0 or not targets or not clients:
        return IndexedPlacement([[] for _ in clients], layout.notes, ())
    groups = TagGroups.of(client_tag_values(state, clients), len(layout.keys))
    threads = capacities or [max(1, state.clients[c].num_threads) for c in clients]
    tasks, ranks = active
    lists, untagged, short = kassign_native.standby_placement(
        replicas,
        len(targets),
        tasks.astype(np.int64, copy=False).tobytes(),
        ranks.astype(np.int64, copy=False).tobytes(),
        list(threads),
        list(counts),
        list(groups.group),
        list(layout.distinct),
        [list(v) for v in groups.values],
        list(groups.sizes),
        layout.tag_aware,
        checkpoint,
    )
    notes = layout.notes
    if short:
        first = ", ".join(str(targets[t]) for t in short[:5])
        notes += (
            f"{len(short)} task(s) got fewer than {replicas} standby replica(s): "
            + f"not enough clients (first: {first})",
        )
    return IndexedPlacement(lists, notes, untagged)
