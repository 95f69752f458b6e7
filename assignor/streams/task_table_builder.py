"""Rows of a topology's tasks added one by one, straight into a ``TaskTable``'s columns.

Why a module: ``task_table.py`` is the table's reads; building it from ``TaskInfo`` values
(``TaskTable.of``) is a job of its own. The service's decoder fills the same columns from the
request's bytes in the compiled core instead (``server/streams/decode/topology.py``, issue 24).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import pairwise

from kassign.assignor.streams.task import TaskId
from kassign.assignor.streams.task_columns import CHANGELOG, SOURCE
from kassign.assignor.streams.task_table import TaskTable

__all__ = ["Partition", "TaskTableBuilder"]

_SOURCE, _CHANGELOG = SOURCE, CHANGELOG
_NO_RACKS: frozenset[str] = frozenset()


Partition = tuple[str, int, bool, bool, frozenset[str]]
"""(topic, partition, is source, is changelog, replica racks), as ``TaskTopicPartition``."""


class TaskTableBuilder:
    """Rows added in any order, straight into columns; ``build`` sorts them into a
    ``TaskTable`` (without a copy when they came in task order, as requests mostly list them)."""

    __slots__ = (
        "_ends",
        "_flags",
        "_ids",
        "_numbers",
        "_racks",
        "_sets",
        "_starts",
        "_stateful",
        "_stores",
        "_topic_ids",
        "_topics",
    )

    def __init__(self) -> None:
        self._ids: list[TaskId] = []
        self._stateful = bytearray()
        self._ends = array("q")
        self._starts = array("q", [0])
        self._stores: dict[int, tuple[str, ...]] = {}
        self._topic_ids, self._numbers, self._racks = array("i"), array("i"), array("i")
        self._flags = bytearray()
        self._topics: dict[str, int] = {}
        self._sets: dict[frozenset[str], int] = {_NO_RACKS: 0}

    def add(
        self,
        task: TaskId,
        stateful: bool,
        end_offset_sum: int,
        stores: tuple[str, ...],
        partitions: Iterable[Partition],
    ) -> None:
        if stores:
            self._stores[len(self._ids)] = stores
        self._ids.append(task)
        self._stateful.append(stateful)
        self._ends.append(end_offset_sum)
        topics, sets = self._topics, self._sets
        for topic, number, source, changelog, racks in partitions:
            self._topic_ids.append(topics.setdefault(topic, len(topics)))
            self._numbers.append(number)
            self._flags.append((_SOURCE if source else 0) | (_CHANGELOG if changelog else 0))
            self._racks.append(sets.setdefault(racks, len(sets)))
        self._starts.append(len(self._numbers))

    def first_duplicate(self) -> tuple[int, int] | None:
        """The first row (in the order added) whose id an earlier row has, and that row."""
        seen: dict[TaskId, int] = {}
        for row, task in enumerate(self._ids):
            first = seen.setdefault(task, row)
            if first != row:
                return row, first
        return None

    def build(self) -> TaskTable:
        """The table; ``ValueError`` if two rows share an id (``first_duplicate`` names them)."""
        ids = self._ids
        names = (tuple(self._topics), tuple(self._sets))
        if all(a < b for a, b in pairwise(ids)):  # already in task order, ids distinct
            return TaskTable(
                tuple(ids),
                bytes(self._stateful),
                self._ends,
                self._stores,
                self._starts,
                (self._topic_ids, self._numbers, bytes(self._flags), self._racks),
                names,
            )
        order = sorted(range(len(ids)), key=ids.__getitem__)
        if any(ids[a] == ids[b] for a, b in pairwise(order)):
            raise ValueError("two tasks share an id")
        starts, topics, numbers, racks = array("q", [0]), array("i"), array("i"), array("i")
        flags = bytearray()
        for i in order:
            span = slice(self._starts[i], self._starts[i + 1])
            topics += self._topic_ids[span]
            numbers += self._numbers[span]
            flags += self._flags[span]
            racks += self._racks[span]
            starts.append(len(numbers))
        stores = {new: self._stores[old] for new, old in enumerate(order) if old in self._stores}
        return TaskTable(
            tuple(ids[i] for i in order),
            bytes(self._stateful[i] for i in order),
            array("q", (self._ends[i] for i in order)),
            stores,
            starts,
            (topics, numbers, bytes(flags), racks),
            names,
        )
