"""Streams' task offset sums (SubscriptionInfo v7+) read as three columns, no object per task.

One member may report up to ``--max-reported-tasks`` (2,000,000) offset sums, 12 bytes each in
v7-9: a dataclass per task, then a message per task, took a worker to 57 times the request's
size (issue 27). Read here a chunk at a time into ``array``s (16 bytes a task), the caller can
check them and drop the tasks its topology lacks before any object per task exists. A v10+
entry naming a topology is not read here (``None``: the caller reads the message the usual
way); such groups are rare and small.
"""

from __future__ import annotations

import functools
import struct
from array import array
from dataclasses import dataclass
from itertools import repeat

from kassign.kafka.buffer import Reader

__all__ = ["OffsetSumColumns", "read_flat_columns", "read_grouped_columns"]

_CHUNK = 1024
"""Entries unpacked per ``struct`` call: a few dozen kilobytes of ints alive at a time."""
_GROUPED_ENTRY = "iq"  # v7-9 PartitionToOffsetSum: partition, offsetSum
_FLAT_ENTRY = "iiqh"  # v10+ TaskOffsetSum, namedTopology null: group, partition, offsetSum, -1


@dataclass(frozen=True, slots=True)
class OffsetSumColumns:
    """Offset sums in byte order: row ``i`` is task ``subtopologies[i]_partitions[i]`` (no
    named topology) with ``offset_sums[i]``."""

    subtopologies: array[int]  # 'i'
    partitions: array[int]  # 'i'
    offset_sums: array[int]  # 'q'

    def __len__(self) -> int:
        return len(self.offset_sums)


def _empty() -> OffsetSumColumns:
    return OffsetSumColumns(array("i"), array("i"), array("q"))


@functools.lru_cache(maxsize=32)
def _layout(entry: str, count: int) -> struct.Struct:
    return struct.Struct(">" + entry * count)


def _chunks(count: int) -> list[int]:
    full, rest = divmod(count, _CHUNK)
    return [_CHUNK] * full + ([rest] if rest else [])


def read_grouped_columns(r: Reader) -> OffsetSumColumns:
    """The v7-9 ``taskOffsetSums`` (per sub-topology, its partitions' sums) as columns; the
    same bounds checks as ``decode_subscription_info``'s read (``WireError``)."""
    out = _empty()
    for _ in range(r.count("taskOffsetSums", min_size=8)):
        group = r.int32("topicGroupId")
        for n in _chunks(r.count("partitionToOffsetSum", min_size=12)):
            values = r.unpack(_layout(_GROUPED_ENTRY, n), "PartitionToOffsetSum")
            out.subtopologies.extend(repeat(group, n))
            out.partitions.extend(values[0::2])
            out.offset_sums.extend(values[1::2])
    return out


def read_flat_columns(r: Reader) -> OffsetSumColumns | None:
    """The v10+ ``taskOffsetSums`` as columns, or ``None`` (``r`` left anywhere) at the first
    entry whose named topology is not null."""
    out = _empty()
    count = r.count("taskOffsetSums", min_size=18)
    for n in _chunks(count):
        values = r.unpack(_layout(_FLAT_ENTRY, n), "TaskOffsetSum")
        if values[3::4].count(-1) != n:
            return None
        out.subtopologies.extend(values[0::4])
        out.partitions.extend(values[1::4])
        out.offset_sums.extend(values[2::4])
    return out
