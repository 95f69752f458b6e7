"""ConsumerProtocolSubscription v0-v3: round trips, Kafka's leniencies, and WireError for bad bytes."""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_protocol import (
    AssignmentEncoder,
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    SubscriptionDecoder,
    assignment_for,
    decode_consumer_assignment,
    decode_consumer_subscription,
    encode_consumer_assignment,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import decode_subscription_info
from kassign.server.streams.decode.kafka_bytes import info_to_pb, subscription_to_pb
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import subscription_from_pb

from tests.kafka.strategies import consumer_subscriptions

VECTORS = Path(__file__).resolve().parent / "vectors"
V3 = (VECTORS / "consumer_subscription_v3.bin").read_bytes()
ALL = sorted(VECTORS.glob("consumer_subscription_*.bin"))
INT32_PARTITIONS = st.integers(0, 2**31 - 1)


@pytest.mark.parametrize("version", range(4))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_round_trip_of_every_version(version: int, data: st.DataObject) -> None:
    sub = data.draw(consumer_subscriptions(version))
    encoded = encode_consumer_subscription(sub)
    decoded = decode_consumer_subscription(encoded)
    assert decoded == sub
    assert encode_consumer_subscription(decoded) == encoded


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60))
def test_random_bytes_decode_or_raise_wire_error(data: bytes) -> None:
    try:
        sub = decode_consumer_subscription(data)
    except WireError:
        return
    assert data.startswith(encode_consumer_subscription(sub))  # trailing bytes are ignored


@settings(max_examples=300, deadline=None)
@given(
    path=st.sampled_from(ALL),
    edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_mutated_vectors_decode_or_raise_wire_error(
    path: Path, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(path.read_bytes())
    for index, value in edits:
        data[index % len(data)] = value
    try:
        sub = decode_consumer_subscription(bytes(data))
    except WireError:
        return
    assert bytes(data).startswith(encode_consumer_subscription(sub))


def _outcome(decode: Callable[[bytes], object], data: bytes) -> object:
    try:
        return decode(data)
    except WireError as exc:
        return ("WireError", str(exc), exc.offset)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    topic_lists=st.lists(
        st.lists(st.sampled_from(["a", "b", "orders", "t-1", "\u00e9"]), max_size=4),
        min_size=1,
        max_size=3,
    ),
)
def test_a_shared_decoder_answers_as_decoding_each_alone(
    data: st.DataObject, topic_lists: list[list[str]]
) -> None:
    """One decoder for a group (topic lists read once) gives every member the answer, or the
    error at the same offset, that decoding its bytes alone gives: members with the same
    topics, other topics, topics that extend another's, and cut or edited bytes."""
    shared = SubscriptionDecoder()
    for _ in range(data.draw(st.integers(1, 8))):
        sub = data.draw(consumer_subscriptions(data.draw(st.integers(0, 3))))
        sub = dataclasses.replace(sub, topics=tuple(data.draw(st.sampled_from(topic_lists))))
        raw = bytearray(encode_consumer_subscription(sub))
        if data.draw(st.booleans()):
            raw = raw[: data.draw(st.integers(0, len(raw)))]
        for index, value in data.draw(
            st.lists(st.tuples(st.integers(0, 80), st.integers(0, 255)), max_size=2)
        ):
            if raw:
                raw[index % len(raw)] = value
        alone = _outcome(decode_consumer_subscription, bytes(raw))
        assert _outcome(shared.decode, bytes(raw)) == alone


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_truncation_is_a_wire_error(path: Path) -> None:
    data = path.read_bytes()
    for cut in range(len(data)):
        with pytest.raises(WireError):
            decode_consumer_subscription(data[:cut])


def test_trailing_bytes_are_ignored_as_kafka_does() -> None:
    assert decode_consumer_subscription(V3 + b"future fields") == decode_consumer_subscription(V3)


@pytest.mark.parametrize("header", [4, 7, 2**15 - 1])
def test_newer_header_is_read_as_v3_and_kept(header: int) -> None:
    data = struct.pack(">h", header) + V3[2:] + b"\x00\x00\x00\x00"
    sub = decode_consumer_subscription(data)
    assert sub.version == header
    assert sub.rack_id == "rack-a" and sub.generation_id == 5
    assert encode_consumer_subscription(sub) == data[:-4]


def test_negative_header_is_refused() -> None:
    with pytest.raises(WireError, match="version -1"):
        decode_consumer_subscription(b"\xff\xff" + V3[2:])


def test_null_user_data_and_rack_and_unknown_generation() -> None:
    sub = decode_consumer_subscription(
        (VECTORS / "consumer_subscription_v3_defaults.bin").read_bytes()
    )
    assert sub.user_data is None and sub.rack_id is None and sub.generation_id == -1
    message = subscription_to_pb(sub)
    assert message.WhichOneof("user_data") is None
    assert not message.HasField("generation_id") and message.rack_id == ""


def test_empty_rack_reads_as_none_in_protobuf() -> None:
    sub = decode_consumer_subscription(
        (VECTORS / "consumer_subscription_v3_empty_rack.bin").read_bytes()
    )
    assert sub.rack_id == ""
    assert subscription_to_pb(sub).rack_id == ""


def test_to_pb_flattens_owned_partitions_in_byte_order() -> None:
    message = subscription_to_pb(decode_consumer_subscription(V3))
    assert [(tp.topic, tp.partition) for tp in message.owned_partitions] == [
        ("audit", 3),
        ("orders", 0),
        ("orders", 2),
        ("payments", 1),
    ]
    assert message.generation_id == 5 and message.rack_id == "rack-a"
    assert decode_subscription_info(message.info_bytes).version == 11


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_from_pb_writes_what_kafka_writes(path: Path) -> None:
    data = path.read_bytes()
    sub = decode_consumer_subscription(data)
    rebuilt = subscription_from_pb(subscription_to_pb(sub), version=sub.version)
    if sub.rack_id == "":  # Kafka's decoder reads an empty rack as none; we encode none as null
        assert rebuilt.rack_id is None
        return
    assert encode_consumer_subscription(rebuilt) == data


def test_from_pb_sorts_topics_and_groups_partitions_like_kafka() -> None:
    message = pb.ConsumerSubscription(
        topics=["payments", "audit", "orders"],
        owned_partitions=[
            pb.TopicPartition(topic="payments", partition=1),
            pb.TopicPartition(topic="orders", partition=2),
            pb.TopicPartition(topic="audit", partition=3),
            pb.TopicPartition(topic="orders", partition=0),
        ],
        generation_id=5,
        rack_id="rack-a",
        info_bytes=b"x",
    )
    sub = subscription_from_pb(message)
    assert sub.topics == ("audit", "orders", "payments")
    assert sub.owned_partitions == (
        OwnedTopicPartitions("audit", (3,)),
        OwnedTopicPartitions("orders", (0, 2)),
        OwnedTopicPartitions("payments", (1,)),
    )


def test_from_pb_encodes_a_structured_info() -> None:
    v11 = (VECTORS / "subscription_info_v11.bin").read_bytes()
    message = pb.ConsumerSubscription(topics=["t"], info=info_to_pb(decode_subscription_info(v11)))
    assert subscription_from_pb(message).user_data == v11


def test_encoding_drops_fields_older_versions_lack() -> None:
    sub = ConsumerProtocolSubscription(
        version=0,
        topics=("t",),
        owned_partitions=(OwnedTopicPartitions("t", (1,)),),
        generation_id=3,
    )
    assert (
        encode_consumer_subscription(sub)
        == b"\x00\x00" + b"\x00\x00\x00\x01\x00\x01t" + b"\xff\xff\xff\xff"
    )
    with pytest.raises(ValueError):
        encode_consumer_subscription(ConsumerProtocolSubscription(version=-1, topics=()))


@settings(max_examples=60, deadline=None)
@given(
    partitions=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), INT32_PARTITIONS), max_size=12),
    user_data=st.none() | st.binary(max_size=16),
)
def test_assignment_round_trip_groups_topics_where_they_first_appear(
    partitions: list[tuple[str, int]], user_data: bytes | None
) -> None:
    assignment = assignment_for(partitions, user_data=user_data)
    assert [o.topic for o in assignment.assigned_partitions] == list(
        dict.fromkeys(t for t, _ in partitions)
    )
    flat = [(o.topic, p) for o in assignment.assigned_partitions for p in o.partitions]
    assert sorted(flat) == sorted(partitions) and assignment.version == 3
    encoded = encode_consumer_assignment(assignment)
    assert decode_consumer_assignment(encoded) == assignment
    assert decode_consumer_assignment(encoded + b"\x01\x02") == assignment  # trailing bytes ignored


