"""Kafka's own ConsumerProtocolSubscription bytes (tests/kafka/vectors, v0-v3) as members.

For every vector: the member the consumer room decodes says what Kafka's decoder reported
(topics, userData, owned partitions, generation, rack: ``decoded`` in index.json), and a group
of such members is assigned by every Kafka assignor.
"""

from __future__ import annotations

from typing import Any

import pytest
from kassign.assignor.consumer.model import DEFAULT_GENERATION
from kassign.server.consumer.decode import decode_member
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client import consumer

from tests.server.consumer.requests import KAFKA_ASSIGNORS
from tests.server.test_vectors import CONSUMER, VECTORS


@pytest.mark.parametrize("case", CONSUMER, ids=[c["name"] for c in CONSUMER])
def test_a_raw_member_says_what_kafka_decoded(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    member, user_data_field = decode_member(
        pb.MemberSubscription(member_id="m", raw_subscription=data)
    )
    kafka = case["decoded"]
    assert list(member.topics) == kafka["topics"]
    user_data = kafka["userData"]
    assert member.user_data == (None if user_data is None else bytes.fromhex(user_data["hex"]))
    owned = kafka.get("ownedPartitions") or []
    assert [tuple(tp) for tp in member.owned_partitions] == [
        (o["topic"], o["partition"]) for o in owned
    ]
    generation = kafka.get("generationId")
    assert member.generation == (DEFAULT_GENERATION if generation is None else generation)
    assert member.rack_id == kafka.get("rackId")
    assert user_data_field == "raw_subscription.user_data"


@pytest.mark.parametrize("assignor", KAFKA_ASSIGNORS)
def test_a_group_of_kafka_encoded_members_is_assigned(assignor: str) -> None:
    """Six members owning the same partitions in generation 5 (claimed by several); their
    userData are Streams bytes, which eager ``sticky`` reads as "nothing before", as Kafka does."""
    members = [
        pb.MemberSubscription(
            member_id=c["name"], raw_subscription=(VECTORS / c["file"]).read_bytes()
        )
        for c in CONSUMER
        if c["name"].startswith("consumer_subscription_v")
        and "null_userdata" not in c["name"]
        and c["name"] != "consumer_subscription_v3_defaults"
    ]
    topics = [
        consumer.topic(t, [["rack-a", "rack-b"]] * 4) for t in ("audit", "orders", "payments")
    ]
    request = consumer.request(members, topics, assignor=assignor)
    if (
        assignor == "sticky"
    ):  # its userData are Streams bytes here, not its own: Kafka reads nothing
        pass
    response = assign_consumer_request(request).response
    assigned = sorted((tp.topic, tp.partition) for m in response.members for tp in m.partitions)
    assert len(assigned) + response.report.withheld_partitions == 12
    assert len(set(assigned)) == len(assigned)
