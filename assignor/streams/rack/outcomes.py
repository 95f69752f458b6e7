"""The rack optimisations' solves within the time budget, checked, and their reports.

Why a module: ``optimise.py``'s entry points (maps of task ids, or the request's integer tables)
check and number their input; what follows - price the solve, solve, verify, report - is the same
for both and is this module's (the budget's rules are in ``optimise.py``'s docstring).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from kassign.assignor.errors import SolverError
from kassign.assignor.flow import IntArray
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.rack.active_flow import placement_cost, solve_active_compact
from kassign.assignor.streams.rack.int_sets import isin
from kassign.assignor.streams.rack.problems import (
    Diversities,
    build_active_problem,
    check_standbys,
    diversity,
)
from kassign.assignor.streams.rack.standby_flow import (
    StandbyProblem,
    solve_standby_compact,
    solve_standby_dense,
    standby_cost,
)
from kassign.assignor.streams.result import Diagnostics, RackStatus

__all__ = ["active_outcome", "standby_outcome"]

_MS_PER_ARC = 0.003
"""Solve-time estimate per arc (about twice the measured CPU time), the budget's only unit."""


def active_outcome(
    state: ApplicationState,
    ordered: list[TaskId],
    start: IntArray,
    rack_table: tuple[list[str], IntArray],
    costs: tuple[int, int],
    anchored: np.ndarray | None,
) -> tuple[IntArray | None, Diagnostics]:
    """The solved placement (``None``: the input stands) and the report, for both callers."""
    racks, misses = rack_table
    traffic_cost, non_overlap_cost = costs
    problem = build_active_problem(
        state, ordered, start, racks, misses, traffic_cost, non_overlap_cost, anchored
    )
    subtopology = problem.subtopology
    unit = replace(problem, traffic_cost=1, non_overlap_cost=0, subtopology=None)
    before = placement_cost(unit, start)
    n_c = len(state.clients)
    arcs = len(ordered) * (len(racks) + 1) + n_c * (1 + 2 * _subtopologies(subtopology))
    try:
        _afford(state, 0, arcs)
        placement = solve_active_compact(problem)
        if not np.array_equal(np.bincount(placement, minlength=n_c), problem.counts):
            raise SolverError("BAD_RESULT", "per-client task counts changed")
    except SolverError as exc:
        return None, _fallback(f"{len(ordered)} active tasks", exc, before)
    moved = int((placement != start).sum())
    after = placement_cost(unit, placement)
    return placement, _optimal(f"{len(ordered)} active tasks", moved, before, after)


def standby_outcome(
    state: ApplicationState, problem: StandbyProblem, n_racks: int, task_spread: bool
) -> tuple[tuple[IntArray, IntArray] | None, Diagnostics]:
    """The solved standbys (``None``: the input stands) and the report, for both callers."""
    if task_spread:
        problem = replace(problem, loose=np.ones(problem.active_client.size, np.bool_))
    unit = replace(problem, traffic_cost=1, non_overlap_cost=0)
    rep_task, rep_client = problem.rep_task, problem.rep_client
    before = standby_cost(unit, rep_task, rep_client)
    try:
        solved = _solve_standbys(state, problem, n_racks)
    except SolverError as exc:
        return None, _fallback(f"{rep_task.size} standbys", exc, before)
    n_c = problem.client_rack.size
    stayed = isin(solved[0] * n_c + solved[1], rep_task * n_c + rep_client).sum()
    moved = int(solved[0].size - stayed)
    after = standby_cost(unit, *solved)
    return solved, _optimal(f"{rep_task.size} standbys", moved, before, after)


def _optimal(what: str, moved: int, before: int, after: int) -> Diagnostics:
    """The report of a solve that stands: both costs and the note saying what moved."""
    note = f"rack: {what}, {moved} moved, cross-rack partitions {before} -> {after}"
    return Diagnostics(
        rack_status=RackStatus.OPTIMAL,
        cross_rack_cost_before=before,
        cross_rack_cost_after=after,
        notes=(note,),
    )


