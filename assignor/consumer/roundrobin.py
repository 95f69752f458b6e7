"""``roundrobin``: Kafka's ``RoundRobinAssignor``, one partition at a time around the group.

All subscribed partitions, topics by name and partitions ascending, are dealt to the members in
``member_order`` (static members first) like cards: each goes to the next member in the circle
that subscribes to its topic, skipping those that do not. Racks and previous ownership play no
part. With identical subscriptions counts differ by at most one; with unequal ones a member can
end up with many more than another (the sticky assignors balance that).
"""

from __future__ import annotations

from kassign.assignor.consumer.common import member_order, partitions_per_topic
from kassign.assignor.consumer.model import ConsumerGroup, Member, TopicPartition
from kassign.assignor.consumer.result import GroupAssignment, RackReason, group_assignment

__all__ = ["NAME", "assign_roundrobin"]

NAME = "roundrobin"


def assign_roundrobin(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``RoundRobinAssignor.assign`` on ``group``."""
    circle = member_order(group.members)
    counts = partitions_per_topic(group)
    dealt = set(counts)
    if all(dealt.issubset(m.topics) for m in circle):
        assignment = _dealt_to_all(circle, counts)
    else:
        assignment = _dealt_to_subscribers(circle, counts)
    claims = {m.member_id: m.owned_partitions for m in group.members}
    return group_assignment(
        NAME, group, assignment, claims=claims, rack_reason=RackReason.NOT_RACK_AWARE
    )


def _dealt_to_all(circle: list[Member], counts: dict[str, int]) -> dict[str, list[TopicPartition]]:
    """Every member subscribes to every topic dealt: nobody is skipped, so the ``k``-th
    partition goes to the ``k``-th member around the circle, ``k mod len(circle)``."""
    every = [TopicPartition(topic, p) for topic, count in counts.items() for p in range(count)]
    return {m.member_id: every[i :: len(circle)] for i, m in enumerate(circle)}


def _dealt_to_subscribers(
    circle: list[Member], counts: dict[str, int]
) -> dict[str, list[TopicPartition]]:
    subscribed = [frozenset(m.topics) for m in circle]
    assignment: dict[str, list[TopicPartition]] = {m.member_id: [] for m in circle}
    turn = 0
    for topic, count in counts.items():
        for partition in range(count):
            while topic not in subscribed[turn]:
                turn = (turn + 1) % len(circle)
            assignment[circle[turn].member_id].append(TopicPartition(topic, partition))
            turn = (turn + 1) % len(circle)
    return assignment
