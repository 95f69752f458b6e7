"""``range``: Kafka's ``RangeAssignor``, per topic contiguous ranges, rack-aware (KIP-881).

For each topic, its subscribers in ``member_order`` take consecutive partitions: with ``n``
partitions and ``c`` subscribers, each gets ``n // c`` and the first ``n % c`` one more. Members
subscribed to the same topics with the same partition counts therefore get the same partition
numbers of each (co-partitioning, what joins rely on).

With racks, a topic needs rack matching when ``rack_reason`` says so for its subscribers and
partitions. If any topic does, before the plain ranges:

- topics with the same subscribers (same racks) and the same partition count are assigned
  together, partition by partition: partition ``p`` of all of them goes to the first member
  whose rack holds a replica of every one and that has room in every one (a member without a
  rack matches anything). Kafka does this for such groups even when none of their topics needs
  rack matching, as long as some topic in the group does;
- any other topic that needs it: each member in order takes, up to its quota, the lowest
  unassigned partitions with a replica in its rack.

What is left is then filled by plain ranges, each member up to its quota. Quotas never change:
balance per topic comes first, co-partitioning second, rack locality third.

When no topic needs rack matching (always, without racks), the plain ranges are laid out as
partition ids (``columns``) for all topics at once: each topic's partitions in order, cut into
its subscribers' quotas, no object per partition (issue 24).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.columns import Ids, PartitionSpace
from kassign.assignor.consumer.common import (
    member_order,
    partitions_per_topic,
    rack_reason,
    subscription_matrix,
)
from kassign.assignor.consumer.model import ConsumerGroup, Member, Topic, TopicPartition
from kassign.assignor.consumer.result import GroupAssignment, RackReason, group_assignment

__all__ = ["NAME", "assign_range"]

NAME = "range"

Assignment = dict[str, list[TopicPartition]]


@dataclass(slots=True)
class _TopicState:
    """One topic's scratch state: its subscribers, the partitions taken and each one's quota.

    The partitions left are read through ``lowest``: per rack (``None``: any) the topic's
    partitions on it ascending and a cursor before which all are taken, so a topic's passes
    walk each list once instead of rescanning the partitions left for every member.
    """

    topic: str
    consumers: tuple[tuple[str, str | None], ...]  # (member id, rack) in member order
    partition_racks: dict[int, frozenset[str]]  # empty unless a subscriber has a rack
    reason: RackReason
    left: int
    base: int
    extra: int
    taken: bytearray
    assigned: dict[str, int] = field(default_factory=dict)
    rack_of: dict[str, str | None] = field(default_factory=dict)
    on_rack: dict[str | None, list[int]] = field(default_factory=dict)
    cursor: dict[str | None, int] = field(default_factory=dict)

    def racks_match(self, consumer: str, partition: int) -> bool:
        rack = self.rack_of[consumer]
        return rack is None or rack in self.partition_racks.get(partition, frozenset())

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.base + (1 if self.extra > 0 else 0) - self.assigned.get(consumer, 0))

    def lowest(self, rack: str | None, count: int) -> list[int]:
        """The ``count`` lowest partitions left with a replica on ``rack`` (``None``: any)."""
        order = self.on_rack.get(rack)
        if order is None:
            if rack is None:
                order = list(range(len(self.taken)))
            else:
                order = [p for p, racks in self.partition_racks.items() if rack in racks]
            self.on_rack[rack] = order
        i, taken = self.cursor.get(rack, 0), self.taken
        if rack is None and i + count <= len(order) and taken.find(1, i, i + count) < 0:
            self.cursor[rack] = i + count  # the next ``count`` are all left (order: every one)
            return order[i : i + count]
        chosen: list[int] = []
        while len(chosen) < count and i < len(order):
            if not taken[order[i]]:
                chosen.append(order[i])
            i += 1
        self.cursor[rack] = i
        return chosen

    def give(self, consumer: str, partitions: list[int], assignment: Assignment) -> None:
        assignment[consumer].extend([TopicPartition(self.topic, p) for p in partitions])
        count = self.assigned.get(consumer, 0) + len(partitions)
        self.assigned[consumer] = count
        if count > self.base:
            self.extra -= 1
        for p in partitions:
            self.taken[p] = 1
        self.left -= len(partitions)


def assign_range(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``RangeAssignor.assign`` on ``group``."""
    circle = member_order(group.members)
    counts = partitions_per_topic(group)
    subscribes = subscription_matrix(circle, list(counts))
    subscribers = [np.flatnonzero(subscribes[:, i]) for i in range(len(counts))]
    racks = _RackCodes.of(circle)
    reasons = [
        _topic_reason(group.topics[topic], racks.among(places))
        for topic, places in zip(counts, subscribers, strict=True)
    ]
    if any(r.enables for r in reasons):
        return _assign_rack_matched(group)
    space = PartitionSpace.of(counts)
    owner = _plain_owners(list(counts.values()), subscribers)
    order = np.argsort(owner, kind="stable")  # by member; ids ascending within each
    ends = np.cumsum(np.bincount(owner, minlength=len(circle)))
    target = {
        m.member_id: space.partitions(order[end - size : end])
        for m, end, size in zip(
            circle, ends.tolist(), np.diff(ends, prepend=0).tolist(), strict=True
        )
    }
    reason = _most_telling(group, reasons)
    claims = {m.member_id: m.owned_partitions for m in group.members}
    return group_assignment(NAME, group, target, claims=claims, rack_reason=reason)


