"""KIP-924 validation: is an assignor's answer one Kafka Streams could apply?

Checks run in a fixed order and the first failure is returned, so the same bad answer always
gets the same code: Kafka's own checks in Kafka's order (an active on two clients, a standby of
a stateless task, a client left out, a client nobody knows, a task nobody knows), with our two
extra checks where they fit (a client holding one task twice comes right after the first check;
an active task nobody got comes last). Values match the proto's ``AssignmentError`` numbers.
"""

from __future__ import annotations

import enum
from collections import Counter

from kassign.assignor.ordering import process_key, sorted_processes
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskAssignment

__all__ = ["AssignmentError", "validate", "validate_with_reason"]


class AssignmentError(enum.Enum):
    """KIP-924's ``AssignmentError`` plus two checks Kafka's map-based output cannot fail."""

    NONE = 0
    ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES = 1
    INVALID_STANDBY_TASK = 2
    MISSING_PROCESS_ID = 3
    UNKNOWN_PROCESS_ID = 4
    UNKNOWN_TASK_ID = 5
    TASK_ASSIGNED_TWICE_TO_CLIENT = 6
    ACTIVE_TASK_UNASSIGNED = 7


def validate(state: ApplicationState, assignment: TaskAssignment) -> AssignmentError:
    """The first thing wrong with ``assignment`` for ``state``, or ``AssignmentError.NONE``."""
    return validate_with_reason(state, assignment)[0]


def validate_with_reason(
    state: ApplicationState, assignment: TaskAssignment
) -> tuple[AssignmentError, str]:
    """Like ``validate``, with a sentence naming the task or client at fault (empty when fine).

    A process listed twice in ``assignment`` counts as one client holding both lists.
    """
    held: dict[ProcessId, list[tuple[TaskId, bool]]] = {}
    for entry in assignment.assignments:
        tasks = held.setdefault(entry.process_id, [])
        tasks.extend((t, True) for t in entry.active)
        tasks.extend((t, False) for t in entry.standby)
    clients = sorted(held, key=process_key)
    for finding in (
        _active_on_several_clients(held, clients),
        _held_twice(held, clients),
        _stateless_standby(state, held, clients),
        _missing_client(state, held),
        _unknown_client(state, clients),
        _unknown_task(state, held, clients),
        _unassigned_active(state, held),
    ):
        if finding is not None:
            return finding
    return AssignmentError.NONE, ""


_Held = dict[ProcessId, list[tuple[TaskId, bool]]]
_Finding = tuple[AssignmentError, str] | None


def _active_on_several_clients(held: _Held, clients: list[ProcessId]) -> _Finding:
    owners: dict[TaskId, set[ProcessId]] = {}
    for pid in clients:
        for task, is_active in held[pid]:
            if is_active:
                owners.setdefault(task, set()).add(pid)
    doubled = sorted((t for t, ps in owners.items() if len(ps) > 1))
    if doubled:
        return (
            AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
            f"task {doubled[0]} is active on several clients",
        )
    return None


def _held_twice(held: _Held, clients: list[ProcessId]) -> _Finding:
    for pid in clients:
        counts = Counter(task for task, _ in held[pid])
        twice = sorted((t for t, n in counts.items() if n > 1))
        if twice:
            return (
                AssignmentError.TASK_ASSIGNED_TWICE_TO_CLIENT,
                f"client {pid} holds task {twice[0]} twice",
            )
    return None


def _stateless_standby(state: ApplicationState, held: _Held, clients: list[ProcessId]) -> _Finding:
    stateless = {t for t, info in state.tasks.items() if not info.stateful}
    for pid in clients:
        wrong = [task for task, is_active in held[pid] if not is_active and task in stateless]
        if wrong:  # the first in task order, found without sorting every client's tasks
            return (
                AssignmentError.INVALID_STANDBY_TASK,
                f"client {pid} has a standby of stateless task {min(wrong)}",
            )
    return None


def _missing_client(state: ApplicationState, held: _Held) -> _Finding:
    for pid in sorted_processes(state.clients):
        if pid not in held:
            return AssignmentError.MISSING_PROCESS_ID, f"client {pid} has no assignment"
    return None


def _unknown_client(state: ApplicationState, clients: list[ProcessId]) -> _Finding:
    for pid in clients:
        if pid not in state.clients:
            return AssignmentError.UNKNOWN_PROCESS_ID, f"client {pid} is not in the group"
    return None


def _unknown_task(state: ApplicationState, held: _Held, clients: list[ProcessId]) -> _Finding:
    for pid in clients:
        unknown = [task for task, _ in held[pid] if task not in state.tasks]
        if unknown:
            return AssignmentError.UNKNOWN_TASK_ID, f"client {pid} got unknown task {min(unknown)}"
    return None


def _unassigned_active(state: ApplicationState, held: _Held) -> _Finding:
    active = {task for tasks in held.values() for task, is_active in tasks if is_active}
    missing = [task for task in state.tasks if task not in active]
    if missing:
        return AssignmentError.ACTIVE_TASK_UNASSIGNED, f"task {min(missing)} has no active client"
    return None
