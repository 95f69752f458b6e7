"""The compiled read of a Streams request's members (``member_read.py``,
assignor/native/src/streams_members.rs) against the walk through protobuf's accessors
(``members.decode_member``): on random members, well formed or not, split over merged messages,
and on mangled bytes, the same members, clients and notes, or the same error (field, member,
words); the common shape is read compiled."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import kassign_native
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.subscription_info import encode_subscription_info
from kassign.server.limits import RequestLimits
from kassign.server.streams.decode import request as decode
from kassign.server.streams.decode.member_read import decoded_members, read_members
from kassign.server.streams.decode.topology import decode_topology, task_columns
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb

from tests.server.streams.decode.builders import P1, P2, outcome, task


def _pick(draw: st.DrawFn, sound: bool, good: list[object], bad: list[object]) -> object:
    """One of ``good`` or, unless ``sound``, possibly one of ``bad``."""
    return draw(st.sampled_from(good if sound else good + bad))


@st.composite
def infos(draw: st.DrawFn, sound: bool) -> pb.SubscriptionInfo:
    """v7-11 (the compiled read's) when ``sound``; else also v1-6 and v12, and any field
    possibly at fault."""
    version = _pick(draw, sound, [11, 11, 10, 9, 8, 7], [6, 2, 1, 12, 0])
    message = pb.SubscriptionInfo(
        version=version,
        latest_supported_version=_pick(draw, sound, [0, version, 11], [12, 3]),
        process_id=_pick(draw, sound, [P1, P2, P2, P1.upper()], ["", "x", P1[:-1] + "g"]),
        user_end_point=_pick(
            draw, sound, ["", "", "h:1", "h:065535"], ["h:65536", ":1", "h:\u00b2"]
        ),
        unique_field=_pick(draw, sound, [0, 0, 3, -128, 127], [128, -129]),
        error_code=draw(st.sampled_from([0, 0, 7])),
    )
    subs, parts = [0, 0, 1, 2], [0, 1, 2, 3]
    for _ in range(draw(st.integers(0, 4))):
        task = pb.TaskId(
            subtopology=_pick(draw, sound, subs, [-1]), partition=draw(st.sampled_from(parts))
        )
        offset_sum = _pick(draw, sound, [-3, -2, 0, 5, 200], [-4, -1])
        message.task_offset_sums.add(task=task, offset_sum=offset_sum)  # may repeat a task
    if not sound and draw(st.integers(0, 3)) == 0:
        message.prev_tasks.add(subtopology=0, partition=1)
    if version == 11 or not sound:
        for key in draw(st.lists(st.sampled_from(["zone", "k", ""]), max_size=2, unique=sound)):
            message.client_tags.add(
                key=key or ("" if not sound else "e"), value=draw(st.sampled_from(["a", "b"]))
            )
    return message


@st.composite
def members(draw: st.DrawFn, i: int) -> bytes:
    """One member's bytes: structured or its userData as bytes, sometimes sent in two
    messages protobuf merges (owned partitions, rack and an error code in the second);
    mostly sound (the compiled read's), else with a field possibly at fault."""
    sound = draw(st.integers(0, 3)) > 0
    info = draw(infos(sound))
    sub = pb.ConsumerSubscription(
        topics=draw(st.lists(st.sampled_from(["in-0", "in-1", "\u00e9"]), max_size=2)),
        rack_id=draw(st.sampled_from(["", "r1", "r2"])),
    )
    generation = _pick(draw, sound, [None, None, -1, 0, 4], [-2])
    if generation is not None:
        sub.generation_id = generation
    if draw(st.booleans()):
        try:
            sub.info_bytes = encode_subscription_info(info_from_pb(info))
        except (ValueError, struct.error):  # not encodable: sent structured
            sub.info.CopyFrom(info)
    else:
        sub.info.CopyFrom(info)
    topics, numbers = ["in-0", "in-1", "x"], [0, 1, 2]
    owned = [
        pb.TopicPartition(
            topic=_pick(draw, sound, topics, [""]), partition=_pick(draw, sound, numbers, [-1])
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    if sound:
        owned = list({(o.topic, o.partition): o for o in owned}.values())
    mid = _pick(draw, sound, [f"m-{i}"], ["m-0", ""])
    instance = draw(st.sampled_from(["", "", "static"]))
    if not draw(st.integers(0, 3)):  # the second message merged into the first
        first = pb.MemberSubscription(member_id=mid, group_instance_id=instance, subscription=sub)
        second = pb.ConsumerSubscription(
            owned_partitions=owned, rack_id=draw(st.sampled_from(["", "r2"]))
        )
        if draw(st.booleans()):
            second.info.error_code = 9
        return (
            first.SerializeToString()
            + pb.MemberSubscription(subscription=second).SerializeToString()
        )
    sub.owned_partitions.extend(owned)
    return pb.MemberSubscription(
        member_id=mid, group_instance_id=instance, subscription=sub
    ).SerializeToString()


def _framed(field: int, body: bytes) -> bytes:
    """A length-delimited field of ``body`` (field numbers below 16)."""
    size, length = len(body), bytearray()
    while True:
        length.append(size & 0x7F | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    return bytes([field << 3 | 2]) + bytes(length) + body


def _request(bodies: list[bytes]) -> bytes:
    head = pb.AssignRequest(
        group_id="g", tasks=[task(0, 0), task(0, 1), task(1, 0, stateful=False), task(2, 3)]
    ).SerializeToString()
    return head + b"".join(_framed(2, b) for b in bodies)


@contextmanager
def _walk_only() -> Iterator[None]:
    with mock.patch.object(decode, "read_members", lambda data, limits: None):
        yield


def _outcome(data: bytes, limits: RequestLimits | None = None) -> object:
    message = pb.AssignRequest.FromString(data)
    message.now_ms = 7
    if limits is None:
        return outcome(message)
    try:
        decoded = decode.decode_request(message, now_ms=7, limits=limits)
    except InvalidRequest as exc:
        return ("invalid", exc.field, exc.member, str(exc))
    return decoded.members, decoded.notes


def _both(data: bytes, limits: RequestLimits | None = None) -> tuple[object, object]:
    compiled = _outcome(data, limits)
    with _walk_only():
        return compiled, _outcome(data, limits)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(*(members(i) for i in range(n)))))
def test_random_members_decode_as_the_walk_decodes_them(bodies: tuple[bytes, ...]) -> None:
    compiled, walked = _both(_request(list(bodies)))
    assert compiled == walked


@settings(max_examples=40, deadline=None)
@given(
    st.tuples(members(0), members(1)),
    st.sampled_from([8, 20, 36, 40, 1024]),
    st.integers(0, 3),
)
def test_limits_are_named_as_the_walk_names_them(
    bodies: tuple[bytes, ...], string_bytes: int, counts: int
) -> None:
    limits = RequestLimits(
        string_bytes=string_bytes, owned_partitions=counts, reported_tasks=counts
    )
    compiled, walked = _both(_request(list(bodies)), limits)
    assert compiled == walked


@settings(max_examples=100, deadline=None)
@given(st.tuples(members(0), members(1)), st.data())
def test_mangled_member_bytes_give_the_walks_outcome(
    bodies: tuple[bytes, ...], data: st.DataObject
) -> None:
    """Bytes cut or changed anywhere in the members: a clean ``None`` from the compiled read
    where protobuf would not parse them, else the walk's outcome."""
    good = _request(list(bodies))
    at = data.draw(st.integers(0, len(good) - 1))
    if data.draw(st.booleans()):
        mangled = good[:at]
    else:
        mangled = good[:at] + bytes([data.draw(st.integers(0, 255))]) + good[at + 1 :]
    read = kassign_native.streams_members(mangled)  # never a crash or a panic
    try:
        pb.AssignRequest.FromString(mangled)
    except DecodeError:  # the server refuses these bytes before decoding
        return
    assert read is None or isinstance(read, tuple)
    compiled, walked = _both(mangled)
    assert compiled == walked


@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_cleanly(data: bytes) -> None:
    read = kassign_native.streams_members(data)
    assert read is None or len(read) == 11


def _group_12() -> bytes:
    """The bench's 12-task group (``bench/ghz/data/group_12.json``) as request bytes."""
    text = (Path(__file__).resolve().parents[4] / "bench/ghz/data/group_12.json").read_text()
    return json_format.ParseDict(json.loads(text), pb.AssignRequest()).SerializeToString()


def test_the_common_shape_is_read_compiled_to_the_walks_members() -> None:
    """The bench's 12-task group (structured, owned partitions, offset sums, tags) is taken
    by the compiled read, whose members are the walk's."""
    data = _group_12()
    read = read_members(data, RequestLimits())
    assert read is not None
    topology = decode_topology(task_columns(data))
    fast = decoded_members(read, topology.interned())
    assert fast is not None and any(m.owned_partitions for m in fast)
    assert any(m.offset_sums for m in fast)
    message = pb.AssignRequest.FromString(data)
    with _walk_only():
        walked = decode.decode_request(message, now_ms=1)
    assert fast == walked.members


def test_the_userdata_as_bytes_is_read_compiled() -> None:
    info = pb.SubscriptionInfo(version=11, latest_supported_version=11, process_id=P2)
    info.task_offset_sums.add(task=pb.TaskId(subtopology=0, partition=1), offset_sum=-2)
    info.client_tags.add(key="zone", value="a")
    sub = pb.ConsumerSubscription(
        topics=["in-0"], info_bytes=encode_subscription_info(info_from_pb(info))
    )
    data = _request([pb.MemberSubscription(member_id="a", subscription=sub).SerializeToString()])
    read = read_members(data, RequestLimits())
    assert read is not None and read.infos[0][0] == 6
    compiled, walked = _both(data)
    assert compiled == walked


def test_a_fault_is_left_to_the_walk() -> None:
    bad = pb.SubscriptionInfo(version=11, latest_supported_version=11, process_id="nope")
    sub = pb.ConsumerSubscription(info=bad)
    data = _request([pb.MemberSubscription(member_id="a", subscription=sub).SerializeToString()])
    assert kassign_native.streams_members(data) is None
    try:
        decode.decode_request(pb.AssignRequest.FromString(data), now_ms=1)
    except InvalidRequest as exc:
        assert exc.field == "subscription.info.process_id"
    else:
        raise AssertionError("a bad process id decoded")
