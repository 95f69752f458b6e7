"""A topology's tasks stored by column: ``Mapping[TaskId, TaskInfo]`` at a fraction of the memory.

A request may list 100,000 tasks in under 3 MB. As a dict of ``TaskInfo`` values, each with
its tuple of ``TaskTopicPartition``, they took about 250 bytes a task beyond their ids (issue
16's bound is 20 bytes of memory per byte of request). Here a task is a row: a flag, an
end-offset sum, and its partitions as rows of a second table (topic, number, flags, racks),
with topic names and rack sets stored once. ``TaskInfo`` values are built when read; an
assignor that only needs ids, the stateful flag or end offsets reads them from the columns.

Keys are in task order (the table is sorted when built) and looked up by bisection, so the
table holds no hash index either. It reads like the dict it replaces, and equals one with the
same items.

A small table (``SMALL_TABLE`` tasks or fewer, what most calls carry) does keep a hash index
and the ``TaskInfo`` values it has built: a 12-task call looked tasks up about 250 times and
built their ``TaskInfo`` 40 times, a seventh of its CPU (issue 24), while the memory bound is
about large tables. Neither changes what any read returns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, KeysView, Mapping, Sequence
from itertools import compress
from typing import TypeVar, overload

from kassign.assignor.streams.task import TaskId, TaskInfo, TaskTopicPartition, positions
from kassign.assignor.streams.task_columns import CHANGELOG, SOURCE, PartitionColumns

__all__ = ["SMALL_TABLE", "TaskTable"]

_FLIPPED = bytes([1, 0]) + bytes(254)
"""A ``bytes.translate`` table swapping the stateful column's flags (0 and 1)."""

SMALL_TABLE = 1024
"""Up to this many tasks a table keeps a hash index and its built ``TaskInfo`` values."""

_T = TypeVar("_T")
_SOURCE, _CHANGELOG = SOURCE, CHANGELOG


