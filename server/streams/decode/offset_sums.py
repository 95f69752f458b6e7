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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from kassign.assignor.streams.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId
from kassign.kafka.offset_sum_columns import OffsetSumColumns
from kassign.server.streams.decode.topology import TaskIds
from kassign.v1 import assignment_pb2 as pb

__all__ = ["LISTED", "ReportedSums", "checked_columns", "message_columns", "split_known"]

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
    sub: np.ndarray[Any, Any], part: np.ndarray[Any, Any], known: TaskIds | None
) -> list[TaskId]:
    ids = [TaskId(s, p) for s, p in zip(sub.tolist(), part.tolist())]
    if known is None:
        return ids
    return [known.own(t) or t for t in ids]


def _found(
    keys: np.ndarray[Any, np.dtype[np.int64]], known: np.ndarray[Any, np.dtype[np.int64]]
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which of ``keys`` are in ``known`` (both sorted): a binary search each, where
    ``np.isin`` sorts both again and took a third of a small request's check (issue 24)."""
    if not len(known):
        return np.zeros(len(keys), dtype=np.bool_)
    found: np.ndarray[Any, np.dtype[np.bool_]] = (
        known.take(np.searchsorted(known, keys), mode="clip") == keys
    )
    return found


def checked_columns(columns: OffsetSumColumns, known: TaskIds | None) -> ReportedSums | None:
    """The columns checked as ``info._offset_sums`` checks each sum (ids not negative, only -2
    and -3 negative among sums, no task twice) and cut to ``known``; ``None`` at any fault.
    Each test counts (``np.count_nonzero``): a reduction such as ``np.any`` or ``min`` costs a
    few microseconds even on six sums, and a small call checks a userData per process."""
    sub = np.frombuffer(columns.subtopologies, dtype=np.int32)
    part = np.frombuffer(columns.partitions, dtype=np.int32)
    sums = np.frombuffer(columns.offset_sums, dtype=np.int64)
    if not len(sums):
        return ReportedSums(())
    if np.count_nonzero((sub | part) < 0):  # either negative sets the sign bit
        return None
    if np.count_nonzero((sums < 0) & (sums != LATEST_OFFSET) & (sums != UNKNOWN_OFFSET_SUM)):
        return None
    keys = (sub.astype(np.int64) << 32) | part
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if np.count_nonzero(keys[1:] == keys[:-1]):
        return None
    if known is None:
        rows, others = order, order[:0]
    else:
        found = _found(keys, known.unnamed_keys())
        rows, others = order[found], order[~found]
    del keys, order
    kept = tuple(zip(_tasks(sub[rows], part[rows], known), sums[rows].tolist()))
    first = others[:LISTED]
    return ReportedSums(kept, len(others), tuple(_tasks(sub[first], part[first], None)))
