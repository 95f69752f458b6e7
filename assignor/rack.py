"""KIP-925 rack-aware optimisation: move tasks to cut cross-rack traffic, keeping every count.

Both functions take a valid assignment and return one at least as cheap under the KIP-925 cost:
``traffic_cost`` per topic partition of the task with no replica in the client's rack (actives:
all its partitions; standbys: its changelog partitions, as KIP-924's utilities count), plus
``non_overlap_cost`` if the client is not where the task started. Per-client counts never change;
``balance_subtopology`` also caps each subtopology per client (KIP-925 4.B.II). The graphs live in
``rack_graph.py`` (actives) and ``rack_standby.py`` (standbys); the solver in ``flow.py``.

They change nothing, and say why in ``Diagnostics.rack_optimisation``, when the strategy is
``none`` ("off"), when a client has no rack or a partition's replica racks are unknown, or when
the traffic cost cannot differ between racks ("disabled: ..."). They never raise for a solver
problem: a status other than optimal, or a time budget overrun, returns the input unchanged with
``solver_fallback=True`` ("fallback: ...").

Time budget (``assignment_time_budget_ms``, per call): OR-Tools cannot be interrupted, so the
graph size is checked first (skipped if its estimated solve time exceeds the budget) and the
elapsed time after (a result that arrived late is discarded). The latter depends on the machine,
the one place the output can depend on anything but the input.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from assignor.errors import InvalidAssignment, InvalidRequest, SolverError
from assignor.model import (
    ApplicationState,
    AssignmentConfigs,
    ProcessId,
    RackAwareStrategy,
    TaskId,
    TaskTopicPartition,
)
from assignor.rack_graph import ActiveProblem, placement_cost, solve_active_compact
from assignor.rack_standby import (
    StandbyProblem,
    solve_standby_compact,
    solve_standby_dense,
    standby_cost,
)
from assignor.result import Diagnostics
from assignor.tags import tag_layout

__all__ = [
    "CostPhase",
    "MAX_COST",
    "active_problem",
    "optimize_active_tasks",
    "optimize_standby_tasks",
    "resolve_costs",
]

Assignment = Mapping[ProcessId, AbstractSet[TaskId]]
Partitions = Callable[[tuple[TaskTopicPartition, ...]], tuple[TaskTopicPartition, ...]]

MAX_COST = 1 << 20
"""Largest traffic or non-overlap cost accepted; with the tie-break scaling, far from overflow."""
_MS_PER_ARC = 0.002
"""Conservative solve-time estimate per arc, for skipping a graph the budget cannot afford."""


class CostPhase(enum.Enum):
    """Kafka's default (traffic, non-overlap) costs by caller (KIP-925 III and 4.E)."""

    HIGH_AVAILABILITY = (10, 1)
    STICKY = (1, 10)
    STATELESS = (1, 0)


def resolve_costs(configs: AssignmentConfigs, phase: CostPhase) -> tuple[int, int]:
    """The costs to use: the configured ones, else the phase's default; stateless tasks are always 1/0."""
    traffic, non_overlap = phase.value
    if phase is CostPhase.STATELESS:
        return traffic, non_overlap
    return (
        traffic if configs.traffic_cost is None else configs.traffic_cost,
        non_overlap if configs.non_overlap_cost is None else configs.non_overlap_cost,
    )


