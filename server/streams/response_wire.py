"""An ``AssignResponse`` whose client and member lists are protobuf wire bytes.

A client or member of a large group lists tens of thousands of ``TaskId`` and
``TopicPartition`` messages. As messages they cost a protobuf object each: built one by one
and copied in, 100,000 tasks took 100 MB for a 2.5 MB answer; even merged in place they took
17 MB of the response's arena, a sixth of the memory bound for the request that asked (issue
16). So the servicer sends ``WireResponse``: the small fields as a message (``head``: error,
report, explanation) and the lists as the bytes ``SerializeToString`` would write for them.
The lists are fields 1 and 2 and the head's fields 3 to 5, so ``lists + head`` is the whole
response's serialisation, byte for byte (a test checks it against
``message().SerializeToString()``). Callers that want to read the lists (the CLI, tests) ask
``message()``.

The lists are written by the compiled core, every client and member in one call
(``kassign_native.streams_lists``, ``assignor/native/src/streams_wire.rs``; issue 24): written
here an entry at a time, a 10,000-task answer took 210 ms of its call's 560, and a per-call
memo of the entries, which halved that, held 18-26 MB at 100,000 tasks. ``table_lists`` orders
each list by the task table and reads each member's partitions from the table's columns;
``client_entry`` and ``member_entry`` write one entry as given.

    AssignResponse: 1 clients, 2 members, 3 error, 4 report, 5 explanation
    ClientAssignment: 1 process_id, 2 active_tasks, 3 standby_tasks,
        4 followup_rebalance_deadline_ms (int64), 5 rack_id, 6 member_ids, 7 user_end_point
    MemberAssignment: 1 member_id, 2 process_id, 3 active_tasks, 4 standby_tasks,
        5 active_partitions, 6 standby_partitions
    TaskId: 1 subtopology (int32), 2 partition (int32), 3 named_topology (string)
    TopicPartition: 1 topic (string), 2 partition (int32)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.task_table import TaskTable
from kassign.v1 import assignment_pb2 as pb
from kassign_native import streams_lists

__all__ = [
    "ClientEntry",
    "MemberEntry",
    "WireResponse",
    "client_entry",
    "member_entry",
    "table_lists",
]


class ClientEntry(NamedTuple):
    """A ``ClientAssignment``'s fields; its task lists in the answer's order, or in any order
    for ``table_lists``, which orders them. A tuple, as the compiled writer reads it (a frozen
    dataclass took 1-4 us to build, per client of a 5,000-client answer)."""

    process_id: str
    active: Sequence[TaskId]
    standby: Sequence[TaskId]
    followup_rebalance_deadline_ms: int
    rack_id: str
    member_ids: Sequence[str]
    user_end_point: str


class MemberEntry(NamedTuple):
    """A ``MemberAssignment``'s fields, its lists as ``ClientEntry``'s; its partitions as
    given, or ``None``: for ``table_lists``, the sources of its tasks in the table (for
    ``member_entry``, none)."""

    member_id: str
    process_id: str
    active: Sequence[TaskId]
    standby: Sequence[TaskId]
    active_partitions: Sequence[tuple[str, int]] | None = None
    standby_partitions: Sequence[tuple[str, int]] | None = None


def table_lists(
    table: TaskTable, clients: Sequence[ClientEntry], members: Sequence[MemberEntry]
) -> bytes:
    """``AssignResponse``'s ``clients`` then ``members`` in the order given, each task list in
    the answer's order: the table's tasks in task order, then tasks it lacks (only in a
    rejected assignment) in task order; a member's partitions, unless given, the source
    partitions of its tasks in the table, sorted, each once."""
    columns = table.partition_columns()
    return streams_lists(
        (
            table.ids,
            columns.starts,
            columns.topics,
            columns.numbers,
            columns.flags,
            columns.topic_names,
        ),
        clients,
        members,
    )


def client_entry(entry: ClientEntry) -> bytes:
    """One element of ``AssignResponse.clients``, its lists as given."""
    return streams_lists(None, [entry], [])


def member_entry(entry: MemberEntry) -> bytes:
    """One element of ``AssignResponse.members``, its lists and partitions as given."""
    return streams_lists(None, [], [entry])


@dataclass(frozen=True, slots=True)
class WireResponse:
    """An ``AssignResponse`` as ``head`` (error, report, explanation) and ``lists`` (clients
    and members as wire bytes); ``members`` and ``first_followup_ms`` are what the call log
    reads of the lists."""

    head: pb.AssignResponse
    lists: bytes
    members: int
    first_followup_ms: int

    @property
    def report(self) -> pb.AssignmentReport:
        return self.head.report

    @property
    def error(self) -> pb.AssignmentError:
        return self.head.error

    def SerializeToString(self, *, deterministic: bool = False) -> bytes:  # grpc calls this name
        """The response's bytes: the lists (fields 1, 2), then the head (fields 3-5)."""
        return self.lists + self.head.SerializeToString(deterministic=deterministic)

    def message(self) -> pb.AssignResponse:
        """The whole response as a message (for callers that read the lists)."""
        response = pb.AssignResponse.FromString(self.lists)
        response.MergeFrom(self.head)
        return response
