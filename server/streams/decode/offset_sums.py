"""A member's offset sums cut to the topology's tasks as they are decoded (issue 27).

Kafka's leader ignores offset sums of tasks its topology lacks, and so do we (with a note), but
one member may report 2,000,000 of them: kept as a ``TaskId`` and a pair each until the clients
were built, they took a worker to 57 times the request's size. So the decoder keeps only the
sums of the topology's tasks, with the count and the first few of the others for the note.
userData (v7+, no named topology), as bytes or as messages, is checked here as columns with
numpy, never an object kept per task; where any check fails, ``None`` sends the caller back to the one checker
(``info._offset_sums``), which names the first fault in task order as it always has.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from kassign.assignor.streams.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId
from kassign.kafka.offset_sum_columns import Column, OffsetSumColumns
from kassign.server.streams.decode.topology import TaskIds
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "LISTED",
    "CheckedGroups",
    "ReportedSums",
    "checked_columns",
    "checked_groups",
    "joined_columns",
    "message_columns",
    "split_known",
]

LISTED = 10
"""Tasks the note of ignored offset sums names (``request._listed`` cuts there too)."""


@dataclass(frozen=True, slots=True)
class ReportedSums:
    """Offset sums of the topology's tasks in task order (every sum when no topology was
    given), and how many were ignored, the first ``LISTED`` of those named, in task order."""

    kept: tuple[tuple[TaskId, int], ...]
    ignored: int = 0
    ignored_first: tuple[TaskId, ...] = ()


def split_known(pairs: Iterable[tuple[TaskId, int]], known: TaskIds | None) -> ReportedSums:
    """Checked pairs in the checker's order, cut to ``known``'s topology."""
    if known is None:
        return ReportedSums(tuple(pairs))
    kept: list[tuple[TaskId, int]] = []
    others: list[tuple[TaskId, int]] = []
    for task, offset_sum in pairs:
        (kept if known.knows(task) else others).append((task, offset_sum))
    first = sorted(t for t, _ in others)[:LISTED]  # TaskId order, as the note lists them
    return ReportedSums(tuple(kept), len(others), tuple(first))


def message_columns(sums: Iterable[pb.TaskOffsetSum]) -> OffsetSumColumns | None:
    """Structured offset sums as columns, read in one pass (the request's messages are let go
    once decoded: 2,000,000 sums took 1.5 GB, 58 times the request, kept as pairs); ``None``
    at the first that names a topology."""
    groups, numbers, values = array("i"), array("i"), array("q")
    subtopologies, partitions, offset_sums = groups.append, numbers.append, values.append
    for entry in sums:
        task = entry.task
        if task.named_topology:
            return None
        subtopologies(task.subtopology)
        partitions(task.partition)
        offset_sums(entry.offset_sum)
    return OffsetSumColumns(groups, numbers, values)


def _tasks(
    sub: np.ndarray[Any, Any],
    part: np.ndarray[Any, Any],
    rows: np.ndarray[Any, Any] | None,
    known: TaskIds | None,
) -> list[TaskId]:
    """The tasks of ``sub`` and ``part``: the topology's own objects (``rows``: their rows,
    known) or new ones."""
    if known is not None and rows is not None:
        return known.own_rows(rows.tolist())
    return [TaskId(s, p) for s, p in zip(sub.tolist(), part.tolist())]


def _found(
    keys: np.ndarray[Any, np.dtype[np.int64]], known: np.ndarray[Any, np.dtype[np.int64]]
) -> tuple[np.ndarray[Any, np.dtype[np.bool_]], np.ndarray[Any, np.dtype[np.intp]]]:
    """Which of ``keys`` are in ``known`` (sorted), and where each would sit: a binary search
    each, where ``np.isin`` sorts both again and took a third of a small request's check
    (issue 24)."""
    if not len(known):
        return np.zeros(len(keys), dtype=np.bool_), np.zeros(len(keys), dtype=np.intp)
    at = np.searchsorted(known, keys)
    found: np.ndarray[Any, np.dtype[np.bool_]] = known.take(at, mode="clip") == keys
    return found, at


def _column(values: Column, dtype: type[np.generic]) -> np.ndarray[Any, Any]:
    return np.frombuffer(values, dtype=dtype)


def _by_group_then_key(
    keys: np.ndarray[Any, np.dtype[np.int64]], group: np.ndarray[Any, Any], groups: int
) -> np.ndarray[Any, np.dtype[np.intp]]:
    """The rows by report, then task: a stable sort by task, then by report as 16-bit numbers
    where they fit (numpy sorts those by radix), not ``np.lexsort``, which took four times
    as long on one member's 2,000,000 sums."""
    order = np.argsort(keys, kind="stable")
    if groups > 1:
        by_group = group[order]
        narrow = by_group.astype(np.uint16) if groups <= 1 << 16 else by_group
        order = order[np.argsort(narrow, kind="stable")]
    return order


