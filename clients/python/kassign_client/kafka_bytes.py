"""The contract's subscription messages as Kafka's own bytes, byte for byte as Kafka writes them.

Built on the neutral codecs (``kassign.kafka``), which know nothing of protobuf; the server's
decoder reads the same bytes with the same codecs (``kassign.server.streams.decode.kafka_bytes``).
"""

from __future__ import annotations

from itertools import groupby
from uuid import UUID

from kassign.kafka.consumer_protocol import (
    LATEST_VERSION as CONSUMER_PROTOCOL_VERSION,
)
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import (
    LATEST_VERSION,
    ClientTag,
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    TaskOffsetSum,
    WireTaskId,
    carries_task_lists,
    encode_subscription_info,
    split_task_lists,
)
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "consumer_subscription_bytes",
    "info_from_pb",
    "subscription_from_pb",
    "subscription_info_bytes",
]


def subscription_info_bytes(info: pb.SubscriptionInfo) -> bytes:
    """Streams' ``SubscriptionInfoData`` at ``info.version``, byte for byte as Kafka writes it."""
    return encode_subscription_info(info_from_pb(info))


def consumer_subscription_bytes(sub: pb.ConsumerSubscription, version: int = 3) -> bytes:
    """The whole ``ConsumerProtocolSubscription`` (int16 version first) as Kafka writes it."""
    return encode_consumer_subscription(subscription_from_pb(sub, version))


def _grouped(sums: list[TaskOffsetSum]) -> tuple[SubtopologyOffsetSums, ...]:
    """v7-9 nesting: sub-topologies in order of first appearance, partitions in input order."""
    groups: dict[int, list[PartitionOffsetSum]] = {}
    for s in sums:
        groups.setdefault(s.topic_group_id, []).append(
            PartitionOffsetSum(s.partition, s.offset_sum)
        )
    return tuple(SubtopologyOffsetSums(g, tuple(ps)) for g, ps in groups.items())


def info_from_pb(info: pb.SubscriptionInfo) -> SubscriptionInfoData:
    """What Kafka's ``SubscriptionInfo`` would write for this message at ``info.version``.

    Like Kafka, fields the version lacks are dropped, and at v1-6 offset sums (if given instead
    of the lists) split into previous actives (-2) and other tasks. Named topologies before v10
    raise ``ValueError``, as Kafka's encoder refuses them.
    """
    v = info.version
    if not 1 <= v <= LATEST_VERSION:
        raise ValueError(f"cannot encode SubscriptionInfo version {v}")
    sums = [
        TaskOffsetSum(
            s.task.subtopology, s.task.partition, s.offset_sum, s.task.named_topology or None
        )
        for s in info.task_offset_sums
    ]
    if v < 10 and any(s.named_topology is not None for s in sums):
        raise ValueError(f"version {v} cannot carry named topologies (Kafka needs version 10)")
    prev = tuple(WireTaskId(t.subtopology, t.partition) for t in info.prev_tasks)
    standby = tuple(WireTaskId(t.subtopology, t.partition) for t in info.standby_tasks)
    if carries_task_lists(v) and sums:
        if prev or standby:
            raise ValueError("give either prev_tasks/standby_tasks or task_offset_sums, not both")
        prev, standby = split_task_lists(
            (WireTaskId(s.topic_group_id, s.partition), s.offset_sum) for s in sums
        )
    return SubscriptionInfoData(
        version=v,
        process_id=UUID(info.process_id),
        latest_supported_version=(info.latest_supported_version or v) if v >= 3 else -1,
        prev_tasks=prev if carries_task_lists(v) else (),
        standby_tasks=standby if carries_task_lists(v) else (),
        user_end_point=info.user_end_point if v >= 2 else "",
        grouped_offset_sums=_grouped(sums) if 7 <= v <= 9 else (),
        task_offset_sums=tuple(sums) if v >= 10 else (),
        unique_field=info.unique_field if v >= 8 else 0,
        error_code=info.error_code if v >= 9 else 0,
        client_tags=tuple(ClientTag(t.key, t.value) for t in info.client_tags) if v >= 11 else (),
    )


def subscription_from_pb(
    sub: pb.ConsumerSubscription, version: int = CONSUMER_PROTOCOL_VERSION
) -> ConsumerProtocolSubscription:
    """What Kafka's ``serializeSubscription`` would write: topics sorted, owned partitions
    sorted and grouped by topic, a structured ``info`` encoded as Kafka Streams encodes it, a
    plain consumer's ``user_data_bytes`` as they are."""
    which = sub.WhichOneof("user_data")
    user_data: bytes | None = None
    if which == "info_bytes":
        user_data = sub.info_bytes
    elif which == "user_data_bytes":
        user_data = sub.user_data_bytes
    elif which == "info":
        user_data = encode_subscription_info(info_from_pb(sub.info))
    pairs = sorted({(tp.topic, tp.partition) for tp in sub.owned_partitions})
    owned = tuple(
        OwnedTopicPartitions(topic, tuple(p for _, p in group))
        for topic, group in groupby(pairs, key=lambda x: x[0])
    )
    return ConsumerProtocolSubscription(
        version=version,
        topics=tuple(sorted(sub.topics)),
        user_data=user_data,
        owned_partitions=owned,
        generation_id=sub.generation_id if sub.HasField("generation_id") else -1,
        rack_id=sub.rack_id or None,
    )
