"""The compact answer's members as protobuf wire bytes (issue 24: a wire that does not repeat itself).

A v1 answer lists each partition twice, as a ``TopicPartition`` carrying its topic's name and
again in Kafka's assignment bytes: 35 MB for a million partitions. With
``ConsumerAssignRequest.compact_answer`` a member's partitions are ``PartitionRuns``: per run
(one per topic) the topic's index in ``ConsumerAssignResponse.topics`` and a count, then all the
numbers, each as a packed varint (one or two bytes). The three arrays are written as varints for
the whole group at once (``packed``), and each member's message is three slices of them, so no
step is taken per partition in Python. Kafka's bytes come only when asked for
(``assignment_bytes``). The bytes are those ``SerializeToString`` writes for the same message
(fields in number order, empty ones left out; ``assigned`` always present), which a test checks.

    ConsumerMemberAssignment: 1 member_id, 4 assignment, 5 assigned, 6 revoked_runs
    PartitionRuns: 1 topics, 2 counts, 3 partitions (packed varints)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from kassign.server.consumer.group_bytes import FlatPartitions, Ints
from kassign.server.protowire import field as _field
from kassign.server.protowire import tag as _tag
from kassign.server.protowire import varint as _varint

__all__ = ["compact_members_wire", "packed", "topic_table"]

_MEMBERS = _tag(1)
_MEMBER_ID, _ASSIGNMENT, _ASSIGNED, _REVOKED_RUNS = map(_tag, (1, 4, 5, 6))
_RUN_FIELDS = tuple(map(_tag, (1, 2, 3)))
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


def _runs(flat: FlatPartitions, table: Sequence[str]) -> list[bytes]:
    """Each list of ``flat`` (sorted lists) as a ``PartitionRuns`` message's bytes (all empty
    when nothing is listed: a fresh group's revoked partitions, a step per member saved)."""
    if not len(flat.numbers):
        return [b""] * len(flat.ends)
    index = {name: i for i, name in enumerate(table)}
    remap = np.fromiter((index[n] for n in flat.names), dtype=np.int64, count=len(flat.names))
    runs = np.flatnonzero(flat.run_heads())
    counts = np.diff(np.append(runs, len(flat.numbers)))
    run_firsts = np.searchsorted(runs, flat.starts)
    run_lasts = np.searchsorted(runs, flat.ends)
    columns = []  # per field: its bytes, and each list's byte range in them
    for values, firsts, lasts in (
        (remap[flat.topic_ids[runs]], run_firsts, run_lasts),
        (counts, run_firsts, run_lasts),
        (
            flat.numbers,
            np.asarray(flat.starts, dtype=np.int64),
            np.asarray(flat.ends, dtype=np.int64),
        ),
    ):
        data, at = packed(values)
        columns.append((data, at[firsts].tolist(), at[lasts].tolist()))
    field = _field
    (t, t0, t1), (c, c0, c1), (n, n0, n1) = columns
    t_tag, c_tag, n_tag = _RUN_FIELDS
    return [
        b"".join(
            (
                field(t_tag, t[a:b]),
                field(c_tag, c[d:e]),
                field(n_tag, n[f:g]),
            )
        )
        for a, b, d, e, f, g in zip(t0, t1, c0, c1, n0, n1, strict=True)
    ]


def compact_members_wire(
    member_ids: Sequence[str],
    partitions: FlatPartitions,
    revoked: FlatPartitions,
    assignments: Sequence[bytes] | None,
    table: Sequence[str],
) -> bytes:
    """``members`` of a compact ``ConsumerAssignResponse``, in the order given: member ``i``
    with list ``i`` of ``partitions`` and of ``revoked`` (sorted lists) as runs over
    ``table``, and ``assignments[i]`` when given."""
    assigned = _runs(partitions, table)
    gone = _runs(revoked, table)
    kafka = assignments if assignments is not None else [b""] * len(member_ids)
    out: list[bytes] = []
    for member_id, runs, gone_runs, assignment in zip(
        member_ids, assigned, gone, kafka, strict=True
    ):
        member = b"".join(
            (
                _field(_MEMBER_ID, member_id.encode()),
                _field(_ASSIGNMENT, assignment) if assignment else b"",
                _ASSIGNED + _varint(len(runs)) + runs,  # present even when empty
                _field(_REVOKED_RUNS, gone_runs) if gone_runs else b"",
            )
        )
        out += (_MEMBERS, _varint(len(member)), member)
    return b"".join(out)
