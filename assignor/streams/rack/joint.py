"""Actives and standbys optimised together: which replica of a task should be its active.

Why: the active pass places actives with no view of standbys, and the standby pass then fills
the places left. A task whose active sits in a rack without its source partitions, while one of
its standbys sits in a rack that has them, is cheaper with the two roles exchanged, when the
changelog does not mind. The exchanges that keep every client's active and standby counts are
exactly the cycles of a circulation over clients: one unit from the active's client, through the
task, to the standby's client. Its minimum-cost circulation is the best set of exchanges.

What an exchange keeps: every client holds the same tasks as before (only their roles change), so
the per-client counts, the per-thread balance, the set of clients of each task and with it the
KIP-708 tag spread all stand; ``balance_subtopology`` counts per (client, subtopology) are kept by
conserving flow per (client, subtopology). The caller says which replicas may not change role
(warm-ups) and which clients may run a task (the caught-up ones, after KIP-441 movements).

The cost is Kafka's built-in measure (an active's source partitions, a standby's changelogs, one
``traffic_cost`` each with no replica in the client's rack) plus ``non_overlap_cost`` for each of
the two replicas whose role changed; every exchange also costs one tie-break unit, so no exchange
is made that does not strictly lower the cost, and among the best sets the one with the fewest.

Here the two steps on maps of task ids (the sticky assignor's, and KIP-924 callers'); their
candidates and what they keep live in ``candidates``, the circulation in ``circulation``, the
same steps on integers (the high-availability assignor's) in ``joint_replicas``. The Python
loops over pairs check the caller's deadline (``interrupt.checkpoint``), as each solve does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import (
    ApplicationState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.rack.candidates import (
    Candidates,
    spread_keeper,
    subtopology_bounds,
)
from kassign.assignor.streams.rack.measure import miss_tables
from kassign.assignor.streams.rack.problems import room_arrays
from kassign.assignor.streams.result import TaskType

__all__ = [
    "Exchange",
    "choose_exchanges",
    "choose_relocations",
    "exchange_roles",
    "relocate_actives",
]

Assignment = Mapping[ProcessId, AbstractSet[TaskId]]
MayLead = Callable[[TaskId, ProcessId], bool]
"""Whether a client may run a task's active (e.g. it is caught up on the task)."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """The outcome: new actives and standbys, how many tasks changed roles, the cost saved."""

    active: dict[ProcessId, frozenset[TaskId]]
    standby: dict[ProcessId, frozenset[TaskId]]
    exchanged: int
    saved: int


def exchange_roles(
    state: ApplicationState,
    active: Assignment,
    standby: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    may_lead: MayLead | None = None,
    fixed: AbstractSet[tuple[TaskId, ProcessId]] = frozenset(),
    previous: Mapping[TaskId, AbstractSet[ProcessId]] | None = None,
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
    traffic_first: bool = False,
) -> Exchange | str:
    """Exchange active and standby roles where that lowers the built-in cross-rack cost.

    ``active`` and ``standby`` cover the stateful tasks; ``fixed`` standbys (task, client) keep
    their role, and a standby becomes active only where ``may_lead`` allows. A string says why
    nothing could be gained (no strategy, no racks, nothing to exchange). ``previous`` (each
    task's previous active clients) changes what stickiness costs: see
    ``Candidates.stickiness``. ``slack`` as for ``relocate_actives``: an exchange moves an
    active one way and a standby the other, so a client's load stays whatever the slack.
    ``traffic_first`` ranks traffic above stickiness whatever the costs: an exchange is made
    where the traffic drops, or where it stays and actives return to previous owners.
    """
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE:
        return "off"
    clients = list(state.clients)
    owner = {t: pid for pid, ts in active.items() for t in ts}
    pairs = sorted(
        (t, pid)
        for pid, ts in standby.items()
        for t in ts
        if t in owner and (t, pid) not in fixed and (may_lead is None or may_lead(t, pid))
    )
    if not pairs:
        return "no standby may take its active's role"
    found = Candidates.of(state, owner, pairs, previous)
    tables = miss_tables(state, found.tasks, traffic_cost, (TaskType.ACTIVE, TaskType.STANDBY))
    if isinstance(tables, str):
        return tables
    client_rack, (active_miss, standby_miss) = tables
    chosen, saved = choose_exchanges(
        state,
        found,
        client_rack,
        (active_miss, standby_miss),
        costs=(traffic_cost, non_overlap_cost),
        traffic_first=traffic_first,
        room=room_arrays(clients, slack),
        bounds=subtopology_bounds(state, found.tasks, _held(state, active)),
    )
    tasks, t_idx, source, target = found.tasks, found.task, found.source, found.target
    new_active = {pid: set(active.get(pid, ())) for pid in clients}
    new_standby = {pid: set(standby.get(pid, ())) for pid in clients}
    for i in chosen.tolist():
        checkpoint()
        task, a, b = tasks[int(t_idx[i])], clients[int(source[i])], clients[int(target[i])]
        new_active[a].discard(task)
        new_standby[a].add(task)
        new_standby[b].discard(task)
        new_active[b].add(task)
    return Exchange(
        {p: frozenset(ts) for p, ts in new_active.items()},
        {p: frozenset(ts) for p, ts in new_standby.items()},
        int(chosen.size),
        saved,
    )


