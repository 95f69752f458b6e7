"""A request's members read from its bytes (``member_columns``, the compiled core's
``request_members``) give the columns protobuf's own accessors give, on any wire protobuf
accepts: fields sent twice, a subscription sent in two pieces (merged), oneofs switched,
unknown fields; bytes that are not protobuf are refused, naming the member."""

from __future__ import annotations

from typing import Any

import kassign_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.server.consumer.member_columns import member_columns, request_bytes
from kassign.server.protowire import field, tag, varint
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

TEXT = st.sampled_from(["", "a", "orders", "\u00e9t\u00e9", "r" * 130])
NUMBERS = st.integers(-(2**31), 2**31 - 1)


def _expected(members: list[pb.MemberSubscription]) -> dict[str, list[Any]]:
    """The columns through protobuf's accessors, member by member (the reader it replaced)."""
    subs = [m.subscription if m.WhichOneof("kind") == "subscription" else None for m in members]
    empty = pb.ConsumerSubscription()
    data = [s.WhichOneof("user_data") if s else None for s in subs]
    return {
        "ids": [m.member_id for m in members],
        "instance_ids": [m.group_instance_id for m in members],
        "kinds": [m.WhichOneof("kind") for m in members],
        "raw": [m.raw_subscription for m in members],
        "user_data": data,
        "user_data_bytes": [
            getattr(s, d) if s and d in ("info_bytes", "user_data_bytes") else None
            for s, d in zip(subs, data, strict=True)
        ],
        "has_list": [(s or empty).HasField("topic_list") for s in subs],
        "lists": [(s or empty).topic_list for s in subs],
        "topics": [list((s or empty).topics) for s in subs],
        "owned_counts": [len((s or empty).owned_partitions) for s in subs],
        "by_topic": [len((s or empty).owned_by_topic) for s in subs],
        "racks": [(s or empty).rack_id for s in subs],
        "generations": [
            s.generation_id if s and s.HasField("generation_id") else None for s in subs
        ],
        "capacities": [s.capacity if s and s.HasField("capacity") else None for s in subs],
    }


def _columns(data: bytes) -> dict[str, list[Any]]:
    members = list(cpb.ConsumerAssignRequest.FromString(data).members)
    got = member_columns(data, members)
    return {name: getattr(got, name) for name in _expected([])}


@st.composite
def _members(draw: st.DrawFn) -> pb.MemberSubscription:
    kind = draw(st.sampled_from(["subscription", "raw", "none"]))
    member = pb.MemberSubscription(member_id=draw(TEXT), group_instance_id=draw(TEXT))
    if kind == "raw":
        member.raw_subscription = draw(st.binary(max_size=20))
    if kind != "subscription":
        return member
    sub = member.subscription
    sub.SetInParent()
    sub.topics.extend(draw(st.lists(TEXT, max_size=3)))
    for topic, partition in draw(st.lists(st.tuples(TEXT, NUMBERS), max_size=3)):
        sub.owned_partitions.add(topic=topic, partition=partition)
    for topic, numbers in draw(st.lists(st.tuples(TEXT, st.lists(NUMBERS, max_size=3)))):
        sub.owned_by_topic.add(topic=topic, partitions=numbers)
    sub.rack_id = draw(TEXT)
    if draw(st.booleans()):
        sub.generation_id = draw(NUMBERS)
    if draw(st.booleans()):
        sub.topic_list = draw(NUMBERS)
    if draw(st.booleans()):
        sub.capacity = draw(st.floats(allow_nan=False))
    which = draw(st.sampled_from(["none", "info", "info_bytes", "user_data_bytes"]))
    if which == "info":
        sub.info.version = 11
    elif which != "none":
        setattr(sub, which, draw(st.binary(max_size=10)))
    return member


