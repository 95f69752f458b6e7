"""SubscriptionInfoData v1-11: round trips of every version, and bad bytes end in WireError."""

from __future__ import annotations

import struct
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.kafka.buffer import WireError
from kassign.kafka.subscription_info import (
    LATEST_VERSION,
    ClientTag,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    TaskOffsetSum,
    WireTaskId,
    decode_subscription_info,
    encode_subscription_info,
    peek_versions,
)
from kassign.server.streams.decode.kafka_bytes import info_to_pb
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb

from tests.kafka.strategies import subscription_infos

VECTORS = Path(__file__).resolve().parent / "vectors"
V11 = (VECTORS / "subscription_info_v11.bin").read_bytes()
ALL_INFO = sorted(VECTORS.glob("subscription_info_*.bin"))
PID = UUID("f0e1d2c3-b4a5-4697-8899-aabbccddeeff")


@pytest.mark.parametrize("version", range(1, LATEST_VERSION + 1))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_round_trip_of_every_version(version: int, data: st.DataObject) -> None:
    info = data.draw(subscription_infos(version))
    encoded = encode_subscription_info(info)
    decoded = decode_subscription_info(encoded)
    assert decoded == info
    assert encode_subscription_info(decoded) == encoded
    assert peek_versions(encoded)[0] == version  # type: ignore[index]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80))
def test_random_bytes_decode_or_raise_wire_error(data: bytes) -> None:
    try:
        info = decode_subscription_info(data)
    except WireError:
        return
    assert encode_subscription_info(info) == data  # anything accepted is canonical


