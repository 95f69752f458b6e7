"""How many tasks an assignment moved: the one definition the response and the pipeline share.

An active moved when a client owned it before and the client it is on now did not; a brand-new
task has no owner to move from. A standby moved when its client reported no local state for it (it
must restore from scratch). The response's report (``active_tasks_moved``,
``standby_tasks_moved``) and the pipeline's measures both count with ``moved_counts``.
"""

from __future__ import annotations

from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.result import TaskAssignment

__all__ = ["moved_counts"]


def moved_counts(state: ApplicationState, assignment: TaskAssignment) -> tuple[int, int]:
    """(actives now owned by a client that did not own them, standbys on a client without state)."""
    previous_owners: dict[TaskId, set[int]] = {}  # UUID.int: hashed in C, UUID's hash is not
    for pid, client in state.clients.items():
        for task in client.previous_active_tasks:
            previous_owners.setdefault(task, set()).add(pid.int)
    active_moved = standby_moved = 0
    for target in assignment.assignments:
        known = state.clients.get(target.process_id)
        target_pid = target.process_id.int
        active_moved += sum(
            1
            for t in target.active
            if (owners := previous_owners.get(t)) and target_pid not in owners
        )
        if known is None:
            standby_moved += len(target.standby)
        else:
            had = known.previous_tasks
            standby_moved += sum(1 for t in target.standby if t not in had)
    return active_moved, standby_moved
