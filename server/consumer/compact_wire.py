"""The compact answer's members as protobuf wire bytes (issue 24: a wire that does not repeat itself).

A v1 answer lists each partition twice, as a ``TopicPartition`` carrying its topic's name and
again in Kafka's assignment bytes: 35 MB for a million partitions. With
``ConsumerAssignRequest.compact_answer`` a member's partitions are ``PartitionRuns``: per run
(one per topic) the topic's index in ``ConsumerAssignResponse.topics`` and a count, then all the
numbers, each as a packed varint (one or two bytes). The three arrays are written as varints for
the whole group at once (``packed``), and each member's message is three slices of them, framed
with its id for the whole group by the compiled core (``kassign_native.compact_members``,
``assignor/native/src/members_wire.rs``: a dozen Python calls a member before), so no step is
taken per partition or member in Python. Kafka's bytes come only when asked for
(``assignment_bytes``). The bytes are those ``SerializeToString`` writes for the same message
(fields in number order, empty ones left out; ``assigned`` always present), which a test checks.

    ConsumerMemberAssignment: 1 member_id, 4 assignment, 5 assigned, 6 revoked_runs
    PartitionRuns: 1 topics, 2 counts, 3 partitions (packed varints)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import kassign_native
import numpy as np
from kassign.server.consumer.group_bytes import FlatPartitions, Ints

__all__ = ["compact_members_wire", "packed", "topic_table"]

Runs = tuple[bytes, bytes, bytes, bytes]
"""A list's ``PartitionRuns``: topics', counts' and numbers' packed bytes, and per member six
int64 bounds into them (``kassign_native.compact_members`` takes them)."""
_VARINT_BYTES = 10  # an int64 (a negative int32 is sign-extended to one)


def packed(values: Ints) -> tuple[bytes, Ints]:
    """``values`` as varints end to end, and where each begins (one more: the end), as
    protobuf writes an int32 field's packed values.

    Each value's bytes are a row of a matrix as wide as the largest value's varint (partition
    numbers: one or two bytes), the rows cut to each value's size by a mask: no step per value.
    Non-negative values below 2**32 are cut up as 4-byte numbers, in one scratch column
    (issue 27: a million partitions' runs took 8-byte copies of every array several times).
    """
    v: np.ndarray[Any, Any]
    least, top = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    if 0 <= least and top < 1 << 32:  # partition numbers, counts, indexes: 4 bytes each
        v = values.astype(np.uint32)
    else:
        v = values.astype(np.int64).view(np.uint64)
        top = int(v.max())
    width = next((k for k in range(1, _VARINT_BYTES) if top < 1 << (7 * k)), _VARINT_BYTES)
    at = np.zeros(len(v) + 1, dtype=np.int64)
    if width == 1:
        at[1:] = np.arange(1, len(v) + 1)
        return v.astype(np.uint8).tobytes(), at
    sizes = np.ones(len(v), dtype=np.uint8)
    for k in range(1, width):
        sizes += v >= (1 << (7 * k))
    np.cumsum(sizes, dtype=np.int64, out=at[1:])
    rows = np.empty((len(v), width), dtype=np.uint8)
    low = np.empty_like(v)  # one scratch column, reused: no temporary of 8 bytes a value
    for k in range(width):
        np.right_shift(v, 7 * k, out=low)
        np.bitwise_and(low, 0x7F, out=low)
        rows[:, k] = low
        rows[:, k] |= (sizes > k + 1).view(np.uint8) << np.uint8(7)
    return rows[np.arange(width) < sizes[:, None]].tobytes(), at


def topic_table(*flats: FlatPartitions) -> list[str]:
    """The names the runs of ``flats`` refer to, sorted: ``ConsumerAssignResponse.topics``."""
    return sorted(set().union(*(f.names for f in flats)))


def _runs(flat: FlatPartitions, table: Sequence[str]) -> Runs | None:
    """Each list of ``flat`` (sorted lists) as ``PartitionRuns``: its three fields' packed
    bytes for the whole group, and per list six bounds into them (``None`` when nothing is
    listed: a fresh group's revoked partitions)."""
    if not len(flat.numbers):
        return None
    index = {name: i for i, name in enumerate(table)}
    remap = np.fromiter((index[n] for n in flat.names), dtype=np.int64, count=len(flat.names))
    runs = np.flatnonzero(flat.run_heads())
    counts = np.diff(np.append(runs, len(flat.numbers)))
    run_firsts = np.searchsorted(runs, flat.starts)
    run_lasts = np.searchsorted(runs, flat.ends)
    fields: list[bytes] = []
    bounds: list[Ints] = []
    for values, firsts, lasts in (
        (remap[flat.topic_ids[runs]], run_firsts, run_lasts),
        (counts, run_firsts, run_lasts),
        (flat.numbers, np.asarray(flat.starts), np.asarray(flat.ends)),
    ):
        data, at = packed(values)
        fields.append(data)
        bounds += (at[firsts], at[lasts])
    rows = np.stack(bounds, axis=1).astype(np.int64, copy=False)
    return fields[0], fields[1], fields[2], rows.tobytes()


def compact_members_wire(
    member_ids: Sequence[str],
    partitions: FlatPartitions,
    revoked: FlatPartitions,
    assignments: Sequence[bytes] | None,
    table: Sequence[str],
) -> bytes:
    """``members`` of a compact ``ConsumerAssignResponse``, in the order given: member ``i``
    with list ``i`` of ``partitions`` and of ``revoked`` (sorted lists) as runs over
    ``table``, and ``assignments[i]`` when given; framed by the compiled core."""
    return kassign_native.compact_members(
        list(member_ids),
        _runs(partitions, table),
        _runs(revoked, table),
        None if assignments is None else list(assignments),
    )
