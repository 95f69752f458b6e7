"""``joint``'s two steps on integers: role exchanges and active relocations over ``Replicas``.

Why: the high-availability assignor runs them up to five times a call on what it holds as
integers; through maps of task ids each run named every replica, hashed a ``UUID`` for each,
sorted the candidates as (``TaskId``, ``UUID``) tuples and built its miss tables again. Here the
candidates are picked, ordered and applied by whole-array steps over the request's tables, in the
same order (by task, then the target's process id for exchanges and its index for relocations),
and weighed and solved by the same code as the map-based steps (``joint.choose_exchanges``,
``joint.choose_relocations``), so the answers are theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, ProcessId, RackAwareStrategy
from kassign.assignor.streams.rack.candidates import (
    Candidates,
    spread_keeper,
    subtopology_bounds,
)
from kassign.assignor.streams.rack.int_sets import isin
from kassign.assignor.streams.rack.joint import choose_exchanges, choose_relocations
from kassign.assignor.streams.rack.measure import miss_tables
from kassign.assignor.streams.rack.replicas import RackTables, Replicas
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.tags import tag_layout

__all__ = ["JointCosts", "Moved", "exchange_replica_roles", "relocate_replica_actives"]


@dataclass(frozen=True, slots=True)
class Moved:
    """The outcome: the new replicas, how many tasks changed roles or clients, traffic saved."""

    replicas: Replicas
    exchanged: int
    saved: int


@dataclass(frozen=True, slots=True)
class JointCosts:
    """What both steps weigh: (traffic, non-overlap) costs, each task's previous active
    clients as ``task * clients + client`` codes, and per-client (may_lose, may_gain) room."""

    costs: tuple[int, int]
    previous: IntArray
    room: tuple[IntArray, IntArray] | None


def exchange_replica_roles(
    state: ApplicationState,
    replicas: Replicas,
    tables: RackTables,
    weights: JointCosts,
    *,
    may_lead: npt.NDArray[np.bool_] | None = None,
    fixed: IntArray | None = None,
) -> Moved | str:
    """``joint.exchange_roles`` (previous owners given, traffic not first) on integers.

    ``may_lead[i]``: standby ``i`` may become active; ``fixed``: standbys that keep their role,
    as ``task * clients + client`` codes. A string says why nothing was tried.
    """
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE:
        return "off"
    n_c = len(state.clients)
    rep_task, rep_client = replicas.rep_task, replicas.rep_client
    keep = replicas.owner[rep_task] >= 0
    if fixed is not None:
        keep &= ~isin(replicas.standby_codes(n_c), fixed)
    if may_lead is not None:
        keep &= may_lead
    pick = np.flatnonzero(keep)
    if not pick.size:
        return "no standby may take its active's role"
    # the map-based step sorts (TaskId, process id) pairs: by task, then by UUID
    pick = pick[np.lexsort((tables.client_order[rep_client[pick]], rep_task[pick]))]
    task, target = rep_task[pick], rep_client[pick]
    source = replicas.owner[task]
    found = Candidates.of_positions(replicas.tasks, task, (source, target), weights.previous, n_c)
    rows = _rows(found)
    blind = tables.active_blind[rows].any() or tables.standby_blind[rows].any()
    if blind or weights.costs[0] == 0:
        kinds = (TaskType.ACTIVE, TaskType.STANDBY)
        reason = miss_tables(state, found.tasks, weights.costs[0], kinds)
        assert isinstance(reason, str)
        return reason
    chosen, saved = choose_exchanges(
        state,
        found,
        tables.client_rack,
        (tables.active[rows], tables.standby[rows]),
        costs=weights.costs,
        traffic_first=False,
        room=weights.room,
        bounds=_bounds(state, found, replicas),
    )
    owner, clients = replicas.owner.copy(), rep_client.copy()
    owner[task[chosen]] = target[chosen]
    clients[pick[chosen]] = source[chosen]
    moved = replace(replicas, owner=owner).with_standbys(rep_task, clients)
    return Moved(moved, int(chosen.size), saved)


def relocate_replica_actives(
    state: ApplicationState,
    replicas: Replicas,
    tables: RackTables,
    weights: JointCosts,
    eligible: tuple[IntArray, IntArray],
) -> Moved | str:
    """``joint.relocate_actives`` on integers: ``eligible`` lists (task, client) where each
    task's active may go, by task then client."""
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE:
        return "off"
    n_c = len(state.clients)
    task, target = eligible
    source = replicas.owner[task]
    keep = (source >= 0) & (target != source)
    keep &= ~isin(task * n_c + target, replicas.standby_codes(n_c))
    pick = np.flatnonzero(keep)
    pick = pick[_keeping_spread(state, replicas, task[pick], source[pick], target[pick])]
    if not pick.size:
        return "no other eligible client"
    pick = pick[np.lexsort((target[pick], task[pick]))]
    task, source, target = task[pick], source[pick], target[pick]
    found = Candidates.of_positions(replicas.tasks, task, (source, target), weights.previous, n_c)
    rows = _rows(found)
    if tables.active_blind[rows].any() or weights.costs[0] == 0:
        reason = miss_tables(state, found.tasks, weights.costs[0], (TaskType.ACTIVE,))
        assert isinstance(reason, str)
        return reason
    chosen, saved = choose_relocations(
        state,
        found,
        tables.client_rack,
        tables.active[rows],
        costs=weights.costs,
        room=weights.room,
        bounds=_bounds(state, found, replicas),
    )
    owner = replicas.owner.copy()
    owner[task[chosen]] = target[chosen]
    return Moved(replace(replicas, owner=owner), int(chosen.size), saved)


def _rows(found: Candidates) -> IntArray:
    assert found.positions is not None
    return found.positions


def _bounds(
    state: ApplicationState, found: Candidates, replicas: Replicas
) -> tuple[IntArray, IntArray] | None:
    if state.configs.rack_aware_strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        return None
    held = np.flatnonzero(replicas.owner >= 0)
    tasks = replicas.tasks
    actives = zip(map(tasks.__getitem__, held.tolist()), replicas.owner[held].tolist())
    return subtopology_bounds(state, found.tasks, actives)


def _keeping_spread(
    state: ApplicationState,
    replicas: Replicas,
    task: IntArray,
    source: IntArray,
    target: IntArray,
) -> npt.NDArray[np.bool_]:
    """Which moves keep the task's KIP-708 spread (``candidates.spread_keeper``), the standbys of
    each task read from the sorted replicas by slicing."""
    if not tag_layout(state).tag_aware:
        return np.ones(task.size, np.bool_)
    keeps = spread_keeper(state)
    clients: Sequence[ProcessId] = list(state.clients)
    starts = np.searchsorted(replicas.rep_task, task, side="left").tolist()
    ends = np.searchsorted(replicas.rep_task, task, side="right").tolist()
    held = replicas.rep_client.tolist()
    out = np.ones(task.size, np.bool_)
    for i, (a, b, lo, hi) in enumerate(
        zip(source.tolist(), target.tolist(), starts, ends, strict=True)
    ):
        if not i % 64:
            checkpoint()
        others = [clients[c] for c in held[lo:hi]]
        out[i] = keeps(clients[a], clients[b], others)
    return out
