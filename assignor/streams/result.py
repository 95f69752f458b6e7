"""The assignor's output (KIP-924's TaskAssignment): where each task runs, and what happened.

Output types are separate from the input model and frozen: an assignor builds its answer in
local scratch state and freezes it on the way out. Task tuples are sorted.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import ProcessId, TaskId

__all__ = [
    "AssignedTask",
    "Diagnostics",
    "KafkaStreamsAssignment",
    "MemberAssignment",
    "TaskAssignment",
    "TaskType",
    "task_assignment",
]


class TaskType(enum.Enum):
    ACTIVE = "ACTIVE"
    STANDBY = "STANDBY"


@dataclass(frozen=True, slots=True)
class AssignedTask:
    task: TaskId
    type: TaskType


def _sorted_tasks(tasks: Iterable[TaskId]) -> tuple[TaskId, ...]:
    return tuple(sorted(tasks))


@dataclass(frozen=True, slots=True)
class KafkaStreamsAssignment:
    """The tasks given to one client, and when (if at all) it should rejoin for a follow-up.

    ``followup_rebalance_deadline_ms`` is absolute (the request's ``now_ms`` plus a delay).
    """

    process_id: ProcessId
    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()
    followup_rebalance_deadline_ms: int | None = None

    @staticmethod
    def of(
        process_id: ProcessId,
        active: Iterable[TaskId] = (),
        standby: Iterable[TaskId] = (),
        followup_rebalance_deadline_ms: int | None = None,
    ) -> KafkaStreamsAssignment:
        """An assignment with its task lists sorted."""
        return KafkaStreamsAssignment(
            process_id,
            _sorted_tasks(active),
            _sorted_tasks(standby),
            followup_rebalance_deadline_ms,
        )

    def with_followup_rebalance(self, deadline_ms: int) -> KafkaStreamsAssignment:
        """A copy that asks this client to trigger a rebalance after ``deadline_ms``."""
        return replace(self, followup_rebalance_deadline_ms=deadline_ms)

    @property
    def tasks(self) -> tuple[AssignedTask, ...]:
        return tuple(AssignedTask(t, TaskType.ACTIVE) for t in self.active) + tuple(
            AssignedTask(t, TaskType.STANDBY) for t in self.standby
        )


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """The tasks of one consumer (stream thread) after thread distribution."""

    member_id: str
    process_id: ProcessId
    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostics:
    """What the assignor did, for the report and metrics; never needed to apply the assignment.

    ``rack_optimisation`` is a short status: "off" (strategy none), "optimal", "disabled: <why>",
    "fallback: <why>" (solver out of budget or not optimal: the unoptimised assignment stands).
    """

    warmups: int = 0
    rack_optimisation: str = "off"
    cross_rack_cost_before: int = 0
    cross_rack_cost_after: int = 0
    solver_fallback: bool = False
    notes: tuple[str, ...] = ()

    def merged(self, other: Diagnostics) -> Diagnostics:
        """Combine the diagnostics of two phases (counts and costs add, notes append).

        The rack status kept is the one that matters most to a reader: a fallback in any phase,
        else "optimal" if any phase optimised, else the first "disabled: ..." reason, else "off".
        Each phase's own status stays in the notes its optimiser writes.
        """
        mine, theirs = self.rack_optimisation, other.rack_optimisation
        status = theirs if _status_rank(theirs) > _status_rank(mine) else mine
        return Diagnostics(
            warmups=self.warmups + other.warmups,
            rack_optimisation=status,
            cross_rack_cost_before=self.cross_rack_cost_before + other.cross_rack_cost_before,
            cross_rack_cost_after=self.cross_rack_cost_after + other.cross_rack_cost_after,
            solver_fallback=self.solver_fallback or other.solver_fallback,
            notes=self.notes + other.notes,
        )


def _status_rank(status: str) -> int:
    for rank, prefix in enumerate(("disabled", "optimal", "fallback"), start=1):
        if status.startswith(prefix):
            return rank
    return 0


@dataclass(frozen=True, slots=True)
class TaskAssignment:
    """The whole group's assignment: one entry per client, sorted by Java UUID order."""

    assignments: tuple[KafkaStreamsAssignment, ...]
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def by_process(self) -> Mapping[ProcessId, KafkaStreamsAssignment]:
        return {a.process_id: a for a in self.assignments}

    @property
    def followup_scheduled(self) -> bool:
        return any(a.followup_rebalance_deadline_ms is not None for a in self.assignments)


def task_assignment(
    assignments: Iterable[KafkaStreamsAssignment], diagnostics: Diagnostics | None = None
) -> TaskAssignment:
    """A ``TaskAssignment`` with its clients in Java UUID order."""
    ordered = tuple(sorted(assignments, key=lambda a: process_key(a.process_id)))
    return TaskAssignment(ordered, diagnostics or Diagnostics())
