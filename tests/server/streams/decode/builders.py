"""Requests and helpers the decode tests share: tasks, infos, members, the three encodings."""

from __future__ import annotations

from typing import Any

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.consumer_protocol import encode_consumer_subscription
from kassign.kafka.subscription_info import encode_subscription_info
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb, subscription_from_pb

__all__ = [
    "P1",
    "P2",
    "RAW_NULL_USER_DATA",
    "info",
    "invalid",
    "member",
    "outcome",
    "request",
    "task",
    "three_ways",
]


P1 = "f0e1d2c3-b4a5-4697-8899-aabbccddeeff"  # negative halves: sorts before P2 in Java order


P2 = "00000000-0000-0001-0000-000000000002"


def task(sub: int, part: int, *, stateful: bool = True, end: int = 100) -> pb.TaskInfo:
    source = pb.TaskTopicPartition(topic=f"in-{sub}", partition=part, is_source=True)
    return pb.TaskInfo(
        id=pb.TaskId(subtopology=sub, partition=part),
        stateful=stateful,
        topic_partitions=[source],
        changelog_end_offset_sum=end if stateful else 0,
    )


def info(process: str = P1, **fields: Any) -> pb.SubscriptionInfo:
    sums = fields.pop("sums", {})
    fields = {"version": 11, "latest_supported_version": 11, **fields}
    message = pb.SubscriptionInfo(process_id=process, **fields)
    for (sub, part), offset_sum in sums.items():
        message.task_offset_sums.add(
            task=pb.TaskId(subtopology=sub, partition=part), offset_sum=offset_sum
        )
    return message


def member(
    mid: str,
    process: str = P1,
    *,
    owned: tuple[tuple[str, int], ...] = (),
    rack: str = "",
    **fields: Any,
) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(
        topics=["in-0", "in-1"],
        owned_partitions=[pb.TopicPartition(topic=t, partition=p) for t, p in owned],
        rack_id=rack,
        info=info(process, **fields),
    )
    return pb.MemberSubscription(member_id=mid, subscription=sub)


def request(
    *members: pb.MemberSubscription, tasks: list[pb.TaskInfo] | None = None, **configs: Any
) -> pb.AssignRequest:
    return pb.AssignRequest(
        group_id="g",
        members=list(members),
        tasks=[task(0, 0), task(0, 1), task(1, 0, stateful=False)] if tasks is None else tasks,
        configs=pb.AssignmentConfigs(**configs),
    )


def invalid(req: pb.AssignRequest) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as err:
        decode_request(req, now_ms=1)
    return err.value


RAW_NULL_USER_DATA = encode_consumer_subscription(
    subscription_from_pb(pb.ConsumerSubscription(topics=["t"]))
)


def three_ways(message: pb.SubscriptionInfo) -> list[pb.AssignRequest]:
    structured = pb.ConsumerSubscription(
        topics=["in-0"],
        owned_partitions=[pb.TopicPartition(topic="in-0", partition=1)],
        generation_id=3,
        rack_id="r",
    )
    structured.info.CopyFrom(message)
    as_bytes = pb.ConsumerSubscription()
    as_bytes.CopyFrom(structured)
    as_bytes.info_bytes = encode_subscription_info(info_from_pb(message))
    raw = encode_consumer_subscription(subscription_from_pb(structured))
    return [
        request(pb.MemberSubscription(member_id="a", subscription=structured)),
        request(pb.MemberSubscription(member_id="a", subscription=as_bytes)),
        request(pb.MemberSubscription(member_id="a", raw_subscription=raw)),
    ]


def outcome(req: pb.AssignRequest) -> object:
    try:
        decoded = decode_request(req, now_ms=7)
    except InvalidRequest as exc:
        return ("invalid", exc.member, exc.reason)
    state = decoded.state
    clients = [(c, dict(c.task_lags)) for c in state.clients.values()]
    return (
        state.tasks,
        [
            (
                c.process_id,
                c.consumers,
                c.previous_active_tasks,
                c.previous_standby_tasks,
                c.rack_id,
                c.host_info,
                dict(c.client_tags),
                lags,
            )
            for c, lags in clients
        ],
        decoded.members,
        decoded.notes,
    )
