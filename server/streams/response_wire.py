"""An ``AssignResponse`` whose client and member lists are protobuf wire bytes.

A client or member of a large group lists tens of thousands of ``TaskId`` and
``TopicPartition`` messages. As messages they cost a protobuf object each: built one by one
and copied in, 100,000 tasks took 100 MB for a 2.5 MB answer; even merged in place they took
17 MB of the response's arena, a sixth of the memory bound for the request that asked (issue
16). So the servicer sends ``WireResponse``: the small fields as a message (``head``: error,
report, explanation) and the lists as the bytes ``SerializeToString`` would write for them,
written here with ``server/protowire.py``. The lists are fields 1 and 2 and the head's fields
3 to 5, so ``lists + head`` is the whole response's serialisation, byte for byte (a test
checks it against ``message().SerializeToString()``). Callers that want to read the lists
(the CLI, tests) ask ``message()``.

    AssignResponse: 1 clients, 2 members, 3 error, 4 report, 5 explanation
    ClientAssignment: 1 process_id, 2 active_tasks, 3 standby_tasks,
        4 followup_rebalance_deadline_ms (int64), 5 rack_id, 6 member_ids, 7 user_end_point
    MemberAssignment: 1 member_id, 2 process_id, 3 active_tasks, 4 standby_tasks,
        5 active_partitions, 6 standby_partitions
    TaskId: 1 subtopology (int32), 2 partition (int32), 3 named_topology (string)
    TopicPartition: 1 topic (string), 2 partition (int32)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kassign.assignor.streams.model import TaskId
from kassign.server.protowire import field, tag, varint, varint_field
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "TASK_CACHE",
    "ClientEntry",
    "MemberEntry",
    "WireResponse",
    "client_entry",
    "member_entry",
    "partition_list",
    "task_list",
]

TASK_CACHE = 4096
"""``TaskId`` bodies kept across calls (about 60 bytes each, with the id)."""
_CLIENTS, _MEMBERS = tag(1), tag(2)
_NAME = tag(3)
_TOPIC = tag(1)


def _utf8(text: str) -> bytes:
    return text.encode()


@lru_cache(maxsize=TASK_CACHE)
def _task(task: TaskId) -> bytes:
    """A ``TaskId``'s body; a task is listed by its client and its member, standbys too, and
    small groups come back call after call, so the bytes are kept (issue 24: the varints of
    these bodies were a tenth of a 12-task call's encoding)."""
    name = task[0].decode("utf-16-be", "surrogatepass").encode() if task[0] else b""
    return varint_field(1, task[1]) + varint_field(2, task[2]) + field(_NAME, name)


def _task_entries(number: int) -> Callable[[TaskId], bytes]:
    """A ``TaskId`` as an entry of repeated field ``number`` (key, length, body), kept as
    ``_task`` keeps bodies: a list is then one join of kept bytes, no step per task."""
    key = tag(number)

    @lru_cache(maxsize=TASK_CACHE)
    def entry(task: TaskId) -> bytes:
        body = _task(task)
        return key + varint(len(body)) + body

    return entry


@lru_cache(maxsize=1024)
def _topic(topic: str) -> bytes:
    """A ``TopicPartition``'s topic field: a large answer lists a topic's partitions by the
    thousand, more than the entries kept."""
    return field(_TOPIC, _utf8(topic))


def _partition_entries(number: int) -> Callable[[str, int], bytes]:
    """A ``TopicPartition`` as an entry of repeated field ``number``, kept likewise."""
    key = tag(number)

    @lru_cache(maxsize=TASK_CACHE)
    def entry(topic: str, partition: int) -> bytes:
        body = _topic(topic) + varint_field(2, partition)
        return key + varint(len(body)) + body

    return entry


_TASK_ENTRIES = {number: _task_entries(number) for number in (2, 3, 4)}
"""By field number: ``ClientAssignment``'s 2 and 3, ``MemberAssignment``'s 3 and 4."""
_PARTITION_ENTRIES = {number: _partition_entries(number) for number in (5, 6)}
"""By field number: ``MemberAssignment``'s 5 and 6."""


def task_list(number: int, tasks: Iterable[TaskId]) -> bytes:
    """Repeated ``TaskId`` field ``number`` holding ``tasks`` in the order given."""
    entry = _TASK_ENTRIES.get(number) or _task_entries(number)
    return b"".join(map(entry, tasks))


def partition_list(number: int, partitions: Iterable[tuple[str, int]]) -> bytes:
    """Repeated ``TopicPartition`` field ``number`` holding ``partitions`` in the order given."""
    entry = _PARTITION_ENTRIES.get(number) or _partition_entries(number)
    return b"".join(entry(topic, partition) for topic, partition in partitions)


@dataclass(frozen=True, slots=True)
class ClientEntry:
    """A ``ClientAssignment``'s fields, its task lists already ordered."""

    process_id: str
    active: Sequence[TaskId]
    standby: Sequence[TaskId]
    followup_rebalance_deadline_ms: int
    rack_id: str
    member_ids: Sequence[str]
    user_end_point: str


def client_entry(entry: ClientEntry) -> bytes:
    """One element of ``AssignResponse.clients``."""
    body = b"".join(
        (
            field(tag(1), _utf8(entry.process_id)),
            task_list(2, entry.active),
            task_list(3, entry.standby),
            varint_field(4, entry.followup_rebalance_deadline_ms),
            field(tag(5), _utf8(entry.rack_id)),
            *(tag(6) + varint(len(m)) + m for m in map(_utf8, entry.member_ids)),
            field(tag(7), _utf8(entry.user_end_point)),
        )
    )
    return _CLIENTS + varint(len(body)) + body


@dataclass(frozen=True, slots=True)
class MemberEntry:
    """A ``MemberAssignment``'s fields, its lists already ordered."""

    member_id: str
    process_id: str
    active: Sequence[TaskId]
    standby: Sequence[TaskId]
    active_partitions: Sequence[tuple[str, int]]
    standby_partitions: Sequence[tuple[str, int]]


def member_entry(entry: MemberEntry) -> bytes:
    """One element of ``AssignResponse.members``."""
    body = b"".join(
        (
            field(tag(1), _utf8(entry.member_id)),
            field(tag(2), _utf8(entry.process_id)),
            task_list(3, entry.active),
            task_list(4, entry.standby),
            partition_list(5, entry.active_partitions),
            partition_list(6, entry.standby_partitions),
        )
    )
    return _MEMBERS + varint(len(body)) + body


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