@dataclass(frozen=True, slots=True)
class CheckedGroups:
    """Every report's checked sums: per report its kept pairs (``ReportedSums.kept``), how
    many were ignored and the first of those named; and the kept sums as group-wide columns,
    report after report, each report's in task order (the clients' lags read these)."""

    kept: list[tuple[tuple[TaskId, int], ...]]
    ignored: list[int]
    ignored_first: list[tuple[TaskId, ...]]
    tasks: list[TaskId]
    """The kept rows' tasks (the topology's own objects where it was given)."""
    rows: np.ndarray[Any, np.dtype[np.intp]] | None
    """The kept rows' positions in the topology's table (``None`` without a topology)."""
    sums: np.ndarray[Any, np.dtype[np.int64]]
    stops: list[int]
    """Where each report's kept rows end."""


def joined_columns(
    raws: Sequence[bytes],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], list[int]]:
    """Many reports' columns (each ``bytes`` as ``offset_sum_columns.sum_columns`` reads it:
    int32 sub-topologies, int32 partitions, int64 sums, end to end) as three group-wide
    columns and each report's size: one join and three gathers, not three views a report."""
    sizes = [len(raw) // 16 for raw in raws]
    joined = b"".join(raws)
    count = len(joined) // 16
    words, longs = np.frombuffer(joined, np.int32), np.frombuffer(joined, np.int64)
    counts = np.array(sizes, dtype=np.intp)
    first = np.repeat(np.cumsum(counts) - counts, counts)  # each row's report's first row
    size = np.repeat(counts, counts)
    at = np.arange(count, dtype=np.intp)
    # a report of n rows starting at row r: its n sub-topologies at word 4r, partitions at
    # word 4r + n, sums at long 2r + n; row r + j is j into each
    sub = words[3 * first + at]
    part = words[3 * first + size + at]
    return sub, part, longs[first + size + at], sizes


def checked_groups(
    sub: np.ndarray[Any, Any],
    part: np.ndarray[Any, Any],
    sums: np.ndarray[Any, Any],
    sizes: Sequence[int],
    known: TaskIds | None,
) -> CheckedGroups | None:
    """Each report's rows (``sizes``: report after report) checked as ``info._offset_sums``
    checks each sum (ids not negative, only -2 and -3 negative among sums, no task twice in
    one report) and cut to ``known``; ``None`` at any fault in any. Every report at once: a
    group's members send a userData each, and numpy's steps cost microseconds each however
    few the sums. Each test counts (``np.count_nonzero``): a reduction such as ``np.any``
    costs more on a few sums."""
    n = len(sizes)
    if not len(sums):
        return CheckedGroups([()] * n, [0] * n, [()] * n, [], None, sums, [0] * n)
    if np.count_nonzero((sub | part) < 0):  # either negative sets the sign bit
        return None
    if np.count_nonzero((sums < 0) & (sums != LATEST_OFFSET) & (sums != UNKNOWN_OFFSET_SUM)):
        return None
    keys = (sub.astype(np.int64) << 32) | part
    group = np.repeat(np.arange(n), sizes)
    same = group[1:] == group[:-1]
    if np.count_nonzero(same & (keys[1:] <= keys[:-1])):
        order = _by_group_then_key(keys, group, n)
        keys, group = keys[order], group[order]
        if np.count_nonzero((keys[1:] == keys[:-1]) & (group[1:] == group[:-1])):
            return None
    else:  # each report's tasks ascend already (the usual order): nothing repeats
        order = np.arange(len(keys))
    if known is None:
        found, at = np.ones(len(keys), dtype=np.bool_), None
    else:
        found, at = _found(keys, known.unnamed_keys())
    rows, others = order[found], order[~found]
    table_rows = None if at is None else at[found]
    tasks = _tasks(sub[rows], part[rows], table_rows, known)
    kept_sums = sums[rows]
    pairs = list(zip(tasks, kept_sums.tolist()))
    stops = np.cumsum(np.bincount(group[found], minlength=n)).tolist()
    kept = [tuple(pairs[a:b]) for a, b in zip([0, *stops], stops)]
    counts = np.bincount(group[~found], minlength=n)
    ignored = counts.tolist()
    first: list[tuple[TaskId, ...]] = [()] * n
    other_stops = np.cumsum(counts).tolist() if len(others) else ignored
    for i in np.flatnonzero(counts).tolist() if len(others) else ():  # rare: a note's words
        begin = other_stops[i] - ignored[i]
        named = others[begin : begin + min(ignored[i], LISTED)]
        first[i] = tuple(_tasks(sub[named], part[named], None, None))
    return CheckedGroups(kept, ignored, first, tasks, table_rows, kept_sums, stops)


def checked_columns(columns: OffsetSumColumns, known: TaskIds | None) -> ReportedSums | None:
    """One report's columns checked and cut (``checked_groups``)."""
    sub, part = _column(columns.subtopologies, np.int32), _column(columns.partitions, np.int32)
    sums = _column(columns.offset_sums, np.int64)
    checked = checked_groups(sub, part, sums, [len(sums)], known)
    if checked is None:
        return None
    return ReportedSums(checked.kept[0], checked.ignored[0], checked.ignored_first[0])
