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
    "ReportedSums",
    "checked_columns",
    "checked_groups",
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


_NONE = ReportedSums(())


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


def checked_groups(
    groups: Sequence[OffsetSumColumns], known: TaskIds | None
) -> list[ReportedSums] | None:
    """Each report's columns checked as ``info._offset_sums`` checks each sum (ids not
    negative, only -2 and -3 negative among sums, no task twice in one report) and cut to
    ``known``; ``None`` at any fault in any. Every report at once: a group's members send a
    userData each, and numpy's steps cost microseconds each however few the sums. Each test
    counts (``np.count_nonzero``): a reduction such as ``np.any`` costs more on a few sums."""
    sizes = np.array([len(c) for c in groups], dtype=np.intp)
    if not sizes.any():
        return [_NONE] * len(groups)
    sub = np.concatenate([_column(c.subtopologies, np.int32) for c in groups])
    part = np.concatenate([_column(c.partitions, np.int32) for c in groups])
    sums = np.concatenate([_column(c.offset_sums, np.int64) for c in groups])
    if np.count_nonzero((sub | part) < 0):  # either negative sets the sign bit
        return None
    if np.count_nonzero((sums < 0) & (sums != LATEST_OFFSET) & (sums != UNKNOWN_OFFSET_SUM)):
        return None
    keys = (sub.astype(np.int64) << 32) | part
    group = np.repeat(np.arange(len(groups)), sizes)
    order = _by_group_then_key(keys, group, len(groups))
    keys, group = keys[order], group[order]
    if np.count_nonzero((keys[1:] == keys[:-1]) & (group[1:] == group[:-1])):
        return None
    if known is None:
        found, at = np.ones(len(keys), dtype=np.bool_), None
    else:
        found, at = _found(keys, known.unnamed_keys())
    rows, others = order[found], order[~found]
    tasks = _tasks(sub[rows], part[rows], None if at is None else at[found], known)
    pairs = list(zip(tasks, sums[rows].tolist()))
    kept_ends = np.cumsum(np.bincount(group[found], minlength=len(groups))).tolist()
    ignored = np.bincount(group[~found], minlength=len(groups)).tolist()
    other_ends = np.cumsum(ignored).tolist()
    out, start = [], 0
    for i, end in enumerate(kept_ends):
        first: tuple[TaskId, ...] = ()
        if ignored[i]:
            at = other_ends[i] - ignored[i]
            named = others[at : at + min(ignored[i], LISTED)]
            first = tuple(_tasks(sub[named], part[named], None, None))
        out.append(ReportedSums(tuple(pairs[start:end]), ignored[i], first))
        start = end
    return out


def checked_columns(columns: OffsetSumColumns, known: TaskIds | None) -> ReportedSums | None:
    """One report's columns checked and cut (``checked_groups``)."""
    checked = checked_groups([columns], known)
    return None if checked is None else checked[0]
