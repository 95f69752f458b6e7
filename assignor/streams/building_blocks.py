"""Building blocks for custom assignors, mirroring KIP-924's ``TaskAssignmentUtils``.

- ``identity_assignment``: every client keeps its previous actives and standbys (Kafka's no-op
  answer; tasks that left the topology stay in it, so validation will say so);
- ``default_standby_assignment``: standbys for the actives of an assignment, placed as the
  built-in assignors place them (KIP-708 tags or racks when configured, least loaded otherwise);
- ``optimize_active_tasks`` / ``optimize_standby_tasks``: KIP-925 rack-aware trimming, from the
  rack subpackage's entry point (which loads OR-Tools on first use).
"""

from __future__ import annotations

from dataclasses import replace

from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.rack import optimize_active_tasks, optimize_standby_tasks
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    TaskAssignment,
    task_assignment,
)
from kassign.assignor.streams.standby import place_standby_tasks

__all__ = [
    "default_standby_assignment",
    "identity_assignment",
    "optimize_active_tasks",
    "optimize_standby_tasks",
]


def identity_assignment(state: ApplicationState) -> TaskAssignment:
    """The previous assignment, as the clients reported it."""
    return task_assignment(
        KafkaStreamsAssignment.of(pid, c.previous_active_tasks, c.previous_standby_tasks)
        for pid, c in state.clients.items()
    )


def default_standby_assignment(
    state: ApplicationState, assignment: TaskAssignment
) -> TaskAssignment:
    """``assignment`` with its standbys replaced by ``num_standby_replicas`` per stateful task.

    Actives, follow-up deadlines and diagnostics are kept; placement notes are appended.
    """
    by_process = assignment.by_process()
    active = {pid: frozenset(a.active) for pid, a in by_process.items()}
    placement = place_standby_tasks(state, active)
    clients = [
        replace(given, standby=tuple(sorted(placement.standby.get(pid, ()))))
        for pid, given in by_process.items()
    ]
    notes = Diagnostics(notes=placement.notes)
    return task_assignment(clients, assignment.diagnostics.merged(notes))
