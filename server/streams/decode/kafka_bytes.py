"""Kafka's decoded bytes as the contract's messages, so all three encodings meet in one checker.

The codecs (``kassign.kafka``) know nothing of protobuf; this is the one place the decoder turns
their dataclasses into ``kassign.v1`` messages. The reverse (messages to bytes) belongs to the
Python client (``kassign_client.kafka_bytes``), the only code that writes Kafka's bytes.
"""

from __future__ import annotations

from kassign.kafka.consumer_protocol import ConsumerProtocolSubscription
from kassign.kafka.subscription_info import SubscriptionInfoData
from kassign.v1 import assignment_pb2 as pb

__all__ = ["info_to_pb", "subscription_to_pb"]


def _pb_task(topic_group_id: int, partition: int, named: str | None = None) -> pb.TaskId:
    return pb.TaskId(subtopology=topic_group_id, partition=partition, named_topology=named or "")


def info_to_pb(info: SubscriptionInfoData) -> pb.SubscriptionInfo:
    """The structured message; lists keep byte order, v7-9 sums are flattened group by group."""
    sums = info.offset_sums() if info.version >= 7 else ()
    return pb.SubscriptionInfo(
        version=info.version,
        latest_supported_version=info.latest_supported_version,
        process_id=str(info.process_id),
        prev_tasks=[_pb_task(t.topic_group_id, t.partition) for t in info.prev_tasks],
        standby_tasks=[_pb_task(t.topic_group_id, t.partition) for t in info.standby_tasks],
        user_end_point=info.user_end_point,
        task_offset_sums=[
            pb.TaskOffsetSum(
                task=_pb_task(s.topic_group_id, s.partition, s.named_topology),
                offset_sum=s.offset_sum,
            )
            for s in sums
        ],
        unique_field=info.unique_field,
        error_code=info.error_code,
        client_tags=[pb.ClientTag(key=t.key, value=t.value) for t in info.client_tags],
    )


def subscription_to_pb(sub: ConsumerProtocolSubscription) -> pb.ConsumerSubscription:
    """The structured message: owned partitions flattened in byte order, userData as bytes.

    Like Kafka's ``deserializeSubscription``: generation -1 is unset, an empty rack is none.
    """
    message = pb.ConsumerSubscription(
        topics=list(sub.topics),
        owned_partitions=[
            pb.TopicPartition(topic=o.topic, partition=p)
            for o in sub.owned_partitions
            for p in o.partitions
        ],
        rack_id=sub.rack_id or "",
    )
    if sub.generation_id != -1:
        message.generation_id = sub.generation_id
    if sub.user_data is not None:
        message.info_bytes = sub.user_data
    return message
