"""``KassignClient.consumer_assign`` and the ``consumer`` builders against a real server."""

from __future__ import annotations

import grpc
import pytest
from kassign.server.consumer.encode import canonical_bytes
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import (
    KassignCallError,
    KassignClient,
    KassignInvalidRequest,
    consumer,
)

from tests.server.consumer.requests import null_pointer_group, racked_group
from tests.server.running import in_process


def test_consumer_assign_returns_the_response_and_raw_members_agree() -> None:
    with in_process() as (_, target), KassignClient(target) as client:
        structured = client.consumer_assign(racked_group("sticky"), timeout=60)
        raw = client.consumer_assign(racked_group("sticky", encoding="raw"), timeout=60)
    assert len(structured.members) == 7 and structured.report.assignor == "sticky"
    assert canonical_bytes(raw) == canonical_bytes(structured)


def test_refusals_are_typed_and_name_their_cause() -> None:
    bad = racked_group("range")
    bad.members[1].raw_subscription = b"\x00"
    with in_process() as (_, target), KassignClient(target) as client:
        with pytest.raises(KassignInvalidRequest) as invalid:
            client.consumer_assign(bad, timeout=30)
        with pytest.raises(KassignCallError) as failed:
            client.consumer_assign(null_pointer_group(), timeout=30)
    assert (invalid.value.field, invalid.value.member) == ("raw_subscription", "m1")
    assert failed.value.code is grpc.StatusCode.FAILED_PRECONDITION
    assert failed.value.metadata["kassign-reason"] == "KAFKA_NULL_POINTER"


def test_builders_spell_topics_options_and_members() -> None:
    topic = consumer.topic("t", [["a", ""], ["b"]])
    assert [list(p.rack_ids) for p in topic.partitions] == [["a", ""], ["b"]]
    assert len(consumer.topic("t", 3).partitions) == 3
    options = consumer.options(
        protocol="cooperative", co_partitioned=[["a", "b"]], stickiness_cost=0.0
    )
    assert options.protocol == cpb.REBALANCE_PROTOCOL_COOPERATIVE
    assert options.HasField("stickiness_cost") and not options.HasField("solver_time_budget_ms")
    member = consumer.member("m", ["b", "a"], owned=[("a", 1)], generation=3, user_data=b"x")
    sub = member.subscription
    assert sub.generation_id == 3 and sub.user_data_bytes == b"x" and list(sub.topics) == ["b", "a"]
    raw = consumer.member("m", ["b", "a"], user_data=b"x", encoding="raw", version=0)
    assert (
        raw.raw_subscription
        == b"\x00\x00" + b"\x00\x00\x00\x02\x00\x01a\x00\x01b" + b"\x00\x00\x00\x01x"
    )
    with pytest.raises(ValueError, match="encoding"):
        consumer.member("m", [], encoding="json")  # type: ignore[arg-type]
