"""Every byte vector Kafka's own encoders made (tests/kafka/vectors) decodes as Kafka did.

For each file: our wire-level values equal the generated message's fields ("wire"), our
member-level reading equals Kafka's high-level decoder ("decoded"), and re-encoding gives the
file back byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    decode_consumer_subscription,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import (
    SubscriptionInfoData,
    decode_subscription_info,
    encode_subscription_info,
)
from kassign.server.streams.decode.members import DecodedMember, decode_member
from kassign.v1 import assignment_pb2 as pb

# A copy of the shared vectors (tests/kafka/vectors) so a fresh clone tests the same bytes.
VECTORS = Path(
    os.environ.get("KASSIGN_VECTORS", Path(__file__).resolve().parents[1] / "kafka" / "vectors")
)
CASES: list[dict[str, Any]] = json.loads((VECTORS / "index.json").read_text())["cases"]
INFO = [c for c in CASES if c["format"] == "SubscriptionInfoData"]
CONSUMER = [c for c in CASES if c["format"] == "ConsumerProtocolSubscription"]


def _signed(half: int) -> int:
    return half - 2**64 if half >= 2**63 else half


def _wire_view(info: SubscriptionInfoData) -> dict[str, Any]:
    """Our values in the shape index.json records the generated message's fields."""
    v = info.version
    view: dict[str, Any] = {"version": v}
    if v >= 3:
        view["latestSupportedVersion"] = info.latest_supported_version
    view["processId"] = {
        "mostSignificantBits": _signed(info.process_id.int >> 64),
        "leastSignificantBits": _signed(info.process_id.int & (2**64 - 1)),
        "uuid": str(info.process_id),
    }
    if v <= 6:
        for name, tasks in (("prevTasks", info.prev_tasks), ("standbyTasks", info.standby_tasks)):
            view[name] = [
                {"topicGroupId": t.topic_group_id, "partition": t.partition} for t in tasks
            ]
    if v >= 2:
        view["userEndPoint"] = info.user_end_point
    if 7 <= v <= 9:
        view["taskOffsetSums"] = [
            {
                "topicGroupId": g.topic_group_id,
                "partitionToOffsetSum": [
                    {"partition": p.partition, "offsetSum": p.offset_sum} for p in g.partitions
                ],
            }
            for g in info.grouped_offset_sums
        ]
    if v >= 10:
        view["taskOffsetSums"] = [
            {
                "topicGroupId": t.topic_group_id,
                "partition": t.partition,
                "offsetSum": t.offset_sum,
                "namedTopology": t.named_topology,
            }
            for t in info.task_offset_sums
        ]
    if v >= 8:
        view["uniqueField"] = info.unique_field
    if v >= 9:
        view["errorCode"] = info.error_code
    if v >= 11:
        view["clientTags"] = [{"key": t.key, "value": t.value} for t in info.client_tags]
    return view


def _kafka_view(report: DecodedMember) -> dict[str, Any]:
    """Our member-level reading in the shape of Kafka's ``SubscriptionInfo`` accessors."""
    sums = {str(t): s for t, s in report.offset_sums}
    return {
        "version": report.version,
        "latestSupportedVersion": report.latest_supported_version,
        "processId": str(report.process_id),
        "prevTasks": sorted(str(t) for t, s in report.offset_sums if s == -2),
        "standbyTasks": sorted(str(t) for t, s in report.offset_sums if s != -2),
        "taskOffsetSums": dict(sorted(sums.items())),
        "userEndPoint": report.user_end_point,
        "uniqueField": report.unique_field,
        "errorCode": report.error_code,
        "clientTags": dict(report.client_tags),
    }


def _member(**kind: Any) -> DecodedMember:
    return decode_member(pb.MemberSubscription(member_id="m", **kind))


def test_every_vector_is_present() -> None:
    assert len(INFO) == 20 and len(CONSUMER) == 8
    for case in CASES:
        data = (VECTORS / case["file"]).read_bytes()
        assert len(data) == case["length"] and data.hex() == case["hex"]


@pytest.mark.parametrize("case", INFO, ids=[c["name"] for c in INFO])
def test_subscription_info_vector(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    info = decode_subscription_info(data)
    wire = dict(case["wire"])
    wire["processId"] = {k: v for k, v in wire["processId"].items() if k != "kafkaUuidToString"}
    assert _wire_view(info) == wire
    assert encode_subscription_info(info) == data
    report = _member(subscription=pb.ConsumerSubscription(info_bytes=data))
    assert _kafka_view(report) == case["decoded"]


@pytest.mark.parametrize("case", CONSUMER, ids=[c["name"] for c in CONSUMER])
def test_consumer_subscription_vector(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    sub = decode_consumer_subscription(data)
    wire = case["wire"]
    assert sub.version == wire["version"]
    assert list(sub.topics) == wire["topics"]
    assert (None if sub.user_data is None else sub.user_data.hex()) == wire["userDataHex"]
    if "ownedPartitions" in wire:
        owned = [{"topic": o.topic, "partitions": list(o.partitions)} for o in sub.owned_partitions]
        assert owned == wire["ownedPartitions"]
    assert sub.generation_id == wire.get("generationId", -1)
    assert sub.rack_id == wire.get("rackId")
    assert encode_consumer_subscription(sub) == data


@pytest.mark.parametrize("case", CONSUMER, ids=[c["name"] for c in CONSUMER])
def test_consumer_subscription_reads_as_kafka_reads_it(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    decoded = case["decoded"]
    if decoded["userData"] is None:
        with pytest.raises(Exception, match="userData"):
            _member(raw_subscription=data)
        return
    report = _member(raw_subscription=data)
    assert list(report.topics) == decoded["topics"]
    assert [{"topic": t, "partition": p} for t, p in report.owned_partitions] == decoded[
        "ownedPartitions"
    ]
    assert report.generation_id == decoded["generationId"]
    assert report.rack_id == decoded["rackId"]
    assert _kafka_view(report) == decoded["userData"]["asSubscriptionInfo"]


def test_nested_user_data_is_the_v11_vector() -> None:
    v11 = (VECTORS / "subscription_info_v11.bin").read_bytes()
    for case in CONSUMER:
        sub: ConsumerProtocolSubscription = decode_consumer_subscription(
            (VECTORS / case["file"]).read_bytes()
        )
        if case["decoded"]["userData"] is not None:
            assert sub.user_data == v11