class TaskTable(Mapping[TaskId, TaskInfo]):
    """Tasks in ``TaskId`` order, by column; read-only. Build with ``TaskTable.of`` or a
    ``TaskTableBuilder``."""

    __slots__ = (
        "_built",
        "_ends",
        "_flags",
        "_ids",
        "_keys",
        "_numbers",
        "_position",
        "_rack_sets",
        "_racks",
        "_starts",
        "_stateful",
        "_stores",
        "_topic_names",
        "_topics",
    )

    def __init__(
        self,
        ids: tuple[TaskId, ...],
        stateful: bytes,
        ends: array[int],
        stores: Mapping[int, tuple[str, ...]],
        starts: array[int],
        partitions: tuple[array[int], array[int], bytes, array[int]],
        names: tuple[tuple[str, ...], tuple[frozenset[str], ...]],
        *,
        ordered: bool = False,
    ) -> None:
        """Columns already in task order (``TaskTableBuilder.build`` makes them); ``ordered``:
        the caller vouches the ids strictly increase (``positions``)."""
        self._ids, self._stateful, self._ends, self._stores = ids, stateful, ends, stores
        small = len(ids) <= SMALL_TABLE
        # by bisection (the ids are sorted), or by a hash index when small
        index = {t: i for i, t in enumerate(ids)} if small else None
        self._position = index.get if index is not None else positions(ids, ordered=ordered)
        self._keys = index.keys() if index is not None else None
        self._built: dict[int, TaskInfo] | None = {} if small else None
        self._starts = starts
        self._topics, self._numbers, self._flags, self._racks = partitions
        self._topic_names, self._rack_sets = names

    @staticmethod
    def of(tasks: Iterable[TaskInfo]) -> TaskTable:
        """The table of ``tasks`` in any order (of two with one id, the later, as in a dict)."""
        from kassign.assignor.streams.task_table_builder import TaskTableBuilder  # imports us

        builder = TaskTableBuilder()
        for info in {t.id: t for t in tasks}.values():
            builder.add(
                info.id,
                info.stateful,
                info.changelog_end_offset_sum,
                info.state_store_names,
                [
                    (p.topic, p.partition, p.is_source, p.is_changelog, p.rack_ids)
                    for p in info.topic_partitions
                ],
            )
        return builder.build()

    # -- Mapping ---------------------------------------------------------------------------

    def _index(self, task: object) -> int:
        i = self._position(task) if isinstance(task, TaskId) else None
        return -1 if i is None else i

    def __getitem__(self, task: TaskId) -> TaskInfo:
        i = self._position(task) if isinstance(task, TaskId) else None
        if i is None:
            raise KeyError(task)
        return self.info_at(i)

    def get(self, task: TaskId, default: _T | None = None) -> TaskInfo | _T | None:  # type: ignore[override]
        """``Mapping.get`` without raising and catching ``KeyError`` for a missing task."""
        i = self._position(task) if isinstance(task, TaskId) else None
        return default if i is None else self.info_at(i)

    def __contains__(self, task: object) -> bool:
        return isinstance(task, TaskId) and self._position(task) is not None

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._ids)

    def keys(self) -> KeysView[TaskId]:
        """The ids, in task order; a small table's are its index's, so ``in`` them is a lookup
        in C (``in`` the table is a Python call: loops over a call's tasks ask it first)."""
        return self._keys if self._keys is not None else KeysView(self)

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"TaskTable({len(self._ids)} tasks)"

    def __reduce__(self) -> tuple[type[TaskTable], tuple[object, ...]]:
        """Pickle by columns (Spark ships states to workers)."""
        return (
            TaskTable,
            (
                self._ids,
                self._stateful,
                self._ends,
                dict(self._stores),
                self._starts,
                (self._topics, self._numbers, self._flags, self._racks),
                (self._topic_names, self._rack_sets),
            ),
        )

    # -- by position (no lookup, no TaskInfo) ------------------------------------------------

    @property
    def ids(self) -> tuple[TaskId, ...]:
        return self._ids

    @property
    def stateful_flags(self) -> bytes:
        """The stateful column: a byte per task in task order, 1 if stateful, else 0."""
        return self._stateful

    def own_id(self, task: TaskId) -> TaskId | None:
        """The table's own object equal to ``task`` (no ``TaskInfo`` built), or ``None``."""
        i = self._position(task)
        return None if i is None else self._ids[i]

    def info_at(self, i: int) -> TaskInfo:
        built = self._built
        if built is None:
            return self._info_at(i)
        info = built.get(i)
        if info is None:
            info = built[i] = self._info_at(i)
        return info

    def _info_at(self, i: int) -> TaskInfo:
        names, numbers, flags, racks, sets = (
            self._topic_names,
            self._numbers,
            self._flags,
            self._racks,
            self._rack_sets,
        )
        partitions = tuple(
            [
                TaskTopicPartition(
                    names[self._topics[p]],
                    numbers[p],
                    bool(flags[p] & _SOURCE),
                    bool(flags[p] & _CHANGELOG),
                    sets[racks[p]],
                )
                for p in range(self._starts[i], self._starts[i + 1])
            ]
        )
        return TaskInfo(
            self._ids[i],
            bool(self._stateful[i]),
            self._stores.get(i, ()),
            partitions,
            self._ends[i],
        )

    def partition_columns(self) -> PartitionColumns:
        """The partition columns, shared (the table is read-only)."""
        return PartitionColumns(
            self._starts,
            self._topics,
            self._numbers,
            self._flags,
            self._racks,
            self._topic_names,
            self._rack_sets,
        )

    def rows_of(self, tasks: Sequence[TaskId]) -> list[int]:
        """Each task's position in the table, -1 for one it does not hold.

        The table's own order (the common case: every task, or every stateful one of a
        topology of stateful tasks) is recognised without a lookup; a few tasks are found by
        bisection, many by one index of the table built for this call (a dict of every task
        costs less than bisecting each of them, and is let go when the call returns).
        """
        ids = self._ids
        if len(tasks) == len(ids) and (tasks is ids or tuple(tasks) == ids):
            return list(range(len(ids)))
        if len(tasks) * 8 < len(ids):
            return [self._index(t) for t in tasks]
        index = dict(zip(ids, range(len(ids))))
        return [index.get(t, -1) for t in tasks]

    def is_stateful(self, task: TaskId) -> bool:
        """Whether the table holds ``task`` and it is stateful (no ``TaskInfo`` built)."""
        i = self._index(task)
        return i >= 0 and bool(self._stateful[i])

    def is_stateless(self, task: TaskId) -> bool:
        """Whether the table holds ``task`` and it is stateless (no ``TaskInfo`` built)."""
        i = self._position(task) if isinstance(task, TaskId) else None
        return i is not None and not self._stateful[i]

    def stateful_ids(self, stateful: bool = True) -> tuple[TaskId, ...]:
        """The stateful (or stateless) tasks, in task order: picked by the flag column itself
        (``compress``), not a Python step per task (issue 24)."""
        flags = self._stateful if stateful else self._stateful.translate(_FLIPPED)
        return tuple(compress(self._ids, flags))

    def end_offset_sum(self, task: TaskId) -> int:
        i = self._index(task)
        if i < 0:
            raise KeyError(task)
        return self._ends[i]

    def end_offset_sums_of(self, tasks: Sequence[TaskId]) -> array[int]:
        """``end_offset_sum`` of each task, their rows found once (``rows_of``), 8 bytes each."""
        if tasks is self._ids or tuple(tasks) == self._ids:
            return array("q", self._ends)
        rows, ends = self.rows_of(tasks), self._ends
        if rows and min(rows) < 0:
            raise KeyError(tasks[rows.index(-1)])
        return array("q", (ends[i] for i in rows))

    def end_offset_sums(self) -> Mapping[TaskId, int]:
        """The changelog end-offset sum of every stateful task (what each client's lags need)."""
        return _EndOffsetSums(self)

    def source_partitions(self, task: TaskId) -> list[tuple[str, int]]:
        """The task's source partitions as (topic, partition), in the order listed."""
        i = self._index(task)
        if i < 0:
            return []
        names, flags = self._topic_names, self._flags
        return [
            (names[self._topics[p]], self._numbers[p])
            for p in range(self._starts[i], self._starts[i + 1])
            if flags[p] & _SOURCE
        ]

    def values(self) -> _Values:  # type: ignore[override]
        return _Values(self)

    def items(self) -> _Items:  # type: ignore[override]
        return _Items(self)