@settings(max_examples=100, deadline=None)
@given(st.lists(_members(), max_size=6))
def test_each_column_is_what_protobufs_accessors_give(
    members: list[pb.MemberSubscription],
) -> None:
    data = request_bytes(members)
    assert _columns(data) == _expected(members)


def _member(*fields: bytes) -> bytes:
    return field(tag(3), b"".join(fields))


def test_any_wire_protobuf_reads() -> None:
    """A field sent twice (the last counts; repeated ones add up), a subscription in two pieces
    (merged), a oneof switched (the last member set wins and clears the other), unknown fields
    of every wire type (a nested group too), in the request, the member and the subscription."""
    unknown = (
        varint(15 << 3) + varint(300),
        varint(16 << 3 | 1) + bytes(8),
        field(tag(17), b"xyz"),
        varint(18 << 3 | 5) + bytes(4),
        # a group (wire types 3 and 4: proto3 encoders never write one, protobuf reads it)
        varint(19 << 3 | 3)
        + varint(1 << 3)
        + varint(7)
        + varint(2 << 3 | 3)
        + varint(2 << 3 | 4)
        + varint(19 << 3 | 4),
    )
    by_topic = field(tag(9), field(tag(1), b"t") + field(tag(2), varint(3)))
    data = b"".join(
        (
            field(tag(1), b"group"),
            *unknown,
            _member(
                field(tag(1), b"first"),
                field(tag(3), field(tag(1), b"a") + varint(3 << 3) + varint(4) + by_topic),
                *unknown,
                field(tag(1), b"m-0"),
                field(tag(3), field(tag(1), b"b") + field(tag(7), b"ud") + field(tag(4), b"r1")),
                field(tag(3), varint(8 << 3) + varint(2) + by_topic + field(tag(4), b"r2")),
            ),
            _member(  # a subscription, then raw bytes: the subscription cleared
                field(tag(1), b"m-1"),
                field(tag(3), field(tag(1), b"a") + varint(3 << 3) + varint(5)),
                field(tag(4), b"\x00\x01"),
            ),
            _member(  # raw bytes, then a subscription: a new one
                field(tag(1), b"m-2"),
                field(tag(4), b"\x00\x01"),
                field(tag(3), tag(5) + varint(0) + field(tag(6), b"info") + b"".join(unknown)),
                field(tag(3), varint(10 << 3 | 1) + bytes(7) + b"\x40"),  # capacity 2.0
            ),
            tag(3) + varint(0),  # a member with no field set
            field(tag(7), field(tag(1), b"list")),
        )
    )
    members = list(cpb.ConsumerAssignRequest.FromString(data).members)
    assert _columns(data) == _expected(members)
    got = _columns(data)
    assert got["topics"][0] == ["a", "b"] and got["generations"][0] == 4
    assert got["by_topic"][0] == 2 and got["racks"][0] == "r2" and got["lists"][0] == 2
    assert got["kinds"] == ["subscription", "raw_subscription", "subscription", None]
    assert got["capacities"][2] == 2.0 and got["user_data"][2] == "info_bytes"
    assert member_columns(data, members).by_topic_bytes[0] == by_topic * 2


@pytest.mark.parametrize(
    "data",
    [
        _member(field(tag(1), b"m"))[:-1],  # the member cut short
        _member(field(tag(3), varint(3 << 3) + b"\x80")),  # a varint cut short
        _member(varint(9 << 3 | 3)),  # a group: no field of ours
        _member(field(tag(3), varint(10 << 3 | 1) + bytes(3))),  # a double cut short
    ],
)
def test_bytes_that_are_not_protobuf_fail(data: bytes) -> None:
    with pytest.raises(ValueError, match="member 1: .* at byte"):
        kassign_native.request_members(_member(field(tag(1), b"ok")) + data)


def test_a_string_that_is_not_utf8_fails() -> None:
    with pytest.raises(ValueError, match="member 0: member_id is not UTF-8"):
        kassign_native.request_members(_member(field(tag(1), b"\xff")))
