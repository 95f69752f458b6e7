"""Eager sticky's userData read a group at a time by the compiled core
(``decode_sticky_user_data_group``): each member as Kafka reads its own bytes alone.

The oracle for arbitrary bytes is ``Reader``'s generic, element-by-element {topic,
partitions} read (``kassign.kafka.buffer``: v1 is that array and an int32, v0 the array
alone), which no production path uses for these bytes any more; Kafka's own reading is checked
by the differential suite (tests/differential/consumer) on the assignors' answers.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import DEFAULT_GENERATION, Member, Topic, assign, consumer_group
from kassign.assignor.consumer.sticky import sticky_member_data, sticky_members_data
from kassign.kafka.buffer import Reader, WireError
from kassign.kafka.consumer_user_data import (
    decode_sticky_user_data_group,
    encode_sticky_user_data,
)

_NAME_BYTES = st.binary(max_size=4) | st.sampled_from([b"t", b"u", b"\xff", b"\xc3", b"\xc3\xa9"])
_ENTRY = st.tuples(_NAME_BYTES, st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3))


def _raw(entries: list[tuple[bytes, list[int]]], tail: bytes) -> bytes:
    """Sticky userData with topic names as given, undecoded (malformed UTF-8 included)."""
    out = len(entries).to_bytes(4, "big")
    for name, partitions in entries:
        out += len(name).to_bytes(2, "big") + name + len(partitions).to_bytes(4, "big")
        out += b"".join(p.to_bytes(4, "big", signed=True) for p in partitions)
    return out + tail


def _generic(data: bytes | None) -> tuple[list[tuple[str, int]], int | None, bool]:
    """(pairs, generation, failed) by ``Reader``'s generic reads, v1 then v0."""
    if data is None:
        return [], None, False
    try:
        r = Reader(data)
        runs = r.topic_partition_runs("previous_assignment", "topic", lenient=True)
    except WireError:
        return [], None, True
    generation = r.int32() if r.remaining >= 4 else None
    return list(runs.pairs()), generation, False


_MEMBER = (
    st.none()
    | st.binary(max_size=24)
    | st.builds(_raw, st.lists(_ENTRY, max_size=4), st.binary(max_size=6))
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_MEMBER, max_size=5))
def test_a_group_reads_as_each_member_alone(group: list[bytes | None]) -> None:
    read = decode_sticky_user_data_group(group)
    assert len(read) == len(group)
    for data, claims in zip(group, read, strict=True):
        pairs, generation, failed = _generic(data)
        assert (claims.failure is not None) == failed
        assert list(claims.runs.pairs()) == pairs
        assert claims.generation == generation


def test_members_naming_topics_in_one_order_or_another_read_as_each_alone() -> None:
    """The reader tries first the name that followed the previous one last time (members
    mostly list their topics in one order): the same order, others, and two byte strings
    decoding to one name (malformed UTF-8) still read as each member alone."""
    orders = [
        [b"t", b"u", b"a\xff"],
        [b"t", b"u", b"a\xff"],
        [b"a\xfe", b"u", b"t"],
        [b"u", b"t", b"a\xff"],
        [b"t", b"u", b"a\xfe", b"v"],
        [b"t", b"u", b"a\xff"],
    ]
    group: list[bytes | None] = [
        _raw([(name, [i, k]) for k, name in enumerate(names)], b"\x00\x00\x00\x01")
        for i, names in enumerate(orders)
    ]
    read = decode_sticky_user_data_group(group)
    for data, claims in zip(group, read, strict=True):
        assert (list(claims.runs.pairs()), claims.generation, False) == _generic(data)
    assert list(read[2].runs.topics) == ["a\ufffd", "u", "t"]


def test_names_are_decoded_as_java_replaces_malformed_utf8() -> None:
    data = _raw([(b"caf\xc3\xa9", [1]), (b"a\xffb", [2]), (b"\xfe", [3]), (b"\xc3", [4])], b"")
    (claims,) = decode_sticky_user_data_group([data])
    assert list(claims.runs.topics) == ["caf\u00e9", "a\ufffdb", "\ufffd", "\ufffd"]
    assert list(claims.runs.numbers) == [1, 2, 3, 4]


def test_a_failing_member_claims_nothing_and_its_neighbours_keep_theirs() -> None:
    good = encode_sticky_user_data([("t", [0, 1])], 3)
    truncated = good[:-9]  # inside the partitions: neither v1 nor v0
    read = decode_sticky_user_data_group([good, truncated, None, b"", good[:-4]])
    assert [list(c.runs.pairs()) for c in read] == [
        [("t", 0), ("t", 1)],
        [],
        [],
        [],
        [("t", 0), ("t", 1)],
    ]
    assert [c.generation for c in read] == [3, None, None, None, None]
    assert [c.failure is not None for c in read] == [False, True, False, True, False]
    assert isinstance(read[1].failure, WireError)


def test_the_assignor_reads_a_failure_as_generation_minus_one() -> None:
    topic = Topic.without_racks("t", 2)
    members = [
        Member(member_id="a", topics=("t",), user_data=encode_sticky_user_data([("t", [0])], 4)),
        Member(member_id="b", topics=("t",), user_data=b"\x00\x00\x00\x05"),
        Member(member_id="c", topics=("t",), user_data=encode_sticky_user_data([("t", [1])], None)),
    ]
    group = consumer_group(members, [topic])
    data = sticky_members_data(group, group.members)
    assert [(list(d.partitions), d.generation) for d in data.values()] == [
        ([("t", 0)], 4),
        ([], DEFAULT_GENERATION),
        ([("t", 1)], None),
    ]
    assert sticky_member_data(group, members[2]) == data["c"]
    assert assign("sticky", group).partitions() == {"a": [("t", 0)], "b": [], "c": [("t", 1)]}
