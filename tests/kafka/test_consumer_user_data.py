"""The sticky assignors' userData, byte for byte (the differential suite checks the same bytes
against Kafka's own encoder on thousands of members)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_user_data import (
    StickyUserData,
    decode_cooperative_generation,
    decode_sticky_user_data,
    encode_cooperative_generation,
    encode_sticky_user_data,
)

V1 = bytes.fromhex("0000000100017400000002000000000000000300000007")
"""[{topic "t", partitions [0, 3]}], generation 7."""


def test_v1_bytes() -> None:
    assert encode_sticky_user_data([("t", [0, 3])], 7) == V1
    assert decode_sticky_user_data(V1) == StickyUserData((("t", 0), ("t", 3)), 7)


def test_v0_has_no_generation_and_trailing_bytes_are_ignored() -> None:
    v0 = V1[:-4]
    assert decode_sticky_user_data(v0) == StickyUserData((("t", 0), ("t", 3)), None)
    assert decode_sticky_user_data(V1 + b"\x00") == decode_sticky_user_data(V1)


@pytest.mark.parametrize("data", [b"", b"\x00\x00", bytes.fromhex("00000001ffff"), b"\xff" * 8])
def test_neither_v1_nor_v0(data: bytes) -> None:
    with pytest.raises(WireError):
        decode_sticky_user_data(data)


def test_malformed_utf8_topic_is_replaced_as_java_does() -> None:
    data = bytes.fromhex("000000010001ff00000000")
    assert decode_sticky_user_data(data) == StickyUserData((), None)
    assert decode_sticky_user_data(data + bytes(4)).generation == 0


topics = st.lists(
    st.tuples(
        st.text(alphabet="abc.-_", min_size=1, max_size=5),
        st.lists(st.integers(0, 2**31 - 1), max_size=4),
    ),
    max_size=4,
)


@given(topics, st.none() | st.integers(-(2**31), 2**31 - 1))
def test_round_trip(groups: list[tuple[str, list[int]]], generation: int | None) -> None:
    decoded = decode_sticky_user_data(encode_sticky_user_data(groups, generation))
    assert decoded.partitions == tuple((t, p) for t, ps in groups for p in ps)
    assert decoded.generation == generation


def test_cooperative_generation() -> None:
    assert encode_cooperative_generation(5) == b"\x00\x00\x00\x05"
    assert decode_cooperative_generation(b"\xff\xff\xff\xff\x01") == -1
    with pytest.raises(WireError):
        decode_cooperative_generation(b"\x00\x00\x01")