@settings(max_examples=300, deadline=None)
@given(
    path=st.sampled_from(ALL_INFO),
    edits=st.lists(st.tuples(st.integers(0, 300), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_mutated_vectors_decode_exactly_or_raise_wire_error(
    path: Path, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(path.read_bytes())
    for index, value in edits:
        data[index % len(data)] = value
    try:
        info = decode_subscription_info(bytes(data))
    except WireError:
        return
    assert encode_subscription_info(info) == bytes(data)


@pytest.mark.parametrize("path", ALL_INFO, ids=lambda p: p.stem)
def test_every_truncation_is_a_wire_error_with_its_offset(path: Path) -> None:
    data = path.read_bytes()
    for cut in range(len(data)):
        with pytest.raises(WireError) as err:
            decode_subscription_info(data[:cut])
        assert 0 <= err.value.offset <= cut


def test_trailing_bytes_are_an_error_unlike_kafka() -> None:
    with pytest.raises(WireError, match="1 trailing bytes") as err:
        decode_subscription_info(V11 + b"\x00")
    assert err.value.offset == len(V11)


@pytest.mark.parametrize("version", [0, -1, 12, 2**31 - 1])
def test_unknown_versions_are_refused(version: int) -> None:
    data = struct.pack(">ii", version, 12) + V11[8:]
    with pytest.raises(WireError, match=f"unknown SubscriptionInfo version {version}"):
        decode_subscription_info(data)


def test_future_version_is_peeked_as_kafka_reads_it() -> None:
    assert peek_versions(struct.pack(">ii", 12, 13)) == (12, 13)
    assert peek_versions(V11) == (11, 11)
    assert peek_versions(b"\x00\x00\x00\x0c") is None


def test_huge_array_count_fails_before_allocating() -> None:
    head = V11[: 4 + 4 + 16]
    endpoint = V11[24 : 24 + 4 + 23]
    with pytest.raises(WireError, match="cannot fit") as err:
        decode_subscription_info(head + endpoint + struct.pack(">i", 2**31 - 1))
    assert err.value.offset == len(head + endpoint)


def test_negative_counts_and_lengths_are_errors() -> None:
    head = V11[:24]
    with pytest.raises(WireError, match="negative length"):
        decode_subscription_info(head + struct.pack(">i", -1))
    with pytest.raises(WireError, match="null or negative count"):
        decode_subscription_info(head + struct.pack(">i", 0) + struct.pack(">i", -1))


def test_named_topology_null_and_other_negative_lengths() -> None:
    null = TaskOffsetSum(0, 1, 5, None)
    info = SubscriptionInfoData(
        version=10, process_id=PID, latest_supported_version=11, task_offset_sums=(null,)
    )
    data = encode_subscription_info(info)
    assert b"\xff\xff" in data
    assert decode_subscription_info(data).task_offset_sums == (null,)
    bad = data.replace(b"\xff\xff", b"\xff\xfe")
    with pytest.raises(WireError, match="namedTopology: negative length -2"):
        decode_subscription_info(bad)


def test_invalid_utf8_is_an_error() -> None:
    info = SubscriptionInfoData(version=2, process_id=PID, user_end_point="ab:1")
    data = encode_subscription_info(info).replace(b"ab:1", b"\xffb:1")
    with pytest.raises(WireError, match="userEndPoint: invalid UTF-8"):
        decode_subscription_info(data)


def test_encoding_drops_nothing_the_version_carries_and_refuses_unknown_versions() -> None:
    with pytest.raises(ValueError):
        encode_subscription_info(SubscriptionInfoData(version=12, process_id=PID))
    v1 = SubscriptionInfoData(version=1, process_id=PID, prev_tasks=(WireTaskId(0, 0),))
    assert len(encode_subscription_info(v1)) == 4 + 16 + 4 + 8 + 4


def test_offset_sums_read_as_kafka_reads_them() -> None:
    v6 = SubscriptionInfoData(
        version=6, process_id=PID, prev_tasks=(WireTaskId(0, 1),), standby_tasks=(WireTaskId(1, 0),)
    )
    assert v6.offset_sums() == (TaskOffsetSum(0, 1, -2), TaskOffsetSum(1, 0, -3))
    v7 = decode_subscription_info((VECTORS / "subscription_info_v7.bin").read_bytes())
    assert [(s.topic_group_id, s.partition) for s in v7.offset_sums()] == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 3),
        (2, 2),
    ]


@pytest.mark.parametrize("path", ALL_INFO, ids=lambda p: p.stem)
def test_protobuf_conversion_reproduces_kafkas_bytes(path: Path) -> None:
    data = path.read_bytes()
    assert (
        encode_subscription_info(info_from_pb(info_to_pb(decode_subscription_info(data)))) == data
    )


def test_from_pb_drops_what_the_version_lacks_as_kafkas_encoder_does() -> None:
    message = pb.SubscriptionInfo(
        version=1,
        latest_supported_version=11,
        process_id=str(PID),
        user_end_point="h:1",
        task_offset_sums=[
            pb.TaskOffsetSum(task=pb.TaskId(subtopology=0, partition=0), offset_sum=-2),
            pb.TaskOffsetSum(task=pb.TaskId(subtopology=1, partition=0), offset_sum=17),
        ],
        unique_field=7,
        client_tags=[pb.ClientTag(key="zone", value="a")],
    )
    info = info_from_pb(message)
    assert info == SubscriptionInfoData(
        version=1, process_id=PID, prev_tasks=(WireTaskId(0, 0),), standby_tasks=(WireTaskId(1, 0),)
    )


def test_from_pb_groups_v7_sums_by_first_appearance() -> None:
    sums = [(2, 0), (0, 1), (2, 1)]
    message = pb.SubscriptionInfo(
        version=7,
        latest_supported_version=11,
        process_id=str(PID),
        task_offset_sums=[
            pb.TaskOffsetSum(task=pb.TaskId(subtopology=g, partition=p), offset_sum=p)
            for g, p in sums
        ],
    )
    groups = info_from_pb(message).grouped_offset_sums
    assert [g.topic_group_id for g in groups] == [2, 0]
    assert isinstance(groups[0], SubtopologyOffsetSums) and len(groups[0].partitions) == 2


def test_from_pb_refuses_named_topologies_before_v10() -> None:
    message = pb.SubscriptionInfo(
        version=9,
        process_id=str(PID),
        task_offset_sums=[
            pb.TaskOffsetSum(task=pb.TaskId(subtopology=0, partition=0, named_topology="a"))
        ],
    )
    with pytest.raises(ValueError, match="named topologies"):
        info_from_pb(message)


def test_client_tags_keep_their_byte_order() -> None:
    tags = (ClientTag("zone", "z"), ClientTag("cluster", "c"))
    info = SubscriptionInfoData(
        version=11, process_id=PID, latest_supported_version=11, client_tags=tags
    )
    assert decode_subscription_info(encode_subscription_info(info)).client_tags == tags


def _canonical(info: SubscriptionInfoData) -> bool:
    """What Kafka's encoder can produce: v7-9 groups distinct and non-empty, a real latest."""
    groups = [g.topic_group_id for g in info.grouped_offset_sums]
    return (
        len(set(groups)) == len(groups)
        and all(g.partitions for g in info.grouped_offset_sums)
        and info.latest_supported_version != 0
    )


@settings(max_examples=150, deadline=None)
@given(subscription_infos(plausible=True))
def test_protobuf_round_trip_of_what_kafka_can_encode(info: SubscriptionInfoData) -> None:
    if not _canonical(info):
        return
    assert info_from_pb(info_to_pb(info)) == info
