"""Properties over random groups, in process: one answer however a member is sent, the same bytes
every time, Kafka's bytes decoding to each member's partitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidAssignment
from kassign.kafka.consumer_protocol import decode_consumer_assignment
from kassign.server.consumer.encode import canonical_bytes
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.server.consumer.requests import ALL_ASSIGNORS, RACKS

TOPIC_NAMES = ("a", "b", "c", "d")


@st.composite
def groups(draw: st.DrawFn) -> tuple[dict[str, list[list[str]]], list[dict[str, object]]]:
    """Topics with 1-6 partitions on racks (some on no rack), and 1-8 members subscribing to some,
    with racks or not, owning distinct partitions of a previous generation or not."""
    racks = st.lists(st.sampled_from((*RACKS, "")), min_size=1, max_size=3)
    topics = draw(
        st.dictionaries(
            st.sampled_from(TOPIC_NAMES), st.lists(racks, min_size=1, max_size=6), min_size=1
        )
    )
    every = [(t, p) for t, parts in sorted(topics.items()) for p in range(len(parts))]
    free = list(every)
    members = []
    for n in range(draw(st.integers(1, 8))):
        owned = draw(st.lists(st.sampled_from(free), unique=True, max_size=4)) if free else []
        free = [tp for tp in free if tp not in owned]
        members.append(
            {
                "member_id": f"member-{draw(st.integers(0, 99))}-{n}",
                "topics": draw(st.lists(st.sampled_from(TOPIC_NAMES), unique=True, max_size=4)),
                "owned": owned,
                "generation": draw(st.sampled_from([None, 1, 2])) if owned else None,
                "rack": draw(st.sampled_from((*RACKS, "elsewhere", ""))),
            }
        )
    return topics, members


def request(
    group: tuple[dict[str, list[list[str]]], list[dict[str, object]]], assignor: str, encoding: str
) -> cpb.ConsumerAssignRequest:
    topics, members = group
    return consumer.request(
        [consumer.member(encoding=encoding, **m) for m in members],  # type: ignore[arg-type]
        [consumer.topic(t, racks) for t, racks in topics.items()],
        assignor=assignor,
    )


def answer(req: cpb.ConsumerAssignRequest) -> bytes | str:
    try:
        return canonical_bytes(assign_consumer_request(req).response)
    except InvalidAssignment as exc:
        return str(exc.code)


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
@settings(max_examples=40, deadline=None)
@given(group=groups())
def test_raw_and_structured_agree_and_repeat(assignor: str, group) -> None:  # type: ignore[no-untyped-def]
    structured = answer(request(group, assignor, "structured"))
    assert answer(request(group, assignor, "raw")) == structured
    assert answer(request(group, assignor, "structured")) == structured
    if isinstance(structured, bytes):
        response = cpb.ConsumerAssignResponse.FromString(structured)
        for m in response.members:
            decoded = decode_consumer_assignment(m.assignment)
            flat = [(o.topic, p) for o in decoded.assigned_partitions for p in o.partitions]
            assert flat == [(tp.topic, tp.partition) for tp in m.partitions]
