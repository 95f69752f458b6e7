"""Streams' task offset sums (SubscriptionInfo v7+) as three columns, no object per task.

One member may report up to ``--max-reported-tasks`` (2,000,000) offset sums, 12 bytes each in
v7-9: a dataclass per task, then a message per task, took a worker to 57 times the request's
size (issue 27). The compiled core reads them from the userData into one ``bytes`` (16 bytes a
task; ``subscription_info.decode_subscription_columns``), whose columns are views here, so the
caller can check them and drop the tasks its topology lacks before any object per task exists.
A v10+ entry naming a topology is not read that way (the caller reads the message the usual
way); such groups are rare and small.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import TypeAlias

__all__ = ["Column", "OffsetSumColumns", "sum_columns"]

Column: TypeAlias = "array[int] | memoryview"
"""Integers in native order (``array`` or a ``memoryview`` cast to its format)."""


@dataclass(frozen=True, slots=True)
class OffsetSumColumns:
    """Offset sums in byte order: row ``i`` is task ``subtopologies[i]_partitions[i]`` (no
    named topology) with ``offset_sums[i]``."""

    subtopologies: Column  # 'i'
    partitions: Column  # 'i'
    offset_sums: Column  # 'q'

    def __len__(self) -> int:
        return len(self.offset_sums)


def sum_columns(raw: bytes) -> OffsetSumColumns:
    """The columns over one ``bytes`` holding them end to end (int32 topic groups, int32
    partitions, int64 sums, native order: ``kassign_native.subscription_columns``), as views
    (no copy: 16 bytes a sum)."""
    rows = len(raw) // 16
    view = memoryview(raw)
    return OffsetSumColumns(
        view[: 4 * rows].cast("i"), view[4 * rows : 8 * rows].cast("i"), view[8 * rows :].cast("q")
    )