def choose_exchanges(
    state: ApplicationState,
    found: Candidates,
    client_rack: IntArray,
    misses: tuple[IntArray, IntArray],
    *,
    costs: tuple[int, int],
    traffic_first: bool,
    room: tuple[IntArray, IntArray] | None,
    bounds: tuple[IntArray, IntArray] | None,
) -> tuple[IntArray, int]:
    """The role exchanges to make among ``found`` (``misses``: active and standby tables by
    ``found``'s rows), and the traffic they save: ``exchange_roles`` after its candidates, for
    maps and for integers alike."""
    active_miss, standby_miss = misses
    t_idx, source, target = found.task, found.source, found.target
    a_rack, b_rack = client_rack[source], client_rack[target]
    before = active_miss[t_idx, a_rack] + standby_miss[t_idx, b_rack]
    after = active_miss[t_idx, b_rack] + standby_miss[t_idx, a_rack]
    # traffic_first: stickiness moves at most one unit per candidate, so n + 1 units of traffic
    # outweigh any set of them; traffic_cost drops out (and with it any overflow).
    traffic, overlap = (source.size + 1, 1) if traffic_first else costs
    gain = traffic * (before - after) - found.stickiness(overlap, replicas=2)
    chosen = found.solve(state, gain, room, bounds)
    return chosen, int((before - after)[chosen].sum())


def relocate_actives(
    state: ApplicationState,
    active: Assignment,
    standby: Assignment,
    eligible: Mapping[TaskId, Sequence[ProcessId]],
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    previous: Mapping[TaskId, AbstractSet[ProcessId]] | None = None,
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
) -> Exchange | str:
    """Move actives among the clients ``eligible`` to run them, keeping every client's count.

    The same circulation as ``exchange_roles``, for plain moves: task ``t`` leaves its client for
    an eligible one that holds no replica of it, and each client receives as many actives as it
    gives up, so counts (per subtopology under ``balance_subtopology``) and thread balance stand.
    ``slack`` (client: how many more it may give than take, and take than give) loosens that
    where the caller's balance allows, without ``balance_subtopology``. Standbys are untouched.
    ``Exchange.standby`` is ``standby`` as given. ``previous`` as for ``exchange_roles``.
    """
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE:
        return "off"
    clients = list(state.clients)
    index = {pid: i for i, pid in enumerate(clients)}
    owner = {t: pid for pid, ts in active.items() for t in ts}
    holders: dict[TaskId, list[ProcessId]] = {}
    for pid, ts in standby.items():
        checkpoint()
        for t in ts:
            holders.setdefault(t, []).append(pid)
    keeps = spread_keeper(state)
    pairs = sorted(
        (t, index[pid], pid)
        for t, candidates in eligible.items()
        if t in owner
        for pid in candidates
        if pid != owner[t]
        and pid not in holders.get(t, ())
        and keeps(owner[t], pid, holders.get(t, ()))
    )
    if not pairs:
        return "no other eligible client"
    found = Candidates.of(state, owner, [(t, pid) for t, _, pid in pairs], previous)
    tables = miss_tables(state, found.tasks, traffic_cost, (TaskType.ACTIVE,))
    if isinstance(tables, str):
        return tables
    client_rack, (active_miss,) = tables
    chosen, saved = choose_relocations(
        state,
        found,
        client_rack,
        active_miss,
        costs=(traffic_cost, non_overlap_cost),
        room=room_arrays(clients, slack),
        bounds=subtopology_bounds(state, found.tasks, _held(state, active)),
    )
    tasks = found.tasks
    new_active = {pid: set(active.get(pid, ())) for pid in clients}
    for i in chosen.tolist():
        checkpoint()
        task = tasks[int(found.task[i])]
        new_active[clients[int(found.source[i])]].discard(task)
        new_active[clients[int(found.target[i])]].add(task)
    return Exchange(
        {p: frozenset(ts) for p, ts in new_active.items()},
        {p: frozenset(standby.get(p, ())) for p in clients},
        int(chosen.size),
        saved,
    )


def choose_relocations(
    state: ApplicationState,
    found: Candidates,
    client_rack: IntArray,
    active_miss: IntArray,
    *,
    costs: tuple[int, int],
    room: tuple[IntArray, IntArray] | None,
    bounds: tuple[IntArray, IntArray] | None,
) -> tuple[IntArray, int]:
    """The moves to make among ``found`` and the traffic they save: ``relocate_actives`` after
    its candidates, for maps and for integers alike."""
    traffic_cost, non_overlap_cost = costs
    t_idx, source, target = found.task, found.source, found.target
    before = active_miss[t_idx, client_rack[source]]
    after = active_miss[t_idx, client_rack[target]]
    penalty = found.stickiness(non_overlap_cost, replicas=1)
    chosen = found.solve(state, traffic_cost * (before - after) - penalty, room, bounds)
    return chosen, int((before - after)[chosen].sum())


def _held(state: ApplicationState, active: Assignment) -> Iterator[tuple[TaskId, int]]:
    """Every active of ``active`` as (task, client index), for ``subtopology_bounds``."""
    for c, pid in enumerate(state.clients):
        for t in active.get(pid, ()):
            yield t, c
