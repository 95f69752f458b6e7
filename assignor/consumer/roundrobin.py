"""``roundrobin``: Kafka's ``RoundRobinAssignor``, one partition at a time around the group.

All subscribed partitions, topics by name and partitions ascending, are dealt to the members in
``member_order`` (static members first) like cards: each goes to the next member in the circle
that subscribes to its topic, skipping those that do not. Racks and previous ownership play no
part. With identical subscriptions counts differ by at most one; with unequal ones a member can
end up with many more than another (the sticky assignors balance that).
"""

from __future__ import annotations

import bisect
from collections import Counter

from kassign.assignor.consumer.common import member_order, partitions_per_topic
from kassign.assignor.consumer.model import ConsumerGroup, Member, TopicPartition, topic_partitions
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
    every = [tp for topic, count in counts.items() for tp in topic_partitions(topic, range(count))]
    return {m.member_id: every[i :: len(circle)] for i, m in enumerate(circle)}


def _dealt_to_subscribers(
    circle: list[Member], counts: dict[str, int]
) -> dict[str, list[TopicPartition]]:
    """The deal a topic at a time: its partitions go round its subscribers (their places in
    the circle, ascending) from the first at or after the turn, and the turn moves past the
    last taker. Each partition's taker is written down a topic at a time (the subscribers
    rotated and repeated), then the partitions are grouped by taker with one stable sort,
    which keeps each member's partitions in the order the deal gives them."""
    places: dict[str, list[int]] = {topic: [] for topic in counts}
    for place, member in enumerate(circle):
        for topic in frozenset(member.topics).intersection(counts):
            places[topic].append(place)
    taker_of: list[int] = []
    every: list[TopicPartition] = []
    turn = 0
    for topic, count in counts.items():
        takers = places[topic]  # a counted topic has a subscriber
        first = bisect.bisect_left(takers, turn) % len(takers)
        rotated = takers[first:] + takers[:first]
        taker_of.extend((rotated * (count // len(rotated) + 1))[:count])
        every.extend(topic_partitions(topic, range(count)))
        turn = (rotated[(count - 1) % len(rotated)] + 1) % len(circle)
    dealt = list(map(every.__getitem__, sorted(range(len(every)), key=taker_of.__getitem__)))
    taken = Counter(taker_of)
    assignment: dict[str, list[TopicPartition]] = {}
    start = 0
    for place, member in enumerate(circle):
        assignment[member.member_id] = dealt[start : start + taken[place]]
        start += taken[place]
    return assignment
