"""The assignor's output (KIP-924's TaskAssignment): where each task runs, and what happened.

Output types are separate from the input model and frozen: an assignor builds its answer in
local scratch state and freezes it on the way out. Task tuples are sorted.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from kassign.assignor.load.figures import LoadFigures
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import ProcessId, TaskId

__all__ = [
    "LATEST_DEADLINE_MS",
    "AssignedTask",
    "Diagnostics",
    "KafkaStreamsAssignment",
    "MemberAssignment",
    "RackStatus",
    "TaskAssignment",
    "TaskType",
    "followup_deadline",
    "task_assignment",
]

LATEST_DEADLINE_MS = 2**63 - 1
"""Java's ``Long.MAX_VALUE``: the latest deadline the contract (``int64``) and Kafka can carry.

A Streams member reads it as "no follow-up rebalance" (``StreamsPartitionAssignor``), which is
what a probing interval that long means."""


def followup_deadline(now_ms: int, delay_ms: int) -> int:
    """``now_ms + delay_ms``, saturated at ``LATEST_DEADLINE_MS`` rather than past ``int64``.

    Kafka accepts ``probing.rebalance.interval.ms`` up to ``Long.MAX_VALUE`` and adds it to the
    leader's clock in Java ``long`` arithmetic, which wraps to a deadline in the past: each
    member's ``StreamThread`` then rebalances at once instead of after the interval. Saturating
    keeps the deadline where the config meant it, and inside ``int64``.
    """
    return min(now_ms + delay_ms, LATEST_DEADLINE_MS)


class RackStatus(enum.IntEnum):
    """What KIP-925 rack-aware optimisation did; a higher value tells a reader more (``merged``).

    DISABLED and FALLBACK come with a reason (``Diagnostics.rack_reason``).
    """

    OFF = 0  # no rack-aware strategy configured
    DISABLED = 1  # configured, but it cannot help here
    OPTIMAL = 2  # the solver's optimum was applied
    FALLBACK = 3  # solver out of budget or not optimal: the unoptimised assignment stands


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

    ``rack_status`` says what rack-aware optimisation did, ``rack_reason`` why (for DISABLED and
    FALLBACK); ``rack_optimisation`` is both as one string ("off", "optimal", "disabled: <why>",
    "fallback: <why>"), the form the report's deprecated string field and the pipeline keep.
    """

    warmups: int = 0
    rack_status: RackStatus = RackStatus.OFF
    rack_reason: str = ""
    cross_rack_cost_before: int = 0
    cross_rack_cost_after: int = 0
    solver_fallback: bool = False
    notes: tuple[str, ...] = ()
    warmup_replicas: tuple[tuple[TaskId, ProcessId], ...] = ()
    """The warm-ups by name (``warmups`` counts them): ``moves.move_counts`` tells them from
    standbys. Sorted by task; at most ``max_warmup_replicas`` of them."""
    load: LoadFigures | None = None
    """With ``balance`` ``LOAD`` (issue 25): the answer's bound, peak and mean per thread."""

    def merged(self, other: Diagnostics) -> Diagnostics:
        """Combine the diagnostics of two phases (counts and costs add, notes append).

        The rack status kept is the one that matters most to a reader: a fallback in any phase,
        else "optimal" if any phase optimised, else the first "disabled" reason, else "off".
        Each phase's own status stays in the notes its optimiser writes.
        """
        kept = other if other.rack_status > self.rack_status else self
        return Diagnostics(
            warmups=self.warmups + other.warmups,
            rack_status=kept.rack_status,
            rack_reason=kept.rack_reason,
            cross_rack_cost_before=self.cross_rack_cost_before + other.cross_rack_cost_before,
            cross_rack_cost_after=self.cross_rack_cost_after + other.cross_rack_cost_after,
            solver_fallback=self.solver_fallback or other.solver_fallback,
            notes=self.notes + other.notes,
            warmup_replicas=tuple(sorted(self.warmup_replicas + other.warmup_replicas)),
            load=other.load if other.load is not None else self.load,
        )

    @property
    def rack_optimisation(self) -> str:
        """The status as one string: "optimal", "disabled: <why>", ... (lower-case name: reason)."""
        name = self.rack_status.name.lower()
        return f"{name}: {self.rack_reason}" if self.rack_reason else name


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
