"""KIP-925 rack-aware optimisation: move tasks to cut cross-rack traffic, keeping every count.

Both functions take a valid assignment and return one at least as cheap under the KIP-925 cost:
``traffic_cost`` per counted topic partition of the task with no replica in the client's rack
(``costs.CostModel``: actives count their source partitions in Kafka's built-in assignors and
all their partitions in KIP-924's utilities; standbys their changelog partitions), plus
``non_overlap_cost`` if the client is not where the task started. Per-client counts never change;
``balance_subtopology`` also caps each subtopology per client (KIP-925 4.B.II). The graphs live in
``active_flow.py`` and ``standby_flow.py``; the solver in ``flow.py``; the solves within the
budget, their checks and their reports in ``outcomes.py``.

They change nothing, and say why in ``Diagnostics.rack_optimisation``, when the strategy is
``none`` ("off"), when a client has no rack or a partition's replica racks are unknown, or when
the traffic cost cannot differ between racks ("disabled: ..."). They never raise for a solver
problem: a status other than optimal, or a time budget overrun, returns the input unchanged with
``solver_fallback=True`` ("fallback: ...").

Time budget (``assignment_time_budget_ms``, per call): OR-Tools cannot be interrupted, so each
solve is priced before it runs, at ``_MS_PER_ARC`` per arc of its graph, and the call falls back
once the solves it needs would cost more than the budget. The price is an estimate from the
request, never a clock reading: the same request gets the same answer (and the same reason) on
any machine under any load. Wall-clock limits are the caller's gRPC deadline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

import numpy as np
from kassign.assignor.errors import InvalidAssignment, InvalidRequest
from kassign.assignor.flow import IntArray
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import (
    MAX_RACK_COST,
    ApplicationState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.rack.cost_tables import rack_costs
from kassign.assignor.streams.rack.costs import CostModel
from kassign.assignor.streams.rack.int_sets import isin, pair_order
from kassign.assignor.streams.rack.outcomes import active_outcome, standby_outcome
from kassign.assignor.streams.rack.problems import (
    Assignment,
    active_owners,
    active_problem,
    build_standby_problem,
    every_client,
    holds_state,
    owners,
    room_arrays,
)
from kassign.assignor.streams.rack.replicas import RackTables, Replicas
from kassign.assignor.streams.result import Diagnostics, RackStatus, TaskType
from kassign.assignor.timing import RACK_OPTIMISATION, timed

__all__ = [
    "MAX_COST",
    "active_problem",
    "optimize_active_replicas",
    "optimize_active_tasks",
    "optimize_standby_replicas",
    "optimize_standby_tasks",
]


MAX_COST = MAX_RACK_COST
"""Largest traffic or non-overlap cost accepted (``model.MAX_RACK_COST``)."""


@timed(RACK_OPTIMISATION)
def optimize_active_tasks(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    cost_model: CostModel = CostModel.TASK_ASSIGNMENT_UTILS,
    anchor_on_state: bool = False,
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    """Re-place ``tasks`` (actives) over the clients of ``assignment`` at minimum cost.

    ``cost_model`` picks the partitions counted; the default is KIP-924's utility's, the
    built-in assignors pass ``CostModel.BUILT_IN``. The reported costs use the same model.
    ``anchor_on_state``: ``non_overlap_cost`` is paid only for moving a task off a client that
    has its state (a previous active or standby there); otherwise, as KIP-925 says, for moving
    it off its starting client at all.
    """
    _check_costs(traffic_cost, non_overlap_cost)
    result = every_client(state, assignment)
    ordered = sorted(set(tasks))  # TaskId's own order is Kafka's
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not ordered:
        return result, Diagnostics()
    clients = list(state.clients)
    index = {pid: i for i, pid in enumerate(clients)}
    start = owners(ordered, result, index)
    costs = rack_costs(
        state, ordered, traffic_cost, cost_model=cost_model, task_type=TaskType.ACTIVE
    )
    if isinstance(costs, str):
        return result, _disabled(f"{len(ordered)} active tasks", costs)
    racks, misses = costs
    anchored = holds_state(state, ordered, start) if anchor_on_state else None
    costs_of = (traffic_cost, non_overlap_cost)
    placement, diagnostics = active_outcome(
        state, ordered, start, (racks, misses), costs_of, anchored
    )
    if placement is None:
        return result, diagnostics
    optimised = frozenset(ordered)
    for pid in clients:
        result[pid] = result[pid] - optimised
    _apply(result, clients, ordered, placement.tolist())
    return result, diagnostics


@timed(RACK_OPTIMISATION)
def optimize_active_replicas(
    state: ApplicationState,
    replicas: Replicas,
    tables: RackTables,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> tuple[Replicas, Diagnostics]:
    """``optimize_active_tasks`` of every task of ``replicas`` (each has an active) under the
    built-in model, without anchors, on integers and the request's tables (issue 24)."""
    _check_costs(traffic_cost, non_overlap_cost)
    ordered = list(replicas.tasks)
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not ordered:
        return replicas, Diagnostics()
    start = replicas.owner
    if np.any(start < 0):
        missing = ordered[int(np.flatnonzero(start < 0)[0])]
        raise InvalidAssignment("ACTIVE_TASK_UNASSIGNED", f"task {missing} is on no client")
    what = f"{len(ordered)} active tasks"
    if traffic_cost == 0 or tables.active_blind.any():
        reason = rack_costs(
            state, ordered, traffic_cost, cost_model=CostModel.BUILT_IN, task_type=TaskType.ACTIVE
        )
        assert isinstance(reason, str)
        return replicas, _disabled(what, reason)
    misses = tables.active
    if (misses == misses[:, :1]).all():
        return replicas, _disabled(what, "every task's cross-rack cost is the same on every rack")
    costs = (traffic_cost, non_overlap_cost)
    placement, diagnostics = active_outcome(
        state, ordered, start, (tables.racks, misses), costs, None
    )
    if placement is None:
        return replicas, diagnostics
    return replace(replicas, owner=placement.astype(np.int64)), diagnostics


