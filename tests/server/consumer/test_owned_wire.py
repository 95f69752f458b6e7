"""``owned_by_topic`` (``server/consumer/owned_wire.py``, the compiled core's reader) gives each
member the claims protobuf's own accessors give, sorted as the decoder sorts them: kept when
sent sorted, else sorted as ``owned_partitions`` is; and reads any wire protobuf accepts."""

from __future__ import annotations

from itertools import pairwise

import kassign_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions
from kassign.server.consumer.owned_wire import claims_of, owned_by_topic
from kassign.server.protowire import field, tag, varint
from kassign.v1 import assignment_pb2 as pb

TOPICS = st.sampled_from(["a", "b", "t" * 200, "\u00e9" * 3, "z", ""])
NUMBERS = st.integers(0, 3) | st.integers(-(2**31), 2**31 - 1)
ENTRIES = st.lists(st.tuples(TOPICS, st.lists(NUMBERS, max_size=5)), max_size=6)


def _expected(sub: pb.ConsumerSubscription) -> OwnedPartitions:
    """The claims read through protobuf's accessors, entry by entry, sorted as the decoder
    sorts them: entries without partitions dropped; kept when names ascend strictly and each
    entry's numbers too, else one sorted entry per topic."""
    entries = [(e.topic, list(e.partitions)) for e in sub.owned_by_topic if e.partitions]
    names = [t for t, _ in entries]
    rising = all(all(a < b for a, b in pairwise(ps)) for _, ps in entries)
    if names == sorted(set(names)) and rising:
        return OwnedPartitions(entries)
    return OwnedPartitions.sorted_from((t, p) for t, ps in entries for p in ps)


def _member(i: int, kind: int, entries: list[tuple[str, list[int]]]) -> pb.MemberSubscription:
    if kind == 0:
        return pb.MemberSubscription(member_id=f"m{i}", raw_subscription=b"\x00\x01")
    sub = pb.ConsumerSubscription(
        topic_list=0,
        rack_id="r",
        user_data_bytes=b"\x00\x00\x00\x07",
        owned_by_topic=[pb.TopicPartitions(topic=t, partitions=ps) for t, ps in entries],
    )
    return pb.MemberSubscription(member_id=f"m{i}", subscription=sub)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), ENTRIES), max_size=6))
def test_each_member_gets_what_protobufs_accessors_give(
    members: list[tuple[int, list[tuple[str, list[int]]]]],
) -> None:
    sent = [_member(i, kind, entries) for i, (kind, entries) in enumerate(members)]
    got = owned_by_topic(sent)
    for m, claims in zip(sent, got, strict=True):
        if m.WhichOneof("kind") != "subscription" or not m.subscription.owned_by_topic:
            assert claims is None
            continue
        assert claims is not None
        expected = _expected(m.subscription)
        assert list(claims) == list(expected)
        assert (claims.topics, list(claims.counts)) == (expected.topics, list(expected.counts))


def _entry(*fields: bytes) -> bytes:
    return field(tag(9), b"".join(fields))


def test_any_wire_protobuf_reads() -> None:
    """Unpacked numbers beside packed ones, a topic sent twice (the last counts), unknown
    fields of every wire type, in the entry and around it: what protobuf itself reads."""
    unknown = (
        varint(15 << 3) + varint(300),  # varint
        varint(16 << 3 | 1) + bytes(8),  # fixed64
        field(tag(17), b"xyz"),  # length-delimited
        varint(18 << 3 | 5) + bytes(4),  # fixed32
    )
    data = b"".join(
        (
            *unknown,
            _entry(
                field(tag(1), b"first"),
                varint(2 << 3) + varint(5),
                field(tag(2), varint(7) + varint((1 << 64) - 3)),  # -3, as int32 is sent
                *unknown,
                field(tag(1), b"orders"),
                varint(2 << 3) + varint(9),
            ),
            _entry(field(tag(1), b"empty")),
            _entry(field(tag(1), b"clicks"), field(tag(2), varint(1) + varint(0))),
        )
    )
    parsed = pb.ConsumerSubscription.FromString(data)
    assert next((e.topic, list(e.partitions)) for e in parsed.owned_by_topic) == (
        "orders",
        [5, 7, -3, 9],
    )
    assert kassign_native.owned_by_topic([data, None])[1] == [False, True]  # sorted?
    claims, none = claims_of([data, None])
    assert none is None and claims is not None
    assert list(claims) == list(_expected(parsed))


@pytest.mark.parametrize(
    "data",
    [
        _entry(field(tag(1), b"t"))[:-1],  # the entry cut short
        field(tag(9), varint(2 << 3) + b"\x80"),  # a varint cut short
        varint(9 << 3 | 3),  # a group: no field of ours
        b"\xff" * 11,  # a varint of eleven bytes
    ],
)
def test_bytes_that_are_not_protobuf_fail(data: bytes) -> None:
    with pytest.raises(ValueError, match="member 1: .* at byte"):
        kassign_native.owned_by_topic([None, data])
