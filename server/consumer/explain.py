"""A ``ConsumerExplanation`` as ``ConsumerAssignResponse.explanation``: only when the request
asked, so a default answer keeps its bytes (docs/explanations.md); load figures only under
balance LOAD, so a COUNT answer's explanation keeps its bytes too."""

from __future__ import annotations

from kassign.assignor.consumer.explain import ConsumerExplanation
from kassign.server.placement import RULES
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["add_consumer_explanation"]


def add_consumer_explanation(
    response: cpb.ConsumerAssignResponse, explanation: ConsumerExplanation
) -> None:
    message = response.explanation
    for member in explanation.members:
        told = message.members.add(
            member_id=member.member_id,
            rack_id=member.rack_id or "",
            owned=member.owned,
            assigned=member.assigned,
        )
        if member.load is not None and member.capacity is not None:  # balance LOAD only
            told.load, told.capacity = member.load, member.capacity
    for story in explanation.partitions:
        part = message.partitions.add(
            partition=common_pb2.TopicPartition(
                topic=story.partition.topic, partition=story.partition.partition
            ),
            member_id=story.member_id or "",
            previous_owners=list(story.previous_owners),
            replica_racks=list(story.replica_racks),
            rule=RULES[story.rule],
            reason=story.reason,
        )
        if story.load is not None:
            part.load = story.load