@timed(RACK_OPTIMISATION)
def optimize_standby_tasks(
    state: ApplicationState,
    active: Assignment,
    standby: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    cost_model: CostModel = CostModel.TASK_ASSIGNMENT_UTILS,
    anchor_on_state: bool = False,
    fixed: AbstractSet[tuple[TaskId, ProcessId]] = frozenset(),
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
    task_spread: bool = False,
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    """Re-place every standby at minimum cost, keeping counts, exclusions and tag diversity.

    Both cost models count a standby's changelog partitions; ``cost_model`` is taken so every
    caller names its model. ``anchor_on_state`` as for ``optimize_active_tasks``. Standbys in
    ``fixed`` (task, client) stay where they are (warm-ups) and still count as replicas.
    ``slack`` (client: how many fewer and more standbys it may end with) loosens the counts.
    ``task_spread``: a task's several standbys may change tag class as long as the task's own
    diversity holds (the built-in assignors); otherwise each keeps its class, Kafka's rule.
    """
    _check_costs(traffic_cost, non_overlap_cost)
    result = every_client(state, standby)
    ordered = sorted({t for ts in result.values() for t in ts})  # TaskId's own order is Kafka's
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not ordered:
        return result, Diagnostics()
    clients = list(state.clients)
    index = {pid: i for i, pid in enumerate(clients)}
    active_of = active_owners(ordered, active, index)
    rep_task, rep_client = _replicas(ordered, result, index)
    if np.any(active_of[rep_task] == rep_client):
        raise InvalidAssignment("INVALID_STANDBY_TASK", "a standby sits on its active's client")
    costs = rack_costs(
        state, ordered, traffic_cost, cost_model=cost_model, task_type=TaskType.STANDBY
    )
    if isinstance(costs, str):
        return result, _disabled(f"{len(ordered)} standby tasks", costs)
    racks, misses = costs
    anchored = (
        holds_state(state, [ordered[t] for t in rep_task.tolist()], rep_client)
        if anchor_on_state
        else None
    )
    problem = build_standby_problem(
        state,
        rep_task,
        rep_client,
        active_of,
        racks,
        misses,
        traffic_cost,
        non_overlap_cost,
        anchored,
        _fixed(fixed, ordered, clients, rep_task, rep_client),
        room_arrays(clients, slack),
    )
    solved, diagnostics = standby_outcome(state, problem, len(racks), task_spread)
    if solved is None:
        return result, diagnostics
    new: dict[ProcessId, set[TaskId]] = {pid: set() for pid in clients}
    for i, (t, c) in enumerate(zip(solved[0].tolist(), solved[1].tolist(), strict=True)):
        if not i % 1024:  # a check costs about a microsecond, a step here a tenth of one
            checkpoint()
        new[clients[c]].add(ordered[t])
    result.update({p: frozenset(ts) for p, ts in new.items()})
    return result, diagnostics


@timed(RACK_OPTIMISATION)
def optimize_standby_replicas(
    state: ApplicationState,
    replicas: Replicas,
    tables: RackTables,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    fixed: IntArray | None = None,
    room: tuple[IntArray, IntArray] | None = None,
    task_spread: bool = False,
) -> tuple[Replicas, Diagnostics]:
    """``optimize_standby_tasks`` under the built-in model, without anchors, on integers: the
    same answer and report from the request's tables (``replicas``), with no map of task ids
    (issue 24). ``fixed``: the standbys that stay, as ``task * clients + client`` codes;
    ``room``: (may_lose, may_gain) per client. ``tables`` come from ``RackTables.of``."""
    _check_costs(traffic_cost, non_overlap_cost)
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not replicas.rep_task.size:
        return replicas, Diagnostics()
    used, rep_task = np.unique(replicas.rep_task, return_inverse=True)
    rep_task, rep_client = rep_task.astype(np.int64), replicas.rep_client
    active_of = replicas.owner[used]
    if np.any(active_of[rep_task] == rep_client):
        raise InvalidAssignment("INVALID_STANDBY_TASK", "a standby sits on its active's client")
    what = f"{used.size} standby tasks"
    misses = tables.standby[used]
    if traffic_cost == 0 or tables.standby_blind[used].any():
        ordered = [replicas.tasks[i] for i in used.tolist()]
        reason = rack_costs(
            state, ordered, traffic_cost, cost_model=CostModel.BUILT_IN, task_type=TaskType.STANDBY
        )
        assert isinstance(reason, str)
        return replicas, _disabled(what, reason)
    if (misses == misses[:, :1]).all():
        return replicas, _disabled(
            what, "every standby's cross-rack cost is the same on every rack"
        )
    codes = replicas.standby_codes(len(state.clients))
    problem = build_standby_problem(
        state,
        rep_task,
        rep_client,
        active_of,
        tables.racks,
        misses,
        traffic_cost,
        non_overlap_cost,
        None,
        None if fixed is None else isin(codes, fixed),
        room,
        tables.classes,
        tables.client_rack,
    )
    solved, diagnostics = standby_outcome(state, problem, len(tables.racks), task_spread)
    if solved is None:
        return replicas, diagnostics
    # the solve's standbys come sorted by task then client, and ``used`` is ascending
    return replicas.with_standbys(used[solved[0]], solved[1], ordered=True), diagnostics


def _replicas(
    ordered: Sequence[TaskId],
    standby: Mapping[ProcessId, AbstractSet[TaskId]],
    index: Mapping[ProcessId, int],
) -> tuple[np.ndarray, np.ndarray]:
    """Every standby as (task position in ``ordered``, client index), sorted by task then
    client: per client one array, not a tuple per replica (issue 24)."""
    task_of = dict(zip(ordered, range(len(ordered))))
    tasks = []
    for ts in standby.values():
        checkpoint()
        tasks.append(np.fromiter(map(task_of.__getitem__, ts), np.int64, len(ts)))
    clients = [np.full(len(ts), index[p], np.int64) for p, ts in standby.items()]
    rep_task = np.concatenate([*tasks, np.zeros(0, np.int64)])
    rep_client = np.concatenate([*clients, np.zeros(0, np.int64)])
    order = pair_order(rep_task, rep_client)
    return rep_task[order], rep_client[order]


def _fixed(
    fixed: AbstractSet[tuple[TaskId, ProcessId]],
    ordered: Sequence[TaskId],
    clients: Sequence[ProcessId],
    rep_task: np.ndarray,
    rep_client: np.ndarray,
) -> np.ndarray | None:
    """Which replicas are in ``fixed``; ``None`` when none is."""
    if not fixed:
        return None
    return np.array(
        [
            (ordered[t], clients[c]) in fixed
            for t, c in zip(rep_task.tolist(), rep_client.tolist(), strict=True)
        ],
        np.bool_,
    )


def _check_costs(traffic_cost: int, non_overlap_cost: int) -> None:
    for name, value in (("traffic_cost", traffic_cost), ("non_overlap_cost", non_overlap_cost)):
        if not 0 <= value <= MAX_COST:
            raise InvalidRequest(f"{value} is outside [0, {MAX_COST}]", field=f"configs.{name}")


def _disabled(what: str, reason: str) -> Diagnostics:
    status = Diagnostics(rack_status=RackStatus.DISABLED, rack_reason=reason)
    return replace(status, notes=(f"rack: {what}, {status.rack_optimisation}",))


def _apply(
    result: dict[ProcessId, frozenset[TaskId]],
    clients: list[ProcessId],
    tasks: list[TaskId],
    placement: list[int],
) -> None:
    """Put each task on its client in ``result`` (which no longer holds any of ``tasks``)."""
    placed: dict[ProcessId, list[TaskId]] = {}
    for i, (t, c) in enumerate(zip(tasks, placement, strict=True)):
        if not i % 1024:
            checkpoint()
        placed.setdefault(clients[c], []).append(t)
    for pid, ts in placed.items():
        result[pid] = result[pid] | frozenset(ts)