@dataclass(frozen=True, slots=True)
class _RackCodes:
    """The members' racks as numbers (their places in member order), so that a topic's
    subscribers' racks are found without a step per subscriber."""

    names: list[str]
    at: Ids  # per place, the rack's index in ``names``, -1 for none

    @staticmethod
    def of(circle: list[Member]) -> _RackCodes:
        names = sorted({m.rack for m in circle if m.rack is not None})
        code = {r: i for i, r in enumerate(names)}
        at = [-1 if m.rack is None else code[m.rack] for m in circle]
        return _RackCodes(names, np.array(at, dtype=np.int64))

    def among(self, places: Ids) -> list[str]:
        """The distinct racks of the members at ``places``."""
        if not self.names:
            return []
        found = np.unique(self.at[places])
        return [self.names[i] for i in found[found >= 0].tolist()]


def _topic_reason(topic: Topic, racks: list[str]) -> RackReason:
    """KIP-881's switch for one topic, over its subscribers' racks and its partitions'."""
    if not racks:
        return rack_reason((), ())
    return rack_reason(racks, set(topic.partition_racks))


def _plain_owners(counts: list[int], subscribers: list[npt.NDArray[np.int64]]) -> Ids:
    """Each partition id's taker (its place in member order): a topic's ``n`` partitions in
    order, its ``c`` subscribers taking ``n // c`` each and the first ``n % c`` one more."""
    owners = [np.zeros(0, dtype=np.int64)]
    for n, places in zip(counts, subscribers, strict=True):
        c = len(places)
        quotas = np.full(c, n // c, dtype=np.int64)
        quotas[: n % c] += 1
        owners.append(np.repeat(places, quotas))
    return np.concatenate(owners)


def _most_telling(group: ConsumerGroup, reasons: list[RackReason]) -> RackReason:
    """The most telling of the topics' reasons (``RackReason``'s order), or with no topic the
    members' racks' alone."""
    if not reasons:
        return rack_reason((m.rack for m in group.members if m.rack is not None), ())
    order = list(RackReason)
    return max(reasons, key=order.index)


def _assign_rack_matched(group: ConsumerGroup) -> GroupAssignment:
    """Some topic needs rack matching: the topics' passes, partition by partition."""
    ordered = [(m, frozenset(m.topics)) for m in member_order(group.members)]
    states = [
        _topic_state(group, ordered, topic, count)
        for topic, count in partitions_per_topic(group).items()
    ]
    assignment: Assignment = {m.member_id: [] for m in group.members}
    if any(s.reason.enables for s in states):
        _assign_with_rack_matching(states, assignment)
    for state in states:
        _assign_ranges(state, assignment, rack_matched=False)
    claims = {m.member_id: m.owned_partitions for m in group.members}
    return group_assignment(
        NAME, group, assignment, claims=claims, rack_reason=_group_reason(group, states)
    )


def _topic_state(
    group: ConsumerGroup, ordered: list[tuple[Member, frozenset[str]]], topic: str, count: int
) -> _TopicState:
    """``ordered``: the group's members in ``member_order``, each with its topics."""
    consumers = tuple((m.member_id, m.rack) for m, topics in ordered if topic in topics)
    racks = [r for _, r in consumers if r is not None]
    topic_racks = group.topics[topic].partition_racks
    partition_racks = dict(enumerate(topic_racks)) if racks else {}
    return _TopicState(
        topic=topic,
        consumers=consumers,
        partition_racks=partition_racks,
        reason=rack_reason(racks, partition_racks.values()),
        left=count,
        base=count // len(consumers),
        extra=count % len(consumers),
        taken=bytearray(count),
        rack_of=dict(consumers),
    )


def _assign_ranges(state: _TopicState, assignment: Assignment, *, rack_matched: bool) -> None:
    """Each subscriber in order takes its quota of the lowest partitions left, on its rack if
    ``rack_matched`` (a member without a rack matches any)."""
    for consumer, rack in state.consumers:
        if not state.left:
            break
        quota = state.max_assignable(consumer)
        chosen = state.lowest(rack if rack_matched else None, quota)
        if chosen:
            state.give(consumer, chosen, assignment)


def _assign_with_rack_matching(states: list[_TopicState], assignment: Assignment) -> None:
    """Rack-matched placement first: co-partitioned topics together, others one by one."""
    groups: dict[tuple[tuple[tuple[str, str | None], ...], int], list[_TopicState]] = {}
    for state in states:
        groups.setdefault((state.consumers, len(state.partition_racks)), []).append(state)
    for (consumers, partitions), together in groups.items():
        if len(together) > 1:
            _assign_co_partitioned(consumers, partitions, together, assignment)
        elif together[0].reason.enables:
            _assign_ranges(together[0], assignment, rack_matched=True)


def _assign_co_partitioned(
    consumers: tuple[tuple[str, str | None], ...],
    partitions: int,
    states: list[_TopicState],
    assignment: Assignment,
) -> None:
    """Partition ``p`` of every topic to the first member that matches and has room in all.

    A member matches partition ``p`` of every topic when it has no rack or its rack is in the
    intersection of their racks; when that is empty and every member has a rack, nobody does.
    """
    remaining = [c for c, _ in consumers]
    rack_of = dict(consumers)
    rackless = any(r is None for _, r in consumers)
    for p in range(partitions):
        common = frozenset.intersection(*(s.partition_racks.get(p, frozenset()) for s in states))
        if not common and not rackless:
            continue
        chosen = next(
            (
                c
                for c in remaining
                if (rack_of[c] is None or rack_of[c] in common)
                and all(s.max_assignable(c) > 0 for s in states)
            ),
            None,
        )
        if chosen is None:
            continue
        for state in states:
            state.give(chosen, [p], assignment)
        if all(s.max_assignable(chosen) == 0 for s in states):
            remaining.remove(chosen)
            if not remaining:
                break


def _group_reason(group: ConsumerGroup, states: list[_TopicState]) -> RackReason:
    """On if any topic used racks; otherwise the most telling topic's reason (``RackReason``)."""
    return _most_telling(group, [s.reason for s in states])
