"""Thread distribution: each client's tasks spread over its consumers (stream threads).

Kafka's ``StreamsPartitionAssignor.assignTasksToThreads``, run three times per client with a
shared per-consumer count, so the total stays balanced: stateful actives, then standbys, then
stateless actives. Each run

- first gives every consumer the tasks it had before (least lag first, then task id), up to
  ``floor(total so far / consumers)`` tasks;
- then deals the remaining tasks, in task order, to consumers still under that floor, in
  member-id order, round-robin (which interleaves sub-topologies);
- then gives what is left one each to consumers at the floor, to a previous owner first (of
  those that had a task but were full, the last in member-id order, as Kafka's map keeps).

A task listed twice in a caller's list is dealt once (the floor counts the list as given). A
lone consumer gets every task, sorted, whatever it had (its history is not read). Member ids
are distinct in a request (the decoder checks); a library caller's client giving two
consumers one id has them merged into one member, the later's history kept.

"Had before" for a stateful task is the consumer's ``previous_stateful`` (plus
``previous_active``), ordered by the client's lag; for a stateless task it is
``previous_active``, which Kafka ignores: keeping it avoids a needless cooperative revocation
and cannot unbalance, as the floor still caps it. Where Kafka walks a ``PriorityQueue``'s
internal array or a hash set we walk task order.

The compiled core runs it (``kassign_native.thread_distribution``, ``assignor/native/src/
threads.rs``; issue 24): the whole group in one pass over the tasks as rows of the task
table (the table's own ids found by address), the clients' consumers as columns, the runs
without the GIL, and every ``MemberAssignment`` made there (per client in Python it took 20 ms
of a 10,000-task call, 3-5 here; a lone consumer's sorted tuple is kept, not copied). It is
bounded by the group's tasks and what its consumers had (about 6 ms at 100,000 tasks, 10 at
10,000 with history): the caller's ``checkpoint`` runs once before it, not inside.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.lags import local_lags
from kassign.assignor.streams.model import ApplicationState, TaskId, TaskInfo, TaskTable
from kassign.assignor.streams.result import KafkaStreamsAssignment, MemberAssignment, TaskAssignment
from kassign_native import thread_distribution

__all__ = ["distribute_tasks"]

_NOT_IN_TOPOLOGY = 2
"""A row's kind for a task the topology lacks (``thread_distribution``'s third kind)."""


def distribute_tasks(
    state: ApplicationState, assignment: TaskAssignment
) -> tuple[MemberAssignment, ...]:
    """Every consumer's tasks (interface 3), sorted by member id; unknown clients are skipped.

    A task the topology lacks (only in a library caller's rejected assignment) is spread with
    the stateless actives and never kept from before.
    """
    checkpoint()
    ids, kinds = _rows(state.tasks)
    clients = state.clients if type(state.clients) is dict else dict(state.clients)
    members = thread_distribution(
        ids, kinds, assignment.assignments, clients, MemberAssignment, local_lags
    )
    if members is None:
        ids, kinds = _with_unknown(ids, kinds, assignment.assignments)
        members = thread_distribution(
            ids, kinds, assignment.assignments, clients, MemberAssignment, local_lags
        )
    if members is None:  # cannot happen: every listed task now has a row
        raise ValueError("thread distribution: a listed task has no row")
    return members


def _rows(tasks: Mapping[TaskId, TaskInfo]) -> tuple[tuple[TaskId, ...], bytes]:
    """The tasks in task order and a kind each (1 stateful, 0 stateless): a table's columns."""
    if isinstance(tasks, TaskTable):
        return tasks.ids, tasks.stateful_flags
    ids = tuple(sorted(tasks))
    return ids, bytes(tasks[t].stateful for t in ids)


def _with_unknown(
    ids: tuple[TaskId, ...], kinds: bytes, given: Iterable[KafkaStreamsAssignment]
) -> tuple[tuple[TaskId, ...], bytes]:
    """``_rows`` with the tasks ``given`` lists that the topology lacks, in task order."""
    known = dict(zip(ids, kinds, strict=True))
    listed = {t for a in given for t in (*a.active, *a.standby)}
    merged = tuple(sorted(known.keys() | listed))
    return merged, bytes(known.get(t, _NOT_IN_TOPOLOGY) for t in merged)
