"""Kafka's classic consumer assignors as pure functions: range, roundrobin, sticky and
cooperative-sticky, with KIP-881 rack awareness, equal to Kafka 4.3.1's answers; and kassign's
own ``rack-optimal`` (balanced, then fewest cross-rack partitions, then sticky, on min-cost flow).

Input ``ConsumerGroup`` (``model``), output ``GroupAssignment`` (``result``); ``ASSIGNORS``
maps the names to the assignors (``api``). docs/consumer-assignors.md describes each.
"""

from kassign.assignor.consumer.api import ASSIGNORS, KAFKA_ASSIGNORS, ConsumerAssignor, assign
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    AssignOptions,
    ConsumerGroup,
    Member,
    Topic,
    TopicPartition,
    consumer_group,
)
from kassign.assignor.consumer.result import (
    AssignmentReport,
    GroupAssignment,
    MemberAssignment,
    RackReason,
    RackStatus,
)

__all__ = [
    "ASSIGNORS",
    "DEFAULT_GENERATION",
    "KAFKA_ASSIGNORS",
    "AssignOptions",
    "AssignmentReport",
    "ConsumerAssignor",
    "ConsumerGroup",
    "GroupAssignment",
    "Member",
    "MemberAssignment",
    "RackReason",
    "RackStatus",
    "Topic",
    "TopicPartition",
    "assign",
    "consumer_group",
]