@settings(max_examples=80, deadline=None)
@given(
    lists=st.lists(
        st.tuples(
            st.lists(
                st.tuples(st.sampled_from(["a", "b", "c", "\u00e9" * 3]), INT32_PARTITIONS),
                max_size=12,
            ),
            st.none() | st.binary(max_size=16),
            st.booleans(),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_the_encoder_writes_what_the_dataclass_path_writes(
    lists: list[tuple[list[tuple[str, int]], bytes | None, bool]],
) -> None:
    """One encoder for a group (topic names written once) gives each list, sorted or in any
    order (a topic coming back after another), the bytes of ``assignment_for`` then
    ``encode_consumer_assignment``."""
    encoder = AssignmentEncoder()
    for partitions, user_data, ordered in lists:
        if ordered:
            partitions = sorted(partitions)
        expected = encode_consumer_assignment(assignment_for(partitions, user_data=user_data))
        assert encoder.encode(partitions, user_data=user_data) == expected


@pytest.mark.parametrize(
    "data", [b"", b"\x00", b"\xff\xff", b"\x00\x03\x00\x00\x00\x05", b"\x00\x03\x00\x00\x00\x00"]
)
def test_bad_assignment_bytes_are_a_wire_error(data: bytes) -> None:
    with pytest.raises(WireError):
        decode_consumer_assignment(data)


def test_a_cut_topic_list_is_not_mistaken_for_a_shorter_kept_one() -> None:
    """Found by the property above: bytes cut inside a topic list may equal a shorter list kept
    by the shared decoder (here the empty one); the shared read must fail where a lone one does."""
    empty = encode_consumer_subscription(ConsumerProtocolSubscription(version=0, topics=()))
    one = encode_consumer_subscription(ConsumerProtocolSubscription(version=0, topics=("a",)))
    shared = SubscriptionDecoder()
    shared.decode(one)
    shared.decode(empty + b"\x00\x00\x00\x00")
    cut = empty[:2] + b"\x00\x00\x00\x00"
    assert _outcome(shared.decode, cut) == _outcome(decode_consumer_subscription, cut)
