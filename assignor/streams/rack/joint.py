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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np
from kassign.assignor.flow import ArcBlock, FlowGraph, IntArray, layout, solve
from kassign.assignor.streams.model import (
    ApplicationState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.rack.int_sets import isin
from kassign.assignor.streams.rack.measure import miss_tables
from kassign.assignor.streams.rack.problems import room_arrays
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.tags import tag_layout

__all__ = [
    "Candidates",
    "Exchange",
    "RoleProblem",
    "choose_exchanges",
    "choose_relocations",
    "exchange_roles",
    "relocate_actives",
    "solve_exchanges",
    "spread_keeper",
    "subtopology_bounds",
]

Assignment = Mapping[ProcessId, AbstractSet[TaskId]]
MayLead = Callable[[TaskId, ProcessId], bool]
"""Whether a client may run a task's active (e.g. it is caught up on the task)."""


@dataclass(frozen=True, slots=True)
class RoleProblem:
    """Candidate exchanges as parallel arrays: task ``task[i]`` active on client ``source[i]``
    may become active on ``target[i]`` (which holds a standby of it), for ``gain[i]`` less cost.

    ``group[i]`` is the flow-conservation class of the task (its subtopology under
    ``balance_subtopology``, else 0). ``may_lose[c]`` / ``may_gain[c]``: how many more actives
    client ``c`` may give than it takes, and the reverse (``None``: none, counts are kept).
    ``held[g, c]`` / ``bound[g, c]``: with several classes, how many tasks of class ``g`` client
    ``c`` runs and may run; a client may then trade one class for another within the bounds
    (``None``: every (class, client) count is kept). Rows are indexed by ``group`` values.
    """

    num_clients: int
    task: IntArray
    source: IntArray
    target: IntArray
    gain: IntArray
    group: IntArray
    may_lose: IntArray | None = None
    may_gain: IntArray | None = None
    held: IntArray | None = None
    bound: IntArray | None = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """The outcome: new actives and standbys, how many tasks changed roles, the cost saved."""

    active: dict[ProcessId, frozenset[TaskId]]
    standby: dict[ProcessId, frozenset[TaskId]]
    exchanged: int
    saved: int


def solve_exchanges(p: RoleProblem) -> IntArray:
    """Indices of the candidates to apply: a minimum-cost circulation, at most one per task."""
    if p.task.size == 0 or not (p.gain > 0).any():
        return np.zeros(0, np.int64)
    tasks, task_node = np.unique(p.task, return_inverse=True)
    groups, group_of = np.unique(p.group, return_inverse=True)
    g_n, c_n, n = groups.size, p.num_clients, p.task.size
    lay = layout(("slot", g_n * c_n), ("task", tasks.size))
    t0 = lay.start("task")
    first = np.zeros(tasks.size, np.int64)
    first[task_node[::-1]] = np.arange(n)[::-1]
    scale = n + 1
    arcs: list[ArcBlock] = [
        (group_of[first] * c_n + p.source[first], t0 + np.arange(tasks.size), 1, 0),
        (t0 + task_node, group_of * c_n + p.target, 1, -p.gain * scale + 1),
    ]
    nodes = lay.num_nodes
    mixes = p.held is not None and p.bound is not None
    banks = p.may_lose is not None and p.may_gain is not None
    if mixes and p.held is not None and p.bound is not None:
        # A client's slots meet at a hub: a slot gives up to what it holds and takes up to its
        # bound, so a client may trade one class for another at no cost of its own.
        hubs, nodes = nodes + np.arange(c_n), nodes + c_n
        slot_client = np.tile(np.arange(c_n), g_n)
        slot_ids = np.arange(g_n * c_n)
        give = p.held[groups].ravel()
        take = np.maximum(p.bound[groups] - p.held[groups], 0).ravel()
        arcs += [(hubs[slot_client], slot_ids, give, 0), (slot_ids, hubs[slot_client], take, 0)]
    elif g_n == 1:
        hubs = np.arange(c_n)  # one class: a client's slot is the client
    else:
        banks = False  # several classes whose counts are kept: nothing to lend
    if banks and p.may_lose is not None and p.may_gain is not None:
        # A bank lets a client give more actives than it takes (up to may_lose) and another
        # take more than it gives (up to may_gain), at no cost of its own.
        arcs += [(nodes, hubs, p.may_lose, 0), (hubs, nodes, p.may_gain, 0)]
        nodes += 1
    graph = FlowGraph.of(nodes, arcs, np.zeros(nodes, np.int64))
    flows = solve(graph).flows[tasks.size : tasks.size + n]
    return np.flatnonzero(flows > 0).astype(np.int64)


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


def spread_keeper(
    state: ApplicationState,
) -> Callable[[ProcessId, ProcessId, Sequence[ProcessId]], bool]:
    """Whether moving an active from one client to another keeps its replicas' KIP-708 spread.

    Per tag key (the rack when no tags are configured, ``tags.tag_layout``), the count of
    distinct values over the task's clients must not drop, whether an unset tag counts as a
    value or not: the old client's value is among the standbys' anyway, or the new client's is
    not, and is unset only if the old one's was.
    """
    layout = tag_layout(state)
    if not layout.tag_aware:
        return lambda source, target, others: True
    values = layout.values

    def keeps(source: ProcessId, target: ProcessId, others: Sequence[ProcessId]) -> bool:
        for k, (old, new) in enumerate(zip(values[source], values[target], strict=True)):
            seen = {values[o][k] for o in others}
            if old not in seen and (new in seen or (new is None and old is not None)):
                return False
        return True

    return keeps


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate moves of actives, in the caller's order: candidate ``i`` takes task
    ``tasks[task[i]]`` from client ``source[i]`` (its active's) to client ``target[i]``.
    ``leaves[i]`` / ``returns[i]``: 1 where the source / target ran the task before (``None``
    when no previous owners were given); ``positions``: ``tasks``' rows in the caller's list of
    every task, for integer callers (``None`` for maps)."""

    tasks: list[TaskId]
    task: IntArray
    source: IntArray
    target: IntArray
    leaves: IntArray | None
    returns: IntArray | None
    positions: IntArray | None = None

    @staticmethod
    def of(
        state: ApplicationState,
        owner: Mapping[TaskId, ProcessId],
        pairs: Sequence[tuple[TaskId, ProcessId]],
        previous: Mapping[TaskId, AbstractSet[ProcessId]] | None,
    ) -> Candidates:
        """``pairs`` of (task, target client); each task's source is its ``owner``."""
        clients = list(state.clients)
        index = {pid: i for i, pid in enumerate(clients)}
        tasks = sorted({t for t, _ in pairs})  # TaskId's own order is Kafka's
        row = {t: i for i, t in enumerate(tasks)}
        task = np.array([row[t] for t, _ in pairs], np.int64)
        source = np.array([index[owner[t]] for t, _ in pairs], np.int64)
        target = np.array([index[pid] for _, pid in pairs], np.int64)
        if previous is None:
            return Candidates(tasks, task, source, target, None, None)
        empty: frozenset[ProcessId] = frozenset()
        owned = [previous.get(tasks[t], empty) for t in task.tolist()]
        leaves = np.array([clients[a] in o for a, o in zip(source.tolist(), owned)], np.int64)
        returns = np.array([clients[b] in o for b, o in zip(target.tolist(), owned)], np.int64)
        return Candidates(tasks, task, source, target, leaves, returns)

    @staticmethod
    def of_positions(
        tasks: Sequence[TaskId],
        task: IntArray,
        moves: tuple[IntArray, IntArray],
        previous: IntArray,
        n_clients: int,
    ) -> Candidates:
        """Candidates given as positions in ``tasks`` and (source, target) client indices;
        ``previous``: each task's previous active clients as ``task * n_clients + client``."""
        source, target = moves
        used, row = np.unique(task, return_inverse=True)
        leaves = isin(task * n_clients + source, previous).astype(np.int64)
        returns = isin(task * n_clients + target, previous).astype(np.int64)
        named = [tasks[i] for i in used.tolist()]
        return Candidates(named, row.astype(np.int64), source, target, leaves, returns, used)

    def solve(
        self,
        state: ApplicationState,
        gain: IntArray,
        room: tuple[IntArray, IntArray] | None,
        bounds: tuple[IntArray, IntArray] | None,
    ) -> IntArray:
        """The candidates to apply for ``gain`` (``solve_exchanges``' circulation). ``room``:
        per client, how many more actives it may give than take and take than give.
        ``bounds``: under ``balance_subtopology``, the KIP-925 (held, bound) per (subtopology,
        client) within which a client may trade one subtopology for another
        (``subtopology_bounds``)."""
        groups = _groups(state, self.tasks, self.task)
        lose, take = room if room is not None else (None, None)
        held, bound = bounds if bounds is not None else (None, None)
        problem = RoleProblem(
            len(state.clients),
            self.task,
            self.source,
            self.target,
            gain,
            groups,
            lose,
            take,
            held,
            bound,
        )
        return solve_exchanges(problem)

    def stickiness(self, non_overlap_cost: int, *, replicas: int) -> IntArray:
        """What each candidate costs in stickiness.

        Without previous owners: ``non_overlap_cost`` for each replica that changes client
        (KIP-925's rule against the assignment given). With them: the objective is the traffic
        plus ``non_overlap_cost`` for each active on a client that did not run it
        (``moved.moved_counts``' definition), so a candidate pays it for taking a task off a
        previous owner and earns it back for returning one there; moving a task between two
        clients that did not run it costs nothing (both are caught up, neither was where it
        ran).
        """
        if self.leaves is None or self.returns is None:
            return np.full(self.source.size, replicas * non_overlap_cost, np.int64)
        cost: IntArray = non_overlap_cost * (self.leaves - self.returns)
        return cost


def subtopology_bounds(
    state: ApplicationState, tasks: list[TaskId], actives: Iterable[tuple[TaskId, int]]
) -> tuple[IntArray, IntArray] | None:
    """Under ``balance_subtopology``, per (subtopology of ``tasks``, numbered as ``_groups``
    does; client): the actives held (``actives``: every (task, client index)), and KIP-925
    4.B.II's bound with the client's share of the threads for its share of the tasks,
    ceil(S[s] x threads[c] / all threads); ``None`` under other strategies.

    Phase 1 bounds by the client's count in its balanced start, which is its thread share; the
    joint stage may move counts toward that share, so the share is what stays fixed.
    """
    if state.configs.rack_aware_strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        return None
    keys = sorted({_key(t) for t in tasks})
    row = {k: i for i, k in enumerate(keys)}
    clients = list(state.clients)
    held = np.zeros((len(keys), len(clients)), np.int64)
    sizes = np.zeros(len(keys), np.int64)
    for t, c in actives:
        g = row.get(_key(t))
        if g is not None:
            held[g, c] += 1
            sizes[g] += 1
    threads = np.array([max(1, state.clients[p].num_threads) for p in clients], np.int64)
    total = int(threads.sum())
    bound: IntArray = (sizes[:, None] * threads[None, :] + total - 1) // total
    return held, bound


def _held(state: ApplicationState, active: Assignment) -> Iterator[tuple[TaskId, int]]:
    """Every active of ``active`` as (task, client index), for ``subtopology_bounds``."""
    for c, pid in enumerate(state.clients):
        for t in active.get(pid, ()):
            yield t, c


def _key(t: TaskId) -> tuple[str, int]:
    return (t.named_topology or "", t.subtopology)


def _groups(state: ApplicationState, tasks: list[TaskId], t_idx: IntArray) -> IntArray:
    """The conservation class per candidate: its subtopology under ``balance_subtopology``."""
    if state.configs.rack_aware_strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        return np.zeros(t_idx.size, np.int64)
    keys = sorted({(t.named_topology or "", t.subtopology) for t in tasks})
    number = {k: i for i, k in enumerate(keys)}
    per_task = np.array([number[(t.named_topology or "", t.subtopology)] for t in tasks])
    return per_task[t_idx].astype(np.int64)
