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
from typing import TypeVar

from kassign.assignor.streams.model import TaskId
from kassign.server.protowire import field, tag, varint, varint_field
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "TASK_CACHE",
    "ClientEntry",
    "Entries",
    "MemberEntry",
    "Memo",
    "WireResponse",
    "client_entry",
    "member_entry",
    "partition_list",
    "task_list",
]

TASK_CACHE = 4096
"""``TaskId`` bodies kept across calls (about 60 bytes each, with the id)."""
_K = TypeVar("_K")
_V = TypeVar("_V")
_CLIENTS, _MEMBERS = tag(1), tag(2)
_NAME = tag(3)
_SUBTOPOLOGY, _PARTITION = varint(1 << 3), varint(2 << 3)  # int32 fields 1 and 2 (both messages)
_TOPIC = tag(1)


def _utf8(text: str) -> bytes:
    return text.encode()


@lru_cache(maxsize=TASK_CACHE)
def _sized_task(task: TaskId) -> bytes:
    """A ``TaskId`` entry without its key (length, body): the key is the list's field number,
    the rest the same in every list, so one value serves all four lists. Kept across calls
    too, for small groups that come back call after call (issue 24: the varints of these
    bodies were a tenth of a 12-task call's encoding); written in one step, as a large call
    writes every task's once."""
    name, subtopology, partition = task
    body = b"".join(
        (
            _SUBTOPOLOGY + varint(subtopology) if subtopology else b"",
            _PARTITION + varint(partition) if partition else b"",
            field(_NAME, name.decode("utf-16-be", "surrogatepass").encode()) if name else b"",
        )
    )
    return varint(len(body)) + body


@lru_cache(maxsize=1024)
def _topic(topic: str) -> bytes:
    """A ``TopicPartition``'s topic field: a large answer lists a topic's partitions by the
    thousand, more than the entries kept."""
    return field(_TOPIC, _utf8(topic))


@lru_cache(maxsize=TASK_CACHE)
def _sized_partition(partition: tuple[str, int]) -> bytes:
    """A ``TopicPartition`` entry without its key, kept likewise."""
    number = partition[1]
    body = _topic(partition[0]) + (_PARTITION + varint(number) if number else b"")
    return varint(len(body)) + body


class Memo(dict[_K, _V]):
    """A dict that computes a missing value once (``__missing__``), so a list of hits is one
    ``map`` in C: a call's cache, where the kept ``lru_cache`` values (4,096) are fewer than a
    large call's tasks and were written again for every list (issue 24)."""

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[_K], _V]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: _K) -> _V:
        value = self[key] = self._compute(key)
        return value


class Entries:
    """One call's task and partition entries, each written once however many lists name it."""

    __slots__ = ("_partitions", "_tasks")

    def __init__(self) -> None:
        self._tasks: Memo[TaskId, bytes] = Memo(_sized_task)
        self._partitions: Memo[tuple[str, int], bytes] = Memo(_sized_partition)

    def task_list(self, number: int, tasks: Sequence[TaskId]) -> bytes:
        """Repeated ``TaskId`` field ``number`` holding ``tasks`` in the order given."""
        key = tag(number)
        return key + key.join(map(self._tasks.__getitem__, tasks)) if tasks else b""

    def partition_list(self, number: int, partitions: Sequence[tuple[str, int]]) -> bytes:
        """Repeated ``TopicPartition`` field ``number`` holding ``partitions`` in order."""
        key = tag(number)
        return key + key.join(map(self._partitions.__getitem__, partitions)) if partitions else b""


def task_list(number: int, tasks: Iterable[TaskId]) -> bytes:
    """Repeated ``TaskId`` field ``number`` holding ``tasks`` in the order given."""
    return Entries().task_list(number, list(tasks))


def partition_list(number: int, partitions: Iterable[tuple[str, int]]) -> bytes:
    """Repeated ``TopicPartition`` field ``number`` holding ``partitions`` in the order given."""
    return Entries().partition_list(number, list(partitions))


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


def client_entry(entry: ClientEntry, entries: Entries | None = None) -> bytes:
    """One element of ``AssignResponse.clients``; ``entries``: the call's (a fresh one alone)."""
    lists = entries or Entries()
    body = b"".join(
        (
            field(tag(1), _utf8(entry.process_id)),
            lists.task_list(2, entry.active),
            lists.task_list(3, entry.standby),
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


def member_entry(entry: MemberEntry, entries: Entries | None = None) -> bytes:
    """One element of ``AssignResponse.members``; ``entries`` as ``client_entry``'s."""
    lists = entries or Entries()
    body = b"".join(
        (
            field(tag(1), _utf8(entry.member_id)),
            field(tag(2), _utf8(entry.process_id)),
            lists.task_list(3, entry.active),
            lists.task_list(4, entry.standby),
            lists.partition_list(5, entry.active_partitions),
            lists.partition_list(6, entry.standby_partitions),
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