class _ByPosition(Sequence[_T]):
    """A view of the table read by position (``Mapping``'s views would look every key up)."""

    __slots__ = ("_table",)

    def __init__(self, table: TaskTable) -> None:
        self._table = table

    def _at(self, i: int) -> _T:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, i: int) -> _T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[_T]: ...
    def __getitem__(self, i: int | slice) -> _T | Sequence[_T]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(len(self))[i]]
        return self._at(range(len(self))[i])

    def __iter__(self) -> Iterator[_T]:
        return map(self._at, range(len(self)))


class _Values(_ByPosition[TaskInfo]):
    __slots__ = ()

    def _at(self, i: int) -> TaskInfo:
        return self._table.info_at(i)


class _Items(_ByPosition[tuple[TaskId, TaskInfo]]):
    __slots__ = ()

    def _at(self, i: int) -> tuple[TaskId, TaskInfo]:
        return (self._table.ids[i], self._table.info_at(i))


class _EndOffsetSums(Mapping[TaskId, int]):
    """A table's stateful tasks and their end-offset sums, read from its columns."""

    __slots__ = ("_len", "_table")

    def __init__(self, table: TaskTable) -> None:
        self._table = table
        self._len = sum(table._stateful)

    def __getitem__(self, task: TaskId) -> int:
        i = self._table._index(task)
        if i < 0 or not self._table._stateful[i]:
            raise KeyError(task)
        return self._table._ends[i]

    def get(self, task: TaskId, default: _T | None = None) -> int | _T | None:  # type: ignore[override]
        """``Mapping.get`` without raising and catching ``KeyError`` for a missing task."""
        table = self._table
        i = table._position(task) if isinstance(task, TaskId) else None
        return table._ends[i] if i is not None and table._stateful[i] else default

    def __contains__(self, task: object) -> bool:
        table = self._table
        i = table._position(task) if isinstance(task, TaskId) else None
        return i is not None and bool(table._stateful[i])

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._table.stateful_ids())

    def __len__(self) -> int:
        return self._len
