"""Owned partitions are decoded without an object per partition (issue 16), in both rooms.

A member's claim arrives as {topic, partitions} entries; it is kept so (``OwnedPartitions``: the
topic once, the numbers in one ``array('i')``), and answers are those of the per-partition
decoding it replaced (tests/differential/consumer and tests/snapshots hold them).
"""

from __future__ import annotations

from array import array
from uuid import UUID

from kassign.assignor.consumer.model import OwnedPartitions
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import SubscriptionInfoData, encode_subscription_info
from kassign.server.consumer.decode import decode_request as decode_consumer
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.server.requests import group

MANY = 100_000


def _raw(owned: dict[str, range], user_data: bytes | None = None) -> bytes:
    entries = tuple(OwnedTopicPartitions(t, tuple(ps)) for t, ps in owned.items())
    return encode_consumer_subscription(
        ConsumerProtocolSubscription(
            version=3, topics=("orders",), user_data=user_data, owned_partitions=entries
        )
    )


def _consumer_request() -> cpb.ConsumerAssignRequest:
    raw = _raw({"orders": range(0, 4, 2), "retired": range(MANY)})
    return consumer.request(
        [
            pb.MemberSubscription(member_id="m-0", raw_subscription=raw),
            consumer.member("m-1", ["orders"], owned=[("orders", 1)]),
        ],
        [consumer.topic("orders", [[]] * 4)],
        assignor="cooperative-sticky",
    )


def test_a_consumer_members_claims_are_kept_per_topic() -> None:
    members = decode_consumer(_consumer_request()).group.members
    raw, structured = members[0].owned_partitions, members[1].owned_partitions
    assert isinstance(raw, OwnedPartitions) and isinstance(structured, OwnedPartitions)
    assert [t for t, _ in raw.runs] == ["orders", "retired"]
    assert all(isinstance(numbers, array) for _, numbers in raw.runs)
    assert len(raw) == MANY + 2


def test_claims_on_retired_topics_leave_the_answer_as_it_was() -> None:
    """Claims of a topic outside the metadata change nothing: the same answer without them."""
    with_retired = assign_consumer_request(_consumer_request()).response
    request = _consumer_request()
    request.members[0].raw_subscription = _raw({"orders": range(0, 4, 2)})
    without = assign_consumer_request(request).response
    assert list(with_retired.members) == list(without.members)
    assert with_retired.report.moved_partitions == without.report.moved_partitions


def test_a_streams_members_claims_are_kept_per_topic_and_unread_ones_counted() -> None:
    info = encode_subscription_info(
        SubscriptionInfoData(version=11, process_id=UUID(int=5), latest_supported_version=11)
    )
    request = group()
    member = request.members.add(member_id="z-owner")
    member.raw_subscription = _raw({"orders": range(2), "elsewhere": range(MANY)}, info)
    decoded = decode_request(request, now_ms=1)
    owner = next(m for m in decoded.members if m.member_id == "z-owner")
    assert isinstance(owner.owned_partitions, OwnedPartitions)
    assert [t for t, _ in owner.owned_partitions.runs] == ["elsewhere", "orders"]
    (note,) = [n for n in decoded.notes if "z-owner" in n and "no task reads" in n]
    assert f"ignored {MANY} owned partition(s)" in note and f"and {MANY - 10} more" in note
    assert "elsewhere-0, elsewhere-1" in note