def optimize_active_tasks(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    """Re-place ``tasks`` (actives) over the clients of ``assignment`` at minimum cost."""
    started = time.perf_counter()
    _check_costs(traffic_cost, non_overlap_cost)
    result = _every_client(state, assignment)
    ordered = sorted(set(tasks), key=lambda t: t.sort_key)
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not ordered:
        return result, Diagnostics()
    clients = list(state.clients)
    index = {pid: i for i, pid in enumerate(clients)}
    start = _owners(ordered, result, index)
    reason = _disabled_reason(state, ordered, traffic_cost, _all_partitions)
    if reason is None:
        racks = sorted({str(c.rack_id) for c in state.clients.values()})
        misses = _misses(state, ordered, racks, _all_partitions)
        if (misses == misses[:, :1]).all():
            reason = "every task's cross-rack cost is the same on every rack"
    if reason is not None:
        return result, Diagnostics(rack_optimisation=f"disabled: {reason}")
    problem = _active_problem(state, ordered, start, racks, misses, traffic_cost, non_overlap_cost)
    subtopology = problem.subtopology
    unit = ActiveProblem(problem.client_rack, start, misses, 1, 0)
    before = placement_cost(unit, start)
    arcs = len(ordered) * (len(racks) + 1) + len(clients) * (1 + 2 * _subtopologies(subtopology))
    try:
        _within_budget(state, started, arcs)
        placement = solve_active_compact(problem)
        _within_budget(state, started, 0)
        if not np.array_equal(np.bincount(placement, minlength=len(clients)), problem.counts):
            raise SolverError("BAD_RESULT", "per-client task counts changed")
    except SolverError as exc:
        return result, _fallback(exc, before)
    optimised = frozenset(ordered)
    for pid in clients:
        result[pid] = result[pid] - optimised
    _apply(result, clients, ordered, placement.tolist())
    moved = int((placement != start).sum())
    after = placement_cost(unit, placement)
    note = f"rack: {len(ordered)} active tasks, {moved} moved, cross-rack partitions {before} -> {after}"
    return result, Diagnostics(
        rack_optimisation="optimal",
        cross_rack_cost_before=before,
        cross_rack_cost_after=after,
        notes=(note,),
    )


def optimize_standby_tasks(
    state: ApplicationState,
    active: Assignment,
    standby: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    """Re-place every standby at minimum cost, keeping counts, exclusions and tag diversity."""
    started = time.perf_counter()
    _check_costs(traffic_cost, non_overlap_cost)
    result = _every_client(state, standby)
    ordered = sorted({t for ts in result.values() for t in ts}, key=lambda t: t.sort_key)
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not ordered:
        return result, Diagnostics()
    clients = list(state.clients)
    index = {pid: i for i, pid in enumerate(clients)}
    task_of = {t: i for i, t in enumerate(ordered)}
    owners = _active_owners(ordered, active, index)
    reps = sorted((task_of[t], index[p]) for p, ts in result.items() for t in ts)
    rep_task, rep_client = (np.array(col, np.int64) for col in zip(*reps, strict=True))
    if np.any(owners[rep_task] == rep_client):
        raise InvalidAssignment("INVALID_STANDBY_TASK", "a standby sits on its active's client")
    reason = _disabled_reason(state, ordered, traffic_cost, _changelog_partitions)
    if reason is None:
        racks = sorted({str(c.rack_id) for c in state.clients.values()})
        misses = _misses(state, ordered, racks, _changelog_partitions)
        if (misses == misses[:, :1]).all():
            reason = "every standby's cross-rack cost is the same on every rack"
    if reason is not None:
        return result, Diagnostics(rack_optimisation=f"disabled: {reason}")
    rack_of = {r: i for i, r in enumerate(racks)}
    client_class, class_values = _tag_classes(state, clients)
    problem = StandbyProblem(
        client_rack=np.array([rack_of[str(state.clients[p].rack_id)] for p in clients], np.int64),
        client_class=client_class,
        class_values=class_values,
        rep_task=rep_task,
        rep_client=rep_client,
        active_client=owners,
        misses=misses,
        traffic_cost=traffic_cost,
        non_overlap_cost=non_overlap_cost,
    )
    unit = StandbyProblem(
        problem.client_rack, client_class, class_values, rep_task, rep_client, owners, misses, 1, 0
    )
    before = standby_cost(unit, rep_task, rep_client)
    try:
        _within_budget(state, started, rep_task.size * (len(racks) * len(class_values) + 1))
        solved = solve_standby_compact(problem)
        if solved is None:
            _within_budget(state, started, rep_task.size * len(clients))
            solved = solve_standby_dense(problem)
        _within_budget(state, started, 0)
        _check_standbys(problem, *solved)
    except SolverError as exc:
        return result, _fallback(exc, before)
    new: dict[ProcessId, set[TaskId]] = {pid: set() for pid in clients}
    for t, c in zip(solved[0].tolist(), solved[1].tolist(), strict=True):
        new[clients[c]].add(ordered[t])
    moved = sum(len(new[p] - result[p]) for p in clients)
    result.update({p: frozenset(ts) for p, ts in new.items()})
    after = standby_cost(unit, *solved)
    note = (
        f"rack: {rep_task.size} standbys, {moved} moved, cross-rack partitions {before} -> {after}"
    )
    return result, Diagnostics(
        rack_optimisation="optimal",
        cross_rack_cost_before=before,
        cross_rack_cost_after=after,
        notes=(note,),
    )


def active_problem(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> ActiveProblem:
    """The graph input ``optimize_active_tasks`` would solve, without its checks (for benchmarks)."""
    ordered = sorted(set(tasks), key=lambda t: t.sort_key)
    index = {pid: i for i, pid in enumerate(state.clients)}
    start = _owners(ordered, _every_client(state, assignment), index)
    racks = sorted({str(c.rack_id) for c in state.clients.values()})
    misses = _misses(state, ordered, racks, _all_partitions)
    return _active_problem(state, ordered, start, racks, misses, traffic_cost, non_overlap_cost)


def _active_problem(
    state: ApplicationState,
    ordered: list[TaskId],
    start: np.ndarray,
    racks: list[str],
    misses: np.ndarray,
    traffic_cost: int,
    non_overlap_cost: int,
) -> ActiveProblem:
    """Number tasks, clients (Java UUID order) and racks (sorted); subtopologies if balancing."""
    subtopology = None
    if state.configs.rack_aware_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        keys = [f"{t.named_topology or ''}\0{t.subtopology:011d}" for t in ordered]
        subtopology = np.unique(np.array(keys), return_inverse=True)[1].astype(np.int64)
    rack_of = {r: i for i, r in enumerate(racks)}
    return ActiveProblem(
        client_rack=np.array([rack_of[str(c.rack_id)] for c in state.clients.values()], np.int64),
        start=start,
        misses=misses,
        traffic_cost=traffic_cost,
        non_overlap_cost=non_overlap_cost,
        subtopology=subtopology,
    )


def _check_costs(traffic_cost: int, non_overlap_cost: int) -> None:
    for name, value in (("traffic_cost", traffic_cost), ("non_overlap_cost", non_overlap_cost)):
        if not 0 <= value <= MAX_COST:
            raise InvalidRequest(f"{value} is outside [0, {MAX_COST}]", field=f"configs.{name}")


def _every_client(
    state: ApplicationState, assignment: Assignment
) -> dict[ProcessId, frozenset[TaskId]]:
    unknown = [p for p in assignment if p not in state.clients]
    if unknown:
        raise InvalidAssignment("UNKNOWN_PROCESS_ID", f"no such client {min(map(str, unknown))}")
    return {p: frozenset(assignment.get(p, ())) for p in state.clients}


def _owners(
    tasks: list[TaskId],
    assignment: Mapping[ProcessId, frozenset[TaskId]],
    index: Mapping[ProcessId, int],
) -> np.ndarray:
    owner = _active_owners(tasks, assignment, index)
    if np.any(owner < 0):
        missing = tasks[int(np.flatnonzero(owner < 0)[0])]
        raise InvalidAssignment("ACTIVE_TASK_UNASSIGNED", f"task {missing} is on no client")
    return owner


def _active_owners(
    tasks: list[TaskId], assignment: Assignment, index: Mapping[ProcessId, int]
) -> np.ndarray:
    """Client index of each task's active (-1: none); a task active twice is the caller's bug."""
    wanted = {t: i for i, t in enumerate(tasks)}
    owner = np.full(len(tasks), -1, np.int64)
    for pid in sorted(assignment, key=lambda p: index[p]):
        for t in assignment[pid]:
            i = wanted.get(t)
            if i is not None and owner[i] >= 0:
                raise InvalidAssignment("ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES", f"task {t} twice")
            if i is not None:
                owner[i] = index[pid]
    return owner


def _all_partitions(
    info_partitions: tuple[TaskTopicPartition, ...],
) -> tuple[TaskTopicPartition, ...]:
    return info_partitions


def _changelog_partitions(
    info_partitions: tuple[TaskTopicPartition, ...],
) -> tuple[TaskTopicPartition, ...]:
    return tuple(tp for tp in info_partitions if tp.is_changelog)


def _disabled_reason(
    state: ApplicationState, tasks: list[TaskId], traffic_cost: int, partitions: Partitions
) -> str | None:
    """Why rack awareness cannot help here (KIP-925 section 6), or ``None``."""
    for pid, client in state.clients.items():
        if not client.rack_id:
            return f"client {pid} has no rack"
    if traffic_cost == 0:
        return "traffic_cost is 0"
    for t in tasks:
        info = state.tasks.get(t)
        if info is None:
            raise InvalidAssignment("UNKNOWN_TASK_ID", f"task {t} is not in the topology")
        for tp in partitions(info.topic_partitions):
            if not tp.rack_ids:
                return f"partition {tp.topic}-{tp.partition} of task {t} has no known replica racks"
    return None


def _misses(
    state: ApplicationState, tasks: list[TaskId], racks: list[str], partitions: Partitions
) -> np.ndarray:
    """``misses[t, r]``: partitions of task ``t`` with no replica in rack ``r``."""
    rack_sets: dict[frozenset[str], int] = {}
    rows: list[int] = []
    sets: list[int] = []
    for i, t in enumerate(tasks):
        for tp in partitions(state.tasks[t].topic_partitions):
            rows.append(i)
            sets.append(rack_sets.setdefault(tp.rack_ids, len(rack_sets)))
    table = np.array([[r not in s for r in racks] for s in rack_sets], np.int64)
    out = np.zeros((len(tasks), len(racks)), np.int64)
    if rows:
        np.add.at(out, np.array(rows), table.reshape(len(rack_sets), len(racks))[np.array(sets)])
    return out


def _tag_classes(
    state: ApplicationState, clients: list[ProcessId]
) -> tuple[np.ndarray, np.ndarray]:
    """Each client's tag class and each class's value codes (0: unset), from the KIP-708 layout."""
    values = tag_layout(state).values
    tuples = [tuple(values.get(p, ())) for p in clients]
    width = max((len(v) for v in tuples), default=0)
    codes: list[dict[str, int]] = [{} for _ in range(width)]
    for k in range(width):
        present = sorted({v for t in tuples if (v := t[k]) is not None})
        codes[k] = {v: i + 1 for i, v in enumerate(present)}
    coded = [tuple(0 if v is None else codes[k][v] for k, v in enumerate(t)) for t in tuples]
    classes = sorted(set(coded))
    class_of = {c: i for i, c in enumerate(classes)}
    client_class = np.array([class_of[c] for c in coded], np.int64)
    return client_class, np.array(classes, np.int64).reshape(len(classes), width)


def _check_standbys(p: StandbyProblem, tasks: np.ndarray, clients: np.ndarray) -> None:
    """The solver's standbys keep every guarantee of the input, or the input stands."""
    if not np.array_equal(np.bincount(clients, minlength=p.client_rack.size), p.counts):
        raise SolverError("BAD_RESULT", "per-client standby counts changed")
    if not np.array_equal(
        np.bincount(tasks, minlength=p.active_client.size),
        np.bincount(p.rep_task, minlength=p.active_client.size),
    ):
        raise SolverError("BAD_RESULT", "a task's standby count changed")
    pairs = tasks * p.client_rack.size + clients
    if np.unique(pairs).size != pairs.size or np.any(p.active_client[tasks] == clients):
        raise SolverError("BAD_RESULT", "a client would hold a task twice")
    if np.any(_diversity(p, tasks, clients) < _diversity(p, p.rep_task, p.rep_client)):
        raise SolverError("BAD_RESULT", "tag diversity would drop")


def _diversity(p: StandbyProblem, tasks: np.ndarray, clients: np.ndarray) -> np.ndarray:
    """Per task and tag key, how many distinct set values its replicas (active included) have."""
    t_n, width = p.active_client.size, p.class_values.shape[1]
    with_active = np.flatnonzero(p.active_client >= 0)
    all_t = np.concatenate([tasks, with_active])
    vals = p.class_values[p.client_class[np.concatenate([clients, p.active_client[with_active]])]]
    out = np.zeros((t_n, width), np.int64)
    span = int(vals.max(initial=0)) + 1
    for k in range(width):
        present = vals[:, k] > 0
        keyed = np.unique(all_t[present] * span + vals[present, k])
        out[:, k] = np.bincount(keyed // span, minlength=t_n)
    return out


def _subtopologies(subtopology: np.ndarray | None) -> int:
    return 0 if subtopology is None else int(subtopology.max(initial=-1)) + 1


def _within_budget(state: ApplicationState, started: float, arcs: int) -> None:
    budget = state.configs.assignment_time_budget_ms
    if budget is None:
        return
    elapsed = (time.perf_counter() - started) * 1000.0
    if elapsed + arcs * _MS_PER_ARC > budget:
        what = "exceeded" if arcs == 0 else f"too small for {arcs} arcs"
        raise SolverError(
            "TIME_BUDGET", f"time budget of {budget} ms {what} ({elapsed:.0f} ms spent)"
        )


def _fallback(exc: SolverError, before: int) -> Diagnostics:
    reason = str(exc) if exc.status != "TIME_BUDGET" else str(exc).split(": ", 1)[1]
    return Diagnostics(
        rack_optimisation=f"fallback: {reason}",
        solver_fallback=True,
        cross_rack_cost_before=before,
        cross_rack_cost_after=before,
    )


def _apply(
    result: dict[ProcessId, frozenset[TaskId]],
    clients: list[ProcessId],
    tasks: list[TaskId],
    placement: list[int],
) -> None:
    """Put each task on its client in ``result`` (which no longer holds any of ``tasks``)."""
    placed: dict[ProcessId, list[TaskId]] = {}
    for t, c in zip(tasks, placement, strict=True):
        placed.setdefault(clients[c], []).append(t)
    for pid, ts in placed.items():
        result[pid] = result[pid] | frozenset(ts)
