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

from collections.abc import Callable, Sequence

import numpy as np
from kassign.server.consumer.group_bytes import FlatPartitions, Ints, by_key, flat_partitions
from kassign.server.protowire import field as _field
from kassign.server.protowire import tag as _tag
from kassign.server.protowire import varint as _varint

__all__ = ["members_wire"]


_MEMBERS = _tag(1)
_MEMBER_ID, _PARTITIONS, _REVOKED, _ASSIGNMENT = map(_tag, (1, 2, 3, 4))
_TOPIC = _tag(1)
_PARTITION = _varint(2 << 3)  # varint field 2
_SPAN = 16  # more than a tail's longest length (1 + 10)


def _pieces(tag: bytes, flat: FlatPartitions) -> list[bytes]:
    """Each partition as ``TopicPartition`` field ``tag``, in two pieces: a head (tag, length,
    topic) by topic and tail length, then a tail (the partition number's field) by number."""
    numbers = flat.numbers
    pieces: list[bytes] = [b""] * (2 * len(numbers))
    pieces[0::2] = by_key(flat.topic_ids * _SPAN + _tail_sizes(numbers), _head(tag, flat)).tolist()
    pieces[1::2] = by_key(numbers, _tail).tolist()
    return pieces


def _tail(number: int) -> bytes:
    return _PARTITION + _varint(number) if number else b""


def _tail_sizes(numbers: Ints) -> Ints:
    """``len(_tail(n))`` for each number: none for 0, else the tag and the varint."""
    sizes = 2 + sum((numbers >= 1 << bits).astype(np.int64) for bits in (7, 14, 21, 28))
    return np.where(numbers == 0, 0, np.where(numbers < 0, 11, sizes))


def _head(tag: bytes, flat: FlatPartitions) -> Callable[[int], bytes]:
    def head(key: int) -> bytes:
        name = _field(_TOPIC, flat.names[key // _SPAN].encode())
        return tag + _varint(len(name) + key % _SPAN) + name

    return head


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
    out: list[bytes] = []
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
                join(gone[2 * gone_start : 2 * gone_end]) if gone_end > gone_start else b"",
                _field(_ASSIGNMENT, assignment),
            )
        )
        out += (_MEMBERS, _varint(len(member)), member)
    return join(out)
