"""Per-assignment measures: what an operator wants to compare between configurations.

Moves come twice: ``active_moved`` / ``standby_moved`` (the report's older figures) and the split
by kind, ``stateful_actives_moved``, ``stateless_actives_moved``, ``standbys_moved`` and
``warmups``, with ``moves.move_counts``' definitions, the ones the response, the table and the
metrics use (docs/explanations.md).

Pure functions of the input state and the computed assignment, so they are tested without Spark
and give the same numbers in replay, simulate and the benchmark. The cross-rack costs come from
the assignor's own ``Diagnostics`` (KIP-925); ``cross_rack_partitions`` is measured on the
final assignment (``assignor/streams/cross_rack.py``, shared with shadow mode), so configurations with rack awareness off can be compared too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kassign.assignor.streams.cross_rack import cross_rack_partitions
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.moves import move_counts
from kassign.assignor.streams.result import MemberAssignment, TaskAssignment

__all__ = [
    "MEASURE_COLUMNS",
    "Measures",
    "assign_and_measure",
    "cross_rack_partitions",
    "failed",
    "measure",
    "tag_violations",
    "thread_balance",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Measures:
    """One assignment's figures; ``error`` is empty when the assignment was computed and valid."""

    tasks: int = 0
    clients: int = 0
    cost_before: int = 0
    cost_after: int = 0
    cross_rack_partitions: int = 0
    active_moved: int = 0
    standby_moved: int = 0
    warmups: int = 0
    stateful_actives_moved: int = 0
    stateless_actives_moved: int = 0
    standbys_moved: int = 0
    followup: bool = False
    balance: int = 0
    tag_violations: int = 0
    rack_optimisation: str = ""
    solver_fallback: bool = False
    assign_seconds: float = 0.0
    error: str = ""

    def row(self) -> dict[str, Any]:
        return asdict(self)


MEASURE_COLUMNS: tuple[str, ...] = tuple(Measures.__dataclass_fields__)


def failed(reason: str, *, tasks: int = 0, clients: int = 0, seconds: float = 0.0) -> Measures:
    """The measures of an assignment that could not be computed (``reason`` says why)."""
    return Measures(tasks=tasks, clients=clients, assign_seconds=seconds, error=reason or "error")


def thread_balance(members: Sequence[MemberAssignment]) -> int:
    """Max minus min number of tasks (active and standby) per stream thread."""
    loads = [len(m.active) + len(m.standby) for m in members]
    return max(loads) - min(loads) if loads else 0


def tag_violations(state: ApplicationState, assignment: TaskAssignment) -> int:
    """Copies of a task sharing a tag value although enough distinct values existed (KIP-708).

    For each task with standbys and each configured tag key, the shortfall between the distinct
    values its copies could have spanned and the distinct values they span.
    """
    keys = state.configs.rack_aware_assignment_tags
    if not keys:
        return 0
    holders: dict[TaskId, list[ProcessId]] = {}
    for target in assignment.assignments:
        for task in (*target.active, *target.standby):
            holders.setdefault(task, []).append(target.process_id)
    available = {k: len({c.client_tags.get(k) for c in state.clients.values()}) for k in keys}
    shortfall = 0
    for task in sorted(holders, key=lambda t: t.sort_key):
        copies = holders[task]
        if len(copies) < 2:
            continue
        for key in keys:
            spanned = len({_tag(state, p, key) for p in copies})
            shortfall += max(0, min(len(copies), available[key]) - spanned)
    return shortfall


def _tag(state: ApplicationState, process: ProcessId, key: str) -> str | None:
    client = state.clients.get(process)
    return client.client_tags.get(key) if client is not None else None


def measure(
    state: ApplicationState,
    assignment: TaskAssignment,
    members: Sequence[MemberAssignment],
    *,
    error: str = "",
    seconds: float = 0.0,
) -> Measures:
    """Every measure of one computed assignment."""
    diagnostics = assignment.diagnostics
    active_moved, standby_moved = moved_counts(state, assignment)
    moves = move_counts(state, assignment)
    return Measures(
        tasks=len(state.tasks),
        clients=len(state.clients),
        cost_before=diagnostics.cross_rack_cost_before,
        cost_after=diagnostics.cross_rack_cost_after,
        cross_rack_partitions=cross_rack_partitions(state, assignment),
        active_moved=active_moved,
        standby_moved=standby_moved,
        warmups=diagnostics.warmups,
        stateful_actives_moved=moves.stateful_actives,
        stateless_actives_moved=moves.stateless_actives,
        standbys_moved=moves.standbys,
        followup=assignment.followup_scheduled,
        balance=thread_balance(members),
        tag_violations=tag_violations(state, assignment),
        rack_optimisation=diagnostics.rack_optimisation,
        solver_fallback=diagnostics.solver_fallback,
        assign_seconds=seconds,
        error=error,
    )


def assign_and_measure(state: ApplicationState) -> tuple[TaskAssignment | None, Measures]:
    """Run the configured assignor and distribute, as the servicer does, and measure the result.

    Distribution follows the servicer's rule (``distribute_if_valid``): after a failed validation
    no consumer gets tasks, so ``balance`` is 0 there (it used to be measured on the rejected
    assignment).

    Never raises for a bad state or a failing assignor: the failure is the ``error`` measure.
    """
    # late: the library is imported once per Spark worker
    from kassign.assignor.streams.api import distribute_if_valid, run

    started = time.perf_counter()
    seconds = 0.0
    try:
        assignment, code = run(state)
        seconds = time.perf_counter() - started
        members = distribute_if_valid(state, assignment, code)
    except Exception as exc:  # noqa: BLE001 - one bad group must not fail the job
        seconds = seconds or time.perf_counter() - started
        sizes = {"tasks": len(state.tasks), "clients": len(state.clients)}
        return None, failed(_describe(exc), seconds=seconds, **sizes)
    error = "" if code.name == "NONE" else f"assignment error {code.name}"
    return assignment, measure(state, assignment, members, error=error, seconds=seconds)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]
