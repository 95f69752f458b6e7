"""``members_wire`` writes the bytes protobuf writes for the same members built one by one, so
parsing them gives the same message; ``encode_response`` gives the responses it gave when it
added each partition (the service's racked group, with owned partitions, every assignor).
The 50,000 x 1,000 bench groups were compared the same way once (every assignor, layout and
round: equal bytes); ``bench/consumer_bench.py`` checks their partitions against Kafka's."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer.api import assign
from kassign.assignor.consumer.result import GroupAssignment
from kassign.kafka.consumer_protocol import AssignmentEncoder
from kassign.server.consumer import encode
from kassign.server.consumer.decode import DecodedConsumerRequest, decode_request
from kassign.server.consumer.group_bytes import flat_partitions
from kassign.server.consumer.members_wire import members_wire
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb

from tests.server.consumer.requests import ALL_ASSIGNORS, racked_group

TOPICS = st.sampled_from(["a", "b", "t" * 200, "\u00e9" * 3])
NUMBERS = st.integers(0, 3) | st.integers(0, 2**31 - 1)
PARTITIONS = st.lists(st.tuples(TOPICS, NUMBERS), max_size=8)
MEMBERS = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=4) | st.just("m" * 300),
        PARTITIONS,
        PARTITIONS,
        st.binary(max_size=4) | st.just(b"\x00" * 200),
    ),
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(members=MEMBERS)
def test_the_bytes_are_those_of_the_messages_built_one_by_one(
    members: list[tuple[str, list[tuple[str, int]], list[tuple[str, int]], bytes]],
) -> None:
    expected = cpb.ConsumerAssignResponse()
    for member_id, partitions, revoked, assignment in members:
        sent = expected.members.add(member_id=member_id, assignment=assignment)
        for topic, partition in partitions:
            sent.partitions.add(topic=topic, partition=partition)
        for topic, partition in revoked:
            sent.revoked.add(topic=topic, partition=partition)
    written = members_wire(
        [m for m, _, _, _ in members],
        flat_partitions([p for _, p, _, _ in members]),
        [r for _, _, r, _ in members],
        [a for _, _, _, a in members],
    )
    assert written == expected.SerializeToString()


def _one_by_one(decoded: DecodedConsumerRequest, assignment: GroupAssignment) -> bytes:
    """The response as ``encode_response`` built it before ``members_wire``."""
    response = cpb.ConsumerAssignResponse(report=encode._report(decoded, assignment))
    encoder = AssignmentEncoder()
    for member in assignment.members:
        sent = response.members.add(member_id=member.member_id)
        partitions = sorted(member.partitions)
        for topic, partition in partitions:
            sent.partitions.add(topic=topic, partition=partition)
        for topic, partition in sorted(member.revoked):
            sent.revoked.add(topic=topic, partition=partition)
        sent.assignment = encoder.encode(partitions)
    return response.SerializeToString(deterministic=True)


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_responses_are_those_built_one_by_one(assignor: str) -> None:
    """The service's group, and the same answer with each member's lists reversed (never an
    assignor's order: ``encode_response`` then sorts them, one by one)."""
    decoded = decode_request(racked_group(assignor))
    assignment = assign(decoded.assignor, decoded.group, decoded.options)
    reversed_lists = dataclasses.replace(
        assignment,
        columns=None,  # the lists as given, not the ids the assignor kept
        members=tuple(
            dataclasses.replace(m, partitions=m.partitions[::-1], revoked=m.revoked[::-1])
            for m in assignment.members
        ),
    )
    for answer in (assignment, reversed_lists):
        now = encode.encode_response(decoded, answer).SerializeToString(deterministic=True)
        assert now == _one_by_one(decoded, answer)


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_wire_response_is_the_message_serialised(assignor: str) -> None:
    """What the servicer sends (members as bytes, then the head) is the whole message's
    serialisation, explanation and timings included; ``message()`` reads it back."""
    request = racked_group(assignor)
    request.explain = True
    wire = assign_consumer_request(request).wire
    message = wire.message()
    assert message.members and message.HasField("explanation")
    assert wire.SerializeToString() == message.SerializeToString()
    assert cpb.ConsumerAssignResponse.FromString(wire.SerializeToString()) == message