def _solve_standbys(
    state: ApplicationState, problem: StandbyProblem, n_racks: int
) -> tuple[np.ndarray, np.ndarray]:
    """Compact graph first, the per-client one if its hub split fails; checked, within budget.

    With ``loose`` tasks, their standbys may change tag class in the solve; a task whose tag
    diversity dropped is then locked to its classes and the group solved again, at most
    ``_LOOSE_ROUNDS`` times before every task is locked. Locking to the starting classes is
    stricter than the rule: with room to move counts, the first solve may spend a task's
    freedom on a count change, and the lock then forbids a cheaper swap that keeps counts. So
    when a task was locked, the group is also solved with counts kept, and the cheaper wins.
    Every solve counts against the one budget.
    """
    solved, locked, spent, seen = _solve_loose(state, problem, n_racks, 0)
    if locked and (problem.may_lose is not None or problem.may_gain is not None):
        kept, _, _, kept_seen = _solve_loose(
            state, replace(problem, may_lose=None, may_gain=None), n_racks, spent
        )
        if standby_cost(problem, *kept) < standby_cost(problem, *solved):
            solved, seen = kept, kept_seen
    check_standbys(problem, *solved, diversities=seen)
    return solved


def _solve_loose(
    state: ApplicationState, problem: StandbyProblem, n_racks: int, spent: int
) -> tuple[tuple[np.ndarray, np.ndarray], bool, int, Diversities]:
    """The lock-and-resolve rounds; also whether any task had to be locked, the arcs spent,
    and the diversities worked out on the way (so ``check_standbys`` does not count again)."""
    locked = False
    given: np.ndarray | None = None  # the input's diversity, the same every round
    for round_ in range(_LOOSE_ROUNDS + 1):
        if problem.loose is not None and round_ == _LOOSE_ROUNDS:
            problem = replace(problem, loose=None)
        solved, spent = _solve_standbys_once(state, problem, n_racks, spent)
        reached: np.ndarray | None = None  # the diversity of this round's ``solved``
        if problem.loose is None:
            break
        if given is None:
            given = diversity(problem, problem.rep_task, problem.rep_client)
        reached = diversity(problem, *solved)
        dropped = np.any(reached < given, axis=1)
        if not dropped.any():
            break
        locked = True
        problem = replace(problem, loose=problem.loose & ~dropped)
    return solved, locked, spent, (given, reached)


_LOOSE_ROUNDS = 10
"""Each round locks at least one more task, and usually settles in two or three; the cap
bounds the solves for a group whose tasks keep dropping diversity one after another."""


def _solve_standbys_once(
    state: ApplicationState, problem: StandbyProblem, n_racks: int, spent: int
) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """One solve, compact graph first; the result and the arcs spent so far."""
    replicas, classes = problem.rep_task.size, problem.class_values.shape[0]
    spent = _afford(state, spent, replicas * (n_racks * classes + 1))
    solved = solve_standby_compact(problem)
    if solved is None:
        spent = _afford(state, spent, replicas * problem.client_rack.size)
        solved = solve_standby_dense(problem)
    return solved, spent


def _subtopologies(subtopology: np.ndarray | None) -> int:
    return 0 if subtopology is None else int(subtopology.max(initial=-1)) + 1


def _afford(state: ApplicationState, spent: int, arcs: int) -> int:
    """``spent + arcs``: the arcs this optimisation has solved, with the next solve's.

    ``SolverError`` (TIME_BUDGET) when their estimated time exceeds the budget. No clock is read:
    the decision, and the reason given, are functions of the request.
    """
    total = spent + arcs
    budget = state.configs.assignment_time_budget_ms
    if budget is not None and total * _MS_PER_ARC > budget:
        raise SolverError(
            "TIME_BUDGET",
            f"time budget of {budget} ms too small for {total} arcs"
            f" (about {math.ceil(total * _MS_PER_ARC)} ms)",
        )
    return total


def _fallback(what: str, exc: SolverError, before: int) -> Diagnostics:
    reason = str(exc) if exc.status != "TIME_BUDGET" else str(exc).split(": ", 1)[1]
    return Diagnostics(
        rack_status=RackStatus.FALLBACK,
        rack_reason=reason,
        solver_fallback=True,
        cross_rack_cost_before=before,
        cross_rack_cost_after=before,
        notes=(f"rack: {what}, fallback: {reason}",),
    )
