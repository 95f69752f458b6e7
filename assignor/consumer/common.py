"""What Kafka's four consumer assignors share (``AbstractPartitionAssignor``'s part).

- ``partitions_per_topic``: the topics to assign, those some member subscribes to that have
  partitions in the metadata (Kafka skips the others);
- ``member_order``: static members by group instance id, then dynamic ones by member id
  (Kafka's ``MemberInfo`` order), the order ``range`` and ``roundrobin`` hand out partitions in;
- ``rack_reason``: KIP-881's switch, with its reason. Rack-aware assignment is worth doing only
  if some member has a rack that holds a replica, and not every partition already has a
  replica in every rack (then any placement is rack-local for whoever can be local at all);
  ``group_rack_reason`` that switch over a whole group, as Kafka's sticky assignors decide it;
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import ConsumerGroup, Member
from kassign.assignor.consumer.result import RackReason
from kassign.assignor.shared_objects import distinct_objects

__all__ = [
    "group_rack_reason",
    "member_order",
    "member_order_key",
    "partitions_per_topic",
    "rack_reason",
    "subscribed_topics",
    "subscription_matrix",
]

_TOPICS = operator.attrgetter("topics")


def subscribed_topics(members: Iterable[Member]) -> set[str]:
    """Every topic some member subscribes to. Members mostly share one topic list object (the
    service's decoder keeps equal lists as one), so each list object is read once."""
    return set().union(*distinct_objects(map(_TOPICS, members)))


def partitions_per_topic(group: ConsumerGroup) -> dict[str, int]:
    """Subscribed topics with at least one partition, by name, with their partition counts."""
    subscribed = subscribed_topics(group.members)
    counts = {t: group.partition_count(t) for t in sorted(subscribed)}
    return {t: n for t, n in counts.items() if n > 0}


def member_order_key(member: Member) -> tuple[int, bytes]:
    """Kafka's ``MemberInfo`` order: static members (by instance id) before dynamic ones."""
    if member.group_instance_id is not None:
        return (0, java_key(member.group_instance_id))
    return (1, java_key(member.member_id))


def member_order(members: Iterable[Member]) -> list[Member]:
    return sorted(members, key=member_order_key)


def rack_reason(
    member_racks: Iterable[str], partition_racks: Iterable[frozenset[str]]
) -> RackReason:
    """Kafka's ``useRackAwareAssignment`` over these members' racks and these partitions."""
    members = set(member_racks)
    if not members:
        return RackReason.NO_MEMBER_RACK
    partitions = list(partition_racks)
    every = frozenset().union(*partitions)
    if members.isdisjoint(every):
        return RackReason.NO_SHARED_RACK
    if all(racks == every for racks in partitions):
        return RackReason.EVERY_RACK_HAS_EVERY_PARTITION
    return RackReason.SOME_RACK_LACKS_A_PARTITION


def group_rack_reason(group: ConsumerGroup) -> RackReason:
    """The rack mode Kafka's sticky assignors would choose on this group, and why."""
    topics = partitions_per_topic(group)
    return rack_reason(
        (m.rack for m in group.members if m.rack is not None),
        (group.topics[t].partition_racks[p] for t, n in topics.items() for p in range(n)),
    )


def subscription_matrix(circle: Sequence[Member], names: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Whether the member at each place subscribes to each topic dealt: a row per distinct
    topic list (members mostly share a few), a column past the last for topics not dealt."""
    column = dict(zip(names, range(len(names)), strict=True))
    rows: dict[tuple[str, ...], npt.NDArray[np.bool_]] = {}
    subscribes = np.zeros((len(circle), len(names) + 1), dtype=bool)
    for place, member in enumerate(circle):
        row = rows.get(member.topics)
        if row is None:
            row = rows[member.topics] = np.zeros(len(names) + 1, dtype=bool)
            row[list(map(column.get, member.topics, repeat(len(names))))] = True
        subscribes[place] = row
    return subscribes
