"""A consumer group's shadow call (issue 26): Kafka's answer decoded and checked, then compared.

``ConsumerAssignRequest.shadow.kafka`` is what the group got from Kafka's own assignor
(``member_id`` and ``partitions`` read). It may differ from kassign's in anything an assignor may
choose; it may not name a member the request does not have, a partition the metadata lacks, nor
give a partition twice, nor come as runs (``assigned``, which would read as nothing): such an answer is INVALID_ARGUMENT naming ``shadow.kafka[i]...`` and
the member. ``journal_answer`` is kassign's answer in the same message form, for the journal.
"""

from __future__ import annotations

from collections.abc import Hashable

from kassign.assignor.consumer.model import TopicPartition
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.consumer.shadow import Answer, compare
from kassign.assignor.errors import InvalidRequest
from kassign.server.consumer.decode import DecodedConsumerRequest
from kassign.server.shadow import comparison_message, once
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["comparison", "decode_kafka_answer", "journal_answer"]


def decode_kafka_answer(
    shadow: cpb.ConsumerShadow, decoded: DecodedConsumerRequest
) -> dict[str, tuple[TopicPartition, ...]]:
    """Kafka's answer, member id -> partitions, checked against the decoded group."""
    members = {m.member_id for m in decoded.group.members}
    topics = decoded.group.topics
    given: dict[Hashable, str] = {}
    seen: dict[Hashable, str] = {}
    answer = {}
    for i, member in enumerate(shadow.kafka):
        where, name = f"shadow.kafka[{i}]", member.member_id
        if name not in members:
            raise InvalidRequest(
                "not a member of this group", field=f"{where}.member_id", member=name
            )
        once(given, name, f"{where}.member_id", name, "member")
        if member.HasField("assigned"):  # not silently read as nothing
            raise InvalidRequest(
                "Kafka's answer is read from partitions, not runs",
                field=f"{where}.assigned",
                member=name,
            )
        partitions = []
        for j, tp in enumerate(member.partitions):
            field = f"{where}.partitions[{j}]"
            topic = topics.get(tp.topic)
            if topic is None or not 0 <= tp.partition < topic.partitions:
                raise InvalidRequest(
                    f"{tp.topic}-{tp.partition} is not a partition of the metadata",
                    field=field,
                    member=name,
                )
            partition = TopicPartition(tp.topic, tp.partition)
            once(seen, partition, field, name, f"partition {tp.topic}-{tp.partition}")
            partitions.append(partition)
        answer[name] = tuple(sorted(partitions))
    return answer


def comparison(
    shadow: cpb.ConsumerShadow,
    decoded: DecodedConsumerRequest,
    kafka: Answer,
    assignment: GroupAssignment,
) -> common_pb2.ShadowComparison:
    """The report's ``shadow``: Kafka's answer against kassign's."""
    kassign = {m.member_id: m.partitions for m in assignment.members}
    group, options = decoded.group, decoded.options
    return comparison_message(
        compare(group, decoded.assignor, options, kafka, kassign, shadow.kafka_assignor)
    )


def journal_answer(assignment: GroupAssignment) -> list[cpb.ConsumerMemberAssignment]:
    """kassign's answer as ``shadow.kafka`` carries Kafka's: member id and partitions."""
    return [
        cpb.ConsumerMemberAssignment(
            member_id=m.member_id,
            partitions=[common_pb2.TopicPartition(topic=t, partition=p) for t, p in m.partitions],
        )
        for m in assignment.members
    ]
