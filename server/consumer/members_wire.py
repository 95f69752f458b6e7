"""The response's members as protobuf wire bytes, written for the whole group at once.

``ConsumerAssignResponse.members`` holds one ``TopicPartition`` message per assigned partition:
tens of thousands in a large group. Added one by one (``partitions.add``) they cost about half
a microsecond each; their wire bytes, written here for all members' partitions laid end to end
(``FlatPartitions``) and parsed by the protobuf runtime in one call, cost a fraction of that.
A partition's bytes are two pieces: a head (field tag, length, topic) looked up by topic and
by the length of the tail, and a tail (the partition's number) looked up by number. They are
the bytes ``SerializeToString`` writes for the same messages (fields in number order, zero and
empty values left out), so parsing them gives the message the one-by-one build gives.

    ConsumerAssignResponse: 1 members
    ConsumerMemberAssignment: 1 member_id, 2 partitions, 3 revoked, 4 assignment
    TopicPartition: 1 topic (string), 2 partition (int32)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from kassign.kafka.assignment_bytes import FlatPartitions, flat_partitions

__all__ = ["members_wire"]


def _varint(n: int) -> bytes:
    """Protobuf's base-128 varint; a negative int32 as its 64-bit two's complement."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(field: int) -> bytes:
    return _varint(field << 3 | 2)  # length-delimited


def _field(tag: bytes, value: bytes) -> bytes:
    """A length-delimited field, left out when empty (proto3 writes no default)."""
    return b"".join((tag, _varint(len(value)), value)) if value else b""


_MEMBERS = _tag(1)
_MEMBER_ID, _PARTITIONS, _REVOKED, _ASSIGNMENT = map(_tag, (1, 2, 3, 4))
_TOPIC = _tag(1)
_PARTITION = _varint(2 << 3)  # varint field 2
_SPAN = 16  # more than a tail's longest length (1 + 10)


def _pieces(tag: bytes, flat: FlatPartitions) -> list[bytes]:
    """Each partition as ``TopicPartition`` field ``tag``, in two pieces: head, then tail."""
    numbers = {p: _PARTITION + _varint(p) if p else b"" for p in set(flat.partitions)}
    tails = list(map(numbers.__getitem__, flat.partitions))
    sizes = np.fromiter(map(len, tails), dtype=np.int64, count=len(tails))
    keys = (flat.topic_ids * _SPAN + sizes).tolist()
    heads = {}
    for key in set(keys):
        name = _field(_TOPIC, flat.names[key // _SPAN].encode())
        heads[key] = tag + _varint(len(name) + key % _SPAN) + name
    pieces: list[bytes] = [b""] * (2 * len(keys))
    pieces[0::2] = map(heads.__getitem__, keys)
    pieces[1::2] = tails
    return pieces


def members_wire(
    member_ids: Sequence[str],
    partitions: FlatPartitions,
    revoked: Sequence[Sequence[tuple[str, int]]],
    assignments: Sequence[bytes],
) -> bytes:
    """``members`` of a ``ConsumerAssignResponse``, in the order given: member ``i`` with the
    partitions of list ``i`` in ``partitions``, ``revoked[i]`` and ``assignments[i]``."""
    join = b"".join
    written = _pieces(_PARTITIONS, partitions)
    gone_flat = flat_partitions(revoked)
    gone = _pieces(_REVOKED, gone_flat)
    out = []
    for member_id, start, end, gone_start, gone_end, assignment in zip(
        member_ids,
        partitions.starts,
        partitions.ends,
        gone_flat.starts,
        gone_flat.ends,
        assignments,
        strict=True,
    ):
        member = join(
            (
                _field(_MEMBER_ID, member_id.encode()),
                join(written[2 * start : 2 * end]),
                join(gone[2 * gone_start : 2 * gone_end]),
                _field(_ASSIGNMENT, assignment),
            )
        )
        out.append(join((_MEMBERS, _varint(len(member)), member)))
    return join(out)
