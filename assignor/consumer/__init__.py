"""Kafka's classic consumer assignors as pure functions: range, roundrobin, sticky and
cooperative-sticky, with KIP-881 rack awareness, equal to Kafka 4.3.1's answers.

Input ``ConsumerGroup`` (``model``), output ``GroupAssignment`` (``result``); ``ASSIGNORS``
maps Kafka's names to the assignors (``api``). docs/consumer-assignors.md describes each.
"""

from kassign.assignor.consumer.api import ASSIGNORS, ConsumerAssignor, assign
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
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
)

__all__ = [
    "ASSIGNORS",
    "DEFAULT_GENERATION",
    "AssignmentReport",
    "ConsumerAssignor",
    "ConsumerGroup",
    "GroupAssignment",
    "Member",
    "MemberAssignment",
    "RackReason",
    "Topic",
    "TopicPartition",
    "assign",
    "consumer_group",
]
