"""Phase 5 of the high-availability assignor: actives re-placed among caught-up clients, then
active and standby roles exchanged, wherever either lowers the cross-rack cost.

Why a module, on integers: the assignor holds its phases as sets of task positions per client;
this phase once turned them into maps of task ids for each of its up to nine rack steps and
back, and each step numbered, sorted and measured them again (most of a 100,000-task
``min_traffic`` call, issue 24). Now the holdings become one ``Replicas`` and the request's rack
tables are built once (``RackTables``); the steps (``rack.joint_replicas``,
``rack.optimise.optimize_standby_replicas``) give the map-based steps' answers.

The caller's deadline (``interrupt.checkpoint``) is checked per client and per task in the
Python loops here, and before and after each solve (``flow.solve``): the phase once ran for
seconds past a deadline between two checks (issue 27).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, repeat

import numpy as np
import numpy.typing as npt
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.ha_numbering import HaLayout, Numbering
from kassign.assignor.streams.holders import compact
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.rack.costs import CostPhase, resolve_costs
from kassign.assignor.streams.rack.joint_replicas import (
    JointCosts,
    exchange_replica_roles,
    relocate_replica_actives,
)
from kassign.assignor.streams.rack.optimise import (
    optimize_active_replicas,
    optimize_standby_replicas,
)
from kassign.assignor.streams.rack.replicas import RackTables, Replicas
from kassign.assignor.streams.result import Diagnostics

__all__ = ["eligible", "exchange", "measured", "previous_codes", "trim_guess", "trim_placed"]


_ROUNDS = 4
"""Exchanges and standby re-trims alternate while the re-trim saves traffic (a moved standby
may open a new exchange), at most this many times."""

_WIDE = 64
"""Tasks with more caught-up clients than this are not re-placed after the movements..."""

_FREE_ARCS = 20_000
"""...nor tasks no client is caught up on, unless these two kinds of task together have at most
this many (task, client) candidates: then each may go to any client."""


def exchange(
    state: ApplicationState,
    layout: HaLayout,
    index: CatchUpIndex,
    numbered: Replicas,
    warmups: Sequence[AbstractSet[int]],
    tables: RackTables,
) -> tuple[Replicas, Diagnostics]:
    """Phase 5 on ``numbered`` (the holdings after the movements, ``Numbering.replicas``).

    Only a caught-up client may take an active (no restore, so the follow-up decision stands);
    counts per client stay, warm-ups keep their role. A task that every client is caught up on
    (``_WIDE``) was free to go anywhere in phase 1 and is not re-placed here, which keeps the
    graph to the few clients that hold each task's state. The phases' reported cost after is
    lowered by what this saved, so the report still reads "before -> after" for the group.
    """
    numbering = Numbering(state, layout)
    n_c = len(state.clients)
    replicas = numbered
    costs = resolve_costs(state.configs, CostPhase.HIGH_AVAILABILITY)
    previous = previous_codes(state, layout.stateful)
    weights = JointCosts(
        costs, previous, numbering.room(replicas.active_counts(n_c)[numbering.state_of])
    )
    fixed = _fixed(numbering, warmups)
    notes: list[str] = []
    saved = 0
    counts = _counts(index)
    task, client = eligible(layout, index, counts)
    moved = relocate_replica_actives(
        state, replicas, tables, weights, (task, numbering.state_of[client])
    )
    if not isinstance(moved, str) and moved.exchanged:
        replicas = moved.replicas
        saved += moved.saved
        notes.append(f"rack: {moved.exchanged} actives moved to another caught-up client")
    exchanged = retrimmed_rounds = 0
    for _ in range(_ROUNDS):
        loads = replicas.active_counts(n_c)[numbering.state_of]
        lead = _may_lead(
            index, counts, numbering.layout_of[replicas.rep_client], replicas.rep_task, n_c
        )
        outcome = exchange_replica_roles(
            state,
            replicas,
            tables,
            JointCosts(costs, previous, numbering.room(loads)),
            may_lead=lead,
            fixed=fixed,
        )
        if not isinstance(outcome, str) and outcome.exchanged:
            replicas = outcome.replicas
            saved += outcome.saved
            exchanged += outcome.exchanged
        loads = replicas.active_counts(n_c) + np.bincount(replicas.rep_client, minlength=n_c)
        retrimmed, diagnostics = optimize_standby_replicas(
            state,
            replicas,
            tables,
            traffic_cost=costs[0],
            non_overlap_cost=costs[1],
            fixed=fixed,
            room=numbering.room(loads[numbering.state_of]),
            task_spread=True,
        )
        gain = diagnostics.cross_rack_cost_before - diagnostics.cross_rack_cost_after
        if gain <= 0:
            break
        replicas = retrimmed
        saved += gain
        retrimmed_rounds += 1
    if exchanged:
        notes.append(f"rack: {exchanged} tasks exchanged active and standby roles")
    if retrimmed_rounds:
        notes.append("rack: standbys re-placed around the final actives")
    if not notes:
        return numbered, Diagnostics()
    notes[-1] += f", cross-rack partitions -{saved}"
    return replicas, Diagnostics(cross_rack_cost_after=-saved, notes=tuple(notes))


def trim_guess(
    state: ApplicationState,
    layout: HaLayout,
    active: Sequence[Collection[int]],
    tables: RackTables,
    *,
    sets: bool = True,
) -> tuple[list[set[int]], Replicas, Diagnostics]:
    """Phase 1's rack pass (``rack.trim_actives`` with the high-availability costs) on the
    balanced guess ``active`` (sets, or lists without ``sets``): the actives it leaves, as sets
    (only with ``sets``: else an empty list) and as ``Replicas`` (which the later rack steps
    take on), and its report."""
    numbering = Numbering(state, layout)
    replicas = numbering.replicas(active)
    traffic, overlap = resolve_costs(state.configs, CostPhase.HIGH_AVAILABILITY)
    optimised, diagnostics = optimize_active_replicas(
        state, replicas, tables, traffic_cost=traffic, non_overlap_cost=overlap
    )
    if not sets:
        return [], optimised, diagnostics
    if optimised is replicas:
        return _as_sets(active), replicas, diagnostics
    return numbering.actives(optimised), optimised, diagnostics


def trim_placed(
    state: ApplicationState,
    layout: HaLayout,
    held: tuple[Sequence[Collection[int]], Sequence[Collection[int]]],
    tables: RackTables,
    numbered: Replicas | None,
    *,
    sets: bool = True,
) -> tuple[list[set[int]], Replicas, Diagnostics]:
    """Phase 2's rack pass (``rack.trim_standbys`` with the high-availability costs) on
    ``held`` (actives, standbys; ``numbered``: the actives as phase 1's ``Replicas``, else
    numbered here; the standbys may come as sorted lists): the standbys it leaves (as sets only
    with ``sets``: else an empty list), all of it as ``Replicas``, and its report."""
    numbering = Numbering(state, layout)
    replicas = (
        numbering.replicas(*held)
        if numbered is None
        else numbering.with_standbys(numbered, held[1])
    )
    traffic, overlap = resolve_costs(state.configs, CostPhase.HIGH_AVAILABILITY)
    optimised, diagnostics = optimize_standby_replicas(
        state, replicas, tables, traffic_cost=traffic, non_overlap_cost=overlap, task_spread=True
    )
    if not sets:
        return [], optimised, diagnostics
    if optimised is replicas:
        return _as_sets(held[1]), replicas, diagnostics
    return numbering.standbys(optimised), optimised, diagnostics


def _as_sets(held: Sequence[Collection[int]]) -> list[set[int]]:
    """Holdings given as sets, or as lists where the caller kept none, as sets."""
    return [h if isinstance(h, set) else compact(h) for h in held]


def measured(
    state: ApplicationState,
    layout: HaLayout,
    held: tuple[Sequence[AbstractSet[int]], Sequence[AbstractSet[int]]] | Replicas,
    tables: RackTables,
) -> int | None:
    """``rack.measured_holdings_cost`` of ``held`` (actives, standbys, or as ``Replicas``) from
    the request's tables: ``None`` where a held task's racks are unknown."""
    if not isinstance(held, Replicas):
        held = Numbering(state, layout).replicas(*held)
    return tables.cost_of(held)


def _fixed(numbering: Numbering, warmups: Sequence[AbstractSet[int]]) -> IntArray | None:
    """The warm-ups as ``task * clients + client`` codes; ``None`` when there are none."""
    if not any(warmups):
        return None
    tasks, clients = numbering.flat(warmups)
    codes: IntArray = tasks * numbering.state_of.size + clients
    return codes


def previous_codes(state: ApplicationState, tasks: Sequence[TaskId]) -> IntArray:
    """Each task's previous active clients (``rack.previous_actives``) as ``task * clients +
    client`` codes, positions in ``tasks`` and clients in state order: by client, each
    client's tasks as its set lists them, a task not in ``tasks`` left out."""
    held = [
        (c, client.previous_active_tasks)
        for c, client in enumerate(state.clients.values())
        if client.previous_active_tasks
    ]
    if not held:
        return np.zeros(0, np.int64)
    checkpoint()
    position = dict(zip(tasks, range(len(tasks))))
    sizes = [len(ts) for _, ts in held]
    found = np.fromiter(
        map(position.get, chain.from_iterable(ts for _, ts in held), repeat(-1)),
        np.int64,
        sum(sizes),
    )
    clients = np.repeat(np.array([c for c, _ in held], np.int64), sizes)
    known = found >= 0
    codes: IntArray = found[known] * len(state.clients) + clients[known]
    return codes


