"""The topology from the request: ``TaskInfo`` values and the task each source partition feeds.

Kafka maps owned partitions back to tasks through the source partitions
(``taskForPartition``); a partition that is the source of two tasks would make that mapping
ambiguous, so it is refused here.

Memory (issue 16): a request may list 100,000 tasks in under 3 MB, so the decoded topology
keeps one index of its own (source partitions by topic) and shares what repeats: topic and
store names, partition numbers and rack sets are one object each per request. It reads the
request without touching empty repeated fields: the protobuf runtime (upb) gives an empty
repeated field storage of its own the first time Python reads it, about 90 bytes a field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import TaskId, TaskLoads
from kassign.assignor.streams.task_table import TaskTable
from kassign.assignor.streams.task_table_builder import Partition, TaskTableBuilder
from kassign.v1 import assignment_pb2 as pb

__all__ = ["TaskIds", "Topology", "decode_task_id", "decode_topology"]


class TaskIds:
    """One ``TaskId`` object per task per request: the topology's own, then any other a
    member reports; the tens of thousands of ids members report then compare by identity.
    ``knows`` (and ``unnamed_keys``, its columnar form) says which the topology has: offset
    sums of the others are dropped as they are decoded (issue 27)."""

    __slots__ = ("_keys", "_others", "_tasks")

    def __init__(self, tasks: TaskTable) -> None:
        self._tasks = tasks
        self._others: dict[TaskId, TaskId] = {}
        self._keys: np.ndarray[Any, np.dtype[np.int64]] | None = None

    def canonical(self, task: TaskId) -> TaskId:
        own = self._tasks.own_id(task)
        return own if own is not None else self._others.setdefault(task, task)

    def own(self, task: TaskId) -> TaskId | None:
        """The topology's object for ``task``, or ``None`` where the topology lacks it."""
        return self._tasks.own_id(task)

    def knows(self, task: TaskId) -> bool:
        return task in self._tasks

    def unnamed_keys(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The topology's tasks without a named topology as ``subtopology << 32 | partition``,
        sorted (built once per request)."""
        if self._keys is None:
            keys = [(t[1] << 32) | t[2] for t in self._tasks.ids if not t[0]]
            self._keys = np.sort(np.array(keys, dtype=np.int64))
        return self._keys


def decode_task_id(
    task: pb.TaskId,
    field: str,
    member: str | None = None,
    known: TaskIds | None = None,
    numbers: dict[int, int] | None = None,
) -> TaskId:
    """A ``TaskId``; Kafka's sub-topology and partition numbers are never negative.
    ``numbers``: one object per number (see ``decode_topology``)."""
    subtopology, partition = task.subtopology, task.partition
    if subtopology < 0 or partition < 0:
        raise InvalidRequest(
            f"negative sub-topology or partition in task {subtopology}_{partition}",
            field=field,
            member=member,
        )
    if numbers is not None:
        subtopology = numbers.setdefault(subtopology, subtopology)
        partition = numbers.setdefault(partition, partition)
    decoded = TaskId(subtopology, partition, task.named_topology or None)
    return decoded if known is None else known.canonical(decoded)


@dataclass(frozen=True, slots=True)
class Topology:
    """Tasks in ``TaskId`` order and the task of every source partition, by topic.

    ``end_offset_sums`` (stateful tasks only) is shared by every client's lags: never mutated.
    """

    tasks: TaskTable
    source_topics: Mapping[str, Mapping[int, TaskId]]
    end_offset_sums: Mapping[TaskId, int]
    loads: TaskLoads
    """The tasks' loads and state bytes as given (issue 25; read with ``balance`` ``LOAD``)."""

    def interned(self) -> TaskIds:
        """A fresh cache for ``decode_task_id``, seeded with the topology's own ids."""
        return TaskIds(self.tasks)


_NO_RACKS: frozenset[str] = frozenset()


class _Shared:
    """Values that repeat across tasks, one object each (see the module's docstring)."""

    __slots__ = ("numbers", "racks", "strings")

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.numbers: dict[int, int] = {}
        self.racks: dict[tuple[str, ...], frozenset[str]] = {}

    def rack_set(self, racks: Sequence[str]) -> frozenset[str]:
        key = tuple(racks)
        found = self.racks.get(key)
        if found is None:
            found = self.racks[key] = frozenset(r for r in key if r) or _NO_RACKS
        return found


_TASK = pb.TaskInfo.DESCRIPTOR.fields_by_name
_PART = pb.TaskTopicPartition.DESCRIPTOR.fields_by_name
_ID, _END_SUM, _PARTITIONS, _STORES, _STATEFUL = (
    _TASK[name]
    for name in (
        "id",
        "changelog_end_offset_sum",
        "topic_partitions",
        "state_store_names",
        "stateful",
    )
)
_COSTS = (_TASK["load"], _TASK["state_bytes"])
_TOPIC, _NUMBER, _SOURCE, _CHANGELOG, _RACKS = (
    _PART[name] for name in ("topic", "partition", "is_source", "is_changelog", "rack_ids")
)
"""Field descriptors: ``dict(message.ListFields())`` keyed by them reads the fields set, giving
empty repeated fields no storage (see the module's docstring), in one C call per message; by
name it cost a Python step per field (issue 24: a tenth of a 10,000-task call)."""


def _partitions(raw: Sequence[pb.TaskTopicPartition], row: int, shared: _Shared) -> list[Partition]:
    """Task ``row``'s partitions, checked, in one step per partition (no call for each); the
    field path is only spelt out for an error."""
    strings, numbers, rack_set = (
        shared.strings.setdefault,
        shared.numbers.setdefault,
        shared.rack_set,
    )
    partitions: list[Partition] = []
    for index, tp in enumerate(raw):
        fields = dict(tp.ListFields())
        topic, partition = fields.get(_TOPIC, ""), fields.get(_NUMBER, 0)
        if not topic:
            raise InvalidRequest("topic is empty", field=f"tasks[{row}].topic_partitions[{index}]")
        if partition < 0:
            raise InvalidRequest(
                f"negative partition {partition}",
                field=f"tasks[{row}].topic_partitions[{index}]",
            )
        racks = fields.get(_RACKS)
        partitions.append(
            (
                strings(topic, topic),
                numbers(partition, partition),
                fields.get(_SOURCE, False),
                fields.get(_CHANGELOG, False),
                rack_set(racks) if racks else _NO_RACKS,
            )
        )
    return partitions


def _refuse_repeats(partitions: Sequence[Partition], task_field: str) -> None:
    """A topic partition listed twice in one task (issue 27: it was merged silently, whichever
    of its flags and racks won)."""
    if len({(topic, partition) for topic, partition, *_ in partitions}) == len(partitions):
        return
    seen: set[tuple[str, int]] = set()
    for j, (topic, partition, *_) in enumerate(partitions):
        if (topic, partition) in seen:
            raise InvalidRequest(
                f"{topic}-{partition} is listed twice",
                field=f"{task_field}.topic_partitions[{j}]",
            )
        seen.add((topic, partition))


def decode_topology(tasks: Sequence[pb.TaskInfo]) -> Topology:
    """Every task once; every source partition feeding exactly one task."""
    shared = _Shared()
    table = TaskTableBuilder()
    loads: dict[TaskId, float] = {}
    state_bytes: dict[TaskId, int] = {}
    topics: dict[str, dict[int, TaskId]] = {}
    numbers = shared.numbers.setdefault
    for i, raw in enumerate(tasks):
        checkpoint()
        fields = dict(raw.ListFields())
        raw_id = fields.get(_ID)
        if raw_id is None:
            raise InvalidRequest("task id is missing", field=f"tasks[{i}].id")
        end_offset_sum = fields.get(_END_SUM, 0)
        if end_offset_sum < 0:
            raise InvalidRequest(
                f"negative changelog end offset sum {end_offset_sum}",
                field=f"tasks[{i}].changelog_end_offset_sum",
            )
        raw_partitions = fields.get(_PARTITIONS)
        partitions = _partitions(raw_partitions, i, shared) if raw_partitions else []
        if len(partitions) > 1:
            _refuse_repeats(partitions, f"tasks[{i}]")
        sub, number = raw_id.subtopology, raw_id.partition
        if sub < 0 or number < 0:  # the field path spelt out for the error only
            decode_task_id(raw_id, f"tasks[{i}].id")
        task = TaskId(numbers(sub, sub), numbers(number, number), raw_id.named_topology or None)
        for topic, partition, is_source, _, _ in partitions:
            if not is_source:
                continue
            by_number = topics.get(topic)
            if by_number is None:
                by_number = topics[topic] = {}
            feeds = by_number.setdefault(partition, task)
            if feeds != task:
                raise InvalidRequest(
                    f"source partition {topic}-{partition} also feeds task {feeds}",
                    field=f"tasks[{i}].topic_partitions",
                )
        if _COSTS[0] in fields or _COSTS[1] in fields:
            _costs(fields.get(_COSTS[0]), fields.get(_COSTS[1]), i, task, loads, state_bytes)
        names = fields.get(_STORES)
        stores = tuple(shared.strings.setdefault(n, n) for n in names) if names else ()
        table.add(task, fields.get(_STATEFUL, False), end_offset_sum, stores, partitions)
    try:
        ordered = table.build()
    except ValueError:  # two tasks share an id: name the first repeat, in request order
        row, first = table.first_duplicate() or (0, 0)
        raise InvalidRequest(
            f"duplicate task id {decode_task_id(tasks[row].id, '')} (also tasks[{first}])",
            field=f"tasks[{row}].id",
        ) from None
    return Topology(ordered, topics, ordered.end_offset_sums(), TaskLoads(loads, state_bytes))


def _costs(
    load: float | None,
    size: int | None,
    row: int,
    task: TaskId,
    loads: dict[TaskId, float],
    state_bytes: dict[TaskId, int],
) -> None:
    """A task's load and state bytes (issue 25), checked: non-negative numbers."""
    if load is not None:
        if not (math.isfinite(load) and load >= 0):
            raise InvalidRequest(
                f"task {task}'s load {load} is not a non-negative number",
                field=f"tasks[{row}].load",
            )
        loads[task] = float(load)
    if size is not None:
        if size < 0:
            raise InvalidRequest(
                f"task {task}'s state bytes {size} are negative", field=f"tasks[{row}].state_bytes"
            )
        state_bytes[task] = int(size)
