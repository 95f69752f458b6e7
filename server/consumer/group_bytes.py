"""A whole group's ConsumerProtocolAssignment bytes at once, from sorted partition lists.

The bytes ``encode_consumer_assignment(assignment_for(partitions))`` writes for each list
(version 3, null userData, as a Kafka leader sends its own assignors' answers), written for all
members together: a large group's members mostly get a partition or two of each topic, so
per-member and per-entry Python steps cost more than the bytes themselves. The lists are laid
end to end (``FlatPartitions``); numpy finds where each topic's run starts; every piece (an
entry's head: topic name and count; a partition's number) is looked up in a table of the
distinct ones, the pieces are put in order with two array assignments, and each member's bytes
are one slice of them joined.

A list in which a topic comes back after another would have its entry where the topic first
appears; only sorted lists are taken (``assignment_bytes`` returns ``None`` for others, and
the caller sorts them or takes ``AssignmentEncoder``).
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.columns import AssignedColumns
from kassign.kafka.buffer import Writer

__all__ = [
    "FlatPartitions",
    "assignment_bytes",
    "by_key",
    "flat_columns",
    "flat_partitions",
    "objects",
]

_VERSION = 3
_HEAD = struct.Struct(">hi").pack  # version, assignedPartitions count
_INT32 = struct.Struct(">i").pack
_NULL_USER_DATA = _INT32(-1)
_TOPIC, _PARTITION = operator.itemgetter(0), operator.itemgetter(1)

Ints = npt.NDArray[np.int64]
Objects = npt.NDArray[np.object_]


@dataclass(frozen=True, slots=True)
class FlatPartitions:
    """Lists of (topic, partition) laid end to end: list ``i`` is entries
    ``[starts[i], ends[i])``. ``topic_ids`` number the topics in sorted order (``names``), so
    sorted lists have them ascending; ``owner`` is each entry's list."""

    names: list[str]
    topic_ids: Ints
    numbers: Ints  # the partitions
    starts: list[int]
    ends: list[int]
    owner: Ints

    def run_heads(self) -> npt.NDArray[np.bool_]:
        """Where a list begins or its topic changes: an entry's head, in a sorted list."""
        ids, owner = self.topic_ids, self.owner
        first = np.ones(len(ids), dtype=bool)
        first[1:] = (ids[1:] != ids[:-1]) | (owner[1:] != owner[:-1])
        return first

    def sorted_lists(self) -> bool:
        """Each list strictly ascending by (topic, partition): what ``sorted()`` keeps as is."""
        ids, numbers, owner = self.topic_ids, self.numbers, self.owner
        ascending = (ids[1:] > ids[:-1]) | ((ids[1:] == ids[:-1]) & (numbers[1:] > numbers[:-1]))
        return bool(np.all(ascending | (owner[1:] != owner[:-1])))


def flat_partitions(lists: Sequence[Sequence[tuple[str, int]]]) -> FlatPartitions:
    every = list(chain.from_iterable(lists))
    topics = list(map(_TOPIC, every))
    names = sorted(set(topics))
    number = dict(zip(names, range(len(names)), strict=True))
    sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    ends = np.cumsum(sizes)
    return FlatPartitions(
        names=names,
        topic_ids=np.fromiter(map(number.__getitem__, topics), dtype=np.int64, count=len(every)),
        numbers=np.fromiter(map(_PARTITION, every), dtype=np.int64, count=len(every)),
        starts=(ends - sizes).tolist(),
        ends=ends.tolist(),
        owner=np.repeat(np.arange(len(lists), dtype=np.int64), sizes),
    )


def flat_columns(columns: AssignedColumns) -> FlatPartitions:
    """``flat_partitions`` of lists the assignor kept as ids: read as numbers, no object made."""
    space, ids = columns.space, columns.ids
    topic_ids = space.topic_of(ids)
    ends = columns.ends
    return FlatPartitions(
        names=list(space.names),
        topic_ids=topic_ids,
        numbers=ids - space.offsets[topic_ids],
        starts=(ends - np.diff(ends, prepend=0)).tolist(),
        ends=ends.tolist(),
        owner=columns.owner(),
    )


def assignment_bytes(flat: FlatPartitions) -> list[bytes] | None:
    """Each list's ConsumerProtocolAssignment v3 bytes with null userData; ``None`` unless
    every list is sorted (``FlatPartitions.sorted_lists``)."""
    if not flat.sorted_lists():
        return None
    first = flat.run_heads()
    runs = np.flatnonzero(first)
    n, count = len(flat.numbers), len(runs)
    lengths = np.diff(np.append(runs, n))
    pieces = np.empty(n + count, dtype=object)
    # Each run's head goes before its first entry: a head's slot is its place plus the runs
    # before it, an entry's its place plus the runs started at or before it.
    span = int(lengths.max(initial=0)) + 1
    pieces[runs + np.arange(count)] = by_key(
        flat.topic_ids[runs] * span + lengths,
        lambda key: _name(flat.names[key // span]) + _INT32(key % span),
    )
    pieces[np.arange(n) + np.cumsum(first)] = by_key(flat.numbers, _INT32)
    ordered: list[bytes] = pieces.tolist()
    entries = np.bincount(flat.owner[runs], minlength=len(flat.ends))
    # A list's pieces: its entries, and the heads of the runs that start in it.
    firsts = np.searchsorted(runs, flat.starts) + flat.starts
    lasts = np.searchsorted(runs, flat.ends) + flat.ends
    join = b"".join
    return [
        join((_HEAD(_VERSION, k), join(ordered[a:b]), _NULL_USER_DATA))
        for k, a, b in zip(entries.tolist(), firsts.tolist(), lasts.tolist(), strict=True)
    ]


def by_key(keys: Ints, make: Callable[[int], bytes]) -> Objects:
    """``make(key)`` for each key, as an object array, made once per distinct key: looked up
    in a table indexed by key where keys are small (partition numbers, topic ids), in a dict
    otherwise."""
    if not len(keys):
        return np.empty(0, dtype=object)
    low, high = int(keys.min()), int(keys.max())
    if low >= 0 and high < 4 * len(keys) + 1024:
        present = np.zeros(high + 1, dtype=bool)
        present[keys] = True
        table = np.empty(high + 1, dtype=object)
        distinct = np.flatnonzero(present)
        table[distinct] = objects(list(map(make, distinct.tolist())))
        found: Objects = table[keys]
        return found
    listed = keys.tolist()
    made = {key: make(key) for key in set(listed)}
    return objects(list(map(made.__getitem__, listed)))


def _name(topic: str) -> bytes:
    w = Writer()
    w.string(topic)
    return w.getvalue()


def objects(values: list[bytes]) -> Objects:
    """``values`` as an object array, never converted to a fixed-width bytes one (which would
    drop trailing zero bytes)."""
    return np.fromiter(values, dtype=object, count=len(values))