def eligible(
    layout: HaLayout, index: CatchUpIndex, counts: IntArray | None = None
) -> tuple[IntArray, IntArray]:
    """Where each stateful active may go after the movements, as (task, layout client) pairs
    by task then client: a caught-up client, any client for a task no client is caught up on
    (it restores anywhere, as Kafka's movements let it). Tasks with more than ``_WIDE``
    caught-up clients, or none, join only in small groups. ``counts``: ``caught_up_counts``
    as a column, where the caller has it (the tasks are picked from it, not a step each)."""
    n_c = len(layout.clients)
    caught = _counts(index) if counts is None else counts
    narrow = (caught > 0) & (caught <= _WIDE)
    if (caught.size - int(np.count_nonzero(narrow))) * n_c <= _FREE_ARCS:
        picked: Sequence[int] = range(caught.size)  # the free tasks join too
    else:
        picked = np.flatnonzero(narrow).tolist()
    lists: list[Sequence[int]] = []
    for k, i in enumerate(picked):
        if not k % 64:  # a check costs about a microsecond
            checkpoint()
        lists.append(index.caught_up(i) or range(n_c))  # none caught up: any client
    sizes = list(map(len, lists))
    tasks = np.repeat(np.array(picked, np.int64), sizes)
    clients = np.fromiter(chain.from_iterable(lists), np.int64, sum(sizes))
    return tasks, clients


def _counts(index: CatchUpIndex) -> IntArray:
    """``index.caught_up_counts()`` as a column: the index's own (read-only), not a copy."""
    return index.caught_up_column()


def _may_lead(
    index: CatchUpIndex, counts: IntArray, clients: IntArray, tasks: IntArray, n_clients: int
) -> npt.NDArray[np.bool_]:
    """``index.caught_up_pairs`` of (layout client, task) pairs as a column: a task none or all
    of the ``n_clients`` clients are caught up on (``counts``, ``caught_up_counts``: every task
    of a fresh group, most of a settled one) is read from the column; only the other tasks'
    pairs are asked of the index, pair by pair (issue 24)."""
    caught = counts[tasks]
    led: npt.NDArray[np.bool_] = caught > 0
    ask = np.flatnonzero(led & (caught < n_clients))
    if ask.size:
        led[ask] = index.caught_up_pairs(clients[ask].tolist(), tasks[ask].tolist())
    return led
