"""The topology from the request: ``TaskInfo`` values and the task each source partition feeds.

Kafka maps owned partitions back to tasks through the source partitions
(``taskForPartition``); a partition that is the source of two tasks would make that mapping
ambiguous, so it is refused here.

The tasks are read from the request's bytes by the compiled core, every task at once, into
the ``TaskTable``'s columns, with every check of this module (issue 24: a Python step per task
and field cost about 800 ms of a 100,000-task call): ``task_columns`` reads, ``decode_topology``
words the first check failed or makes the table's ids and source index.

Memory (issue 16): a request may list 100,000 tasks in under 3 MB, so the decoded topology
keeps one index of its own (source partitions by topic) and shares what repeats: topic and
store names, partition numbers and rack sets are one object each per request.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import Any, NoReturn

import kassign_native
import numpy as np
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import TaskId, TaskLoads
from kassign.assignor.streams.task_table import TaskTable
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "TaskColumns",
    "TaskIds",
    "Topology",
    "at_rows",
    "decode_task_id",
    "decode_topology",
    "task_columns",
]


def at_rows(ids: tuple[TaskId, ...], rows: list[int]) -> list[TaskId]:
    """``ids[r]`` for each of ``rows``: one ``itemgetter`` call (half of a ``map`` over
    ``__getitem__`` on 20,000 rows)."""
    if len(rows) < 2:
        return [ids[r] for r in rows]
    return list(itemgetter(*rows)(ids))


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

    def own_rows(self, rows: list[int]) -> list[TaskId]:
        """The topology's objects at ``rows`` (positions in ``unnamed_keys``: the unnamed
        tasks sort first, so these are the table's rows too)."""
        return at_rows(self._tasks.ids, rows)

    def knows(self, task: TaskId) -> bool:
        return task in self._tasks

    def unnamed_keys(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The topology's tasks without a named topology as ``subtopology << 32 | partition``,
        sorted (built once per request)."""
        if self._keys is None:
            ids, count = self._tasks.ids, len(self._tasks)
            named = np.fromiter(map(bool, map(itemgetter(0), ids)), np.bool_, count)
            sub = np.fromiter(map(itemgetter(1), ids), np.int64, count)
            part = np.fromiter(map(itemgetter(2), ids), np.int64, count)
            self._keys = np.sort(((sub << 32) | part)[~named])
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
    source_rows: tuple[tuple[str, Sequence[int], bytes], ...]
    """The source partitions as the compiled read gave them: per topic its partition numbers
    and their tasks' rows (int64 bytes), read as columns (``owned_tasks``)."""
    end_offset_sums: Mapping[TaskId, int]
    loads: TaskLoads
    """The tasks' loads and state bytes as given (issue 25; read with ``balance`` ``LOAD``)."""
    stateful: bytes
    """Per task in task order, 1 where stateful (the table's column)."""
    ends: array[int]
    """Per task in task order, its changelog end-offset sum (the table's column)."""

    @property
    def source_topics(self) -> dict[str, dict[int, TaskId]]:
        """The task of every source partition, by topic, as dicts: made when read (a fresh
        group's decode never does; a dict per topic cost 2 ms of 10,000 tasks' decode)."""
        by_row = self.tasks.ids.__getitem__
        return {
            topic: dict(zip(by_number, map(by_row, array("q", rows))))
            for topic, by_number, rows in self.source_rows
        }

    def stateful_ends(self) -> dict[TaskId, int]:
        """Every stateful task's end-offset sum as a dict, for reading members' offset sums:
        a lookup each, where ``end_offset_sums`` bisects the table (made only when a member
        reported some)."""
        ends = self.tasks.end_offset_sums_of(self.tasks.ids)
        return dict(compress(zip(self.tasks.ids, ends), self.stateful))

    def interned(self) -> TaskIds:
        """A fresh cache for ``decode_task_id``, seeded with the topology's own ids."""
        return TaskIds(self.tasks)


_NO_RACKS: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class TaskColumns:
    """The request's tasks as the compiled core read them from its bytes (``request_tasks``,
    ``assignor/native/src/tasks.rs``), checked: what the limits read (per task in request
    order), the first check failed, and without one the table's columns in task order."""

    counts: array[int]
    """Per task, its topic partitions."""
    longest: array[int]
    """Per task, its longest string's UTF-8 bytes (named topology, stores, topics, racks)."""
    failure: tuple[Any, ...] | None
    table: tuple[Any, ...] | None


def task_columns(data: bytes) -> TaskColumns:
    """The tasks of ``data``, an ``AssignRequest``'s bytes (its other fields skipped), read
    at once by the compiled core; protobuf parsed the same bytes first, so a wire fault here
    means the caller's bytes and message differ."""
    try:
        counts, longest, failure, table = kassign_native.request_tasks(data, TaskId)
    except ValueError as exc:
        raise InvalidRequest(f"request bytes: {exc}", field="tasks") from None
    return TaskColumns(array("q", counts), array("q", longest), failure, table)


def _refuse(failure: tuple[Any, ...]) -> NoReturn:
    """The first check the compiled read found failing, worded (its order: docs/decoding.md)."""
    code, row, index, value, real, topic, partition, task, other = failure
    at = f"tasks[{row}]"
    if code == "id":
        raise InvalidRequest("task id is missing", field=f"{at}.id")
    if code == "end":
        raise InvalidRequest(
            f"negative changelog end offset sum {value}", field=f"{at}.changelog_end_offset_sum"
        )
    if code == "topic":
        raise InvalidRequest("topic is empty", field=f"{at}.topic_partitions[{index}]")
    if code == "partition":
        raise InvalidRequest(f"negative partition {value}", field=f"{at}.topic_partitions[{index}]")
    if code == "twice":
        raise InvalidRequest(
            f"{topic}-{partition} is listed twice", field=f"{at}.topic_partitions[{index}]"
        )
    if code == "task":
        sub, part, name = task
        decode_task_id(pb.TaskId(subtopology=sub, partition=part, named_topology=name), f"{at}.id")
    if code == "source":
        raise InvalidRequest(
            f"source partition {topic}-{partition} also feeds task {TaskId(*other)}",
            field=f"{at}.topic_partitions",
        )
    if code == "load":
        raise InvalidRequest(
            f"task {TaskId(*task)}'s load {real} is not a non-negative number",
            field=f"{at}.load",
        )
    if code == "state_bytes":
        raise InvalidRequest(
            f"task {TaskId(*task)}'s state bytes {value} are negative", field=f"{at}.state_bytes"
        )
    if code == "duplicate":
        raise InvalidRequest(
            f"duplicate task id {TaskId(*task)} (also tasks[{index}])", field=f"{at}.id"
        )
    raise AssertionError(f"unknown topology check {code!r}")


def decode_topology(columns: TaskColumns) -> Topology:
    """Every task once; every source partition feeding exactly one task (the checks ran in
    the compiled read, in request order; the first failed is raised here)."""
    if columns.failure is not None:
        _refuse(columns.failure)
    assert columns.table is not None
    (ids, stateful, ends, stores, starts, topics, numbers, flags, racks) = columns.table[:9]
    topic_names, rack_sets, sources, loads, sizes = columns.table[9:]
    sets = (_NO_RACKS, *(frozenset(s) for s in rack_sets))
    end_sums = array("q", ends)
    table = TaskTable(
        ids,
        stateful,
        end_sums,
        dict(stores),
        array("q", starts),
        (array("i", topics), array("i", numbers), flags, array("i", racks)),
        (tuple(topic_names), sets),
        ordered=True,  # the compiled read sorted them and refused a repeat
    )
    task_loads = TaskLoads({ids[r]: v for r, v in loads}, {ids[r]: v for r, v in sizes})
    rows_by_topic = tuple((topic_names[t], by_number, rows) for t, by_number, rows in sources)
    return Topology(table, rows_by_topic, table.end_offset_sums(), task_loads, stateful, end_sums)
