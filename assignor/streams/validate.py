"""KIP-924 validation: is an assignor's answer one Kafka Streams could apply?

Checks run in a fixed order and the first failure is returned, so the same bad answer always
gets the same code: Kafka's own checks in Kafka's order (an active on two clients, a standby of
a stateless task, a client left out, a client nobody knows, a task nobody knows), with our two
extra checks where they fit (a client holding one task twice comes right after the first check;
an active task nobody got comes last). Values match the proto's ``AssignmentError`` numbers.
The per-client loops check the caller's deadline (``interrupt.checkpoint``): a group with many
standbys takes a few tenths of a second to check.
"""

from __future__ import annotations

import enum
import operator
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key, sorted_processes
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment

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
    entries = assignment.assignments
    if _the_group_in_order(state, entries):  # no process id hashed (issue 24)
        if _plainly_valid(state, [((e.active,), (e.standby,)) for e in entries]):
            return AssignmentError.NONE, ""
        return _first_fault(state, _held_lists(assignment))
    held = _held_lists(assignment)
    if _the_group(state, held) and _plainly_valid(state, list(held.values())):
        return AssignmentError.NONE, ""
    return _first_fault(state, held)


def _the_group_in_order(state: ApplicationState, entries: Sequence[KafkaStreamsAssignment]) -> bool:
    """Whether the entries name the group's clients, each once, as ``state.clients`` lists
    them, by identity (every built-in assignor's answer): its clients are then the group's."""
    return len(entries) == len(state.clients) and all(
        map(operator.is_, (e.process_id for e in entries), state.clients)
    )


def _the_group(state: ApplicationState, held: _Held) -> bool:
    """Whether the clients of ``held`` are exactly the group's."""
    clients = state.clients
    return len(held) == len(clients) and all(pid in clients for pid in held)


def _held_lists(assignment: TaskAssignment) -> _Held:
    held: _Held = {}
    for entry in assignment.assignments:
        active, standby = held.setdefault(entry.process_id, ([], []))
        active.append(entry.active)
        standby.append(entry.standby)
    return held


def _first_fault(state: ApplicationState, held: _Held) -> tuple[AssignmentError, str]:
    """Every check in its order, each over every client: the first fault found, if any."""
    clients = sorted(held, key=process_key)
    owners = _first_owners(held, clients)
    for finding in (
        _active_on_several_clients(held, clients, owners),
        _held_twice(held, clients),
        _stateless_standby(state, held, clients),
        _missing_client(state, held),
        _unknown_client(state, clients),
        _unknown_task(state, held, clients),
        _unassigned_active(state, owners),
    ):
        if finding is not None:
            return finding
    return AssignmentError.NONE, ""


_Lists = tuple[Sequence[tuple[TaskId, ...]], Sequence[tuple[TaskId, ...]]]
"""A client's active lists and standby lists (one each per entry naming it)."""
_Held = dict[ProcessId, tuple[list[tuple[TaskId, ...]], list[tuple[TaskId, ...]]]]
"""Each client's active and standby lists as the assignment gave them, never copied: an
answer for 100,000 tasks is checked without a second object per task (issue 16)."""
_Finding = tuple[AssignmentError, str] | None


def _plainly_valid(state: ApplicationState, held: Sequence[_Lists]) -> bool:
    """Whether all of ``_first_fault``'s checks pass, found by whole-set steps (the usual answer),
    for ``held``, every client's lists (the caller has found its clients to be the group's).

    The actives, each listed once in all, are the table's tasks (no active on two clients,
    none unknown, none left out); each client's standbys are distinct, none its own active,
    all known and stateful. ``False`` only means ``_first_fault`` must say what is wrong (or
    find nothing): it names the first fault in its order.
    """
    listed = sum(len(tasks) for active, _ in held for tasks in active)
    every = set(chain.from_iterable(chain.from_iterable(a for a, _ in held)))
    if not (len(every) == listed == len(state.tasks) and every.issuperset(state.tasks)):
        return False
    checkpoint()
    stateless = frozenset(state.stateless_tasks)
    for active, standby in held:
        if not any(standby):
            continue
        mine = set(chain.from_iterable(standby))
        if (
            len(mine) != sum(map(len, standby))
            or not mine.isdisjoint(chain.from_iterable(active))
            or not mine.issubset(every)
            or not mine.isdisjoint(stateless)
        ):
            return False
    return True


def _every(held: _Held, pid: ProcessId) -> Iterator[TaskId]:
    """Every task the client holds, actives then standbys."""
    return chain.from_iterable((*held[pid][0], *held[pid][1]))


def _first_owners(held: _Held, clients: list[ProcessId]) -> dict[TaskId, ProcessId]:
    """Each active task's first client in process order."""
    owners: dict[TaskId, ProcessId] = {}
    for pid in clients:
        for task in chain.from_iterable(held[pid][0]):
            owners.setdefault(task, pid)
    return owners


def _active_on_several_clients(
    held: _Held, clients: list[ProcessId], owners: dict[TaskId, ProcessId]
) -> _Finding:
    doubled = [
        task for pid in clients for task in chain.from_iterable(held[pid][0]) if owners[task] != pid
    ]
    if doubled:
        return (
            AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
            f"task {min(doubled)} is active on several clients",
        )
    return None


def _held_twice(held: _Held, clients: list[ProcessId]) -> _Finding:
    for pid in clients:
        checkpoint()
        tasks = list(_every(held, pid))
        if len(set(tasks)) == len(tasks):
            continue
        counts = Counter(tasks)
        twice = min(t for t, n in counts.items() if n > 1)
        return (
            AssignmentError.TASK_ASSIGNED_TWICE_TO_CLIENT,
            f"client {pid} holds task {twice} twice",
        )
    return None


def _stateless_standby(state: ApplicationState, held: _Held, clients: list[ProcessId]) -> _Finding:
    stateless = frozenset(state.stateless_tasks)  # a set lookup per standby, not a bisection
    if not stateless:
        return None
    for pid in clients:
        checkpoint()
        wrong = [task for task in chain.from_iterable(held[pid][1]) if task in stateless]
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
    every = chain.from_iterable(_every(held, pid) for pid in clients)
    strangers = set(every).difference(state.tasks)  # one pass over the table, no lookups
    if not strangers:
        return None
    for pid in clients:
        checkpoint()
        unknown = [task for task in _every(held, pid) if task in strangers]
        if unknown:
            return AssignmentError.UNKNOWN_TASK_ID, f"client {pid} got unknown task {min(unknown)}"
    return None


def _unassigned_active(state: ApplicationState, owners: dict[TaskId, ProcessId]) -> _Finding:
    missing = [task for task in state.tasks if task not in owners]
    if missing:
        return AssignmentError.ACTIVE_TASK_UNASSIGNED, f"task {min(missing)} has no active client"
    return None
