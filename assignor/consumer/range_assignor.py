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
balance per topic comes first, co-partitioning second, rack locality third. A member's quota
in a topic is ``n // c``, or one more while fewer than ``n % c`` members have taken one more.

Partitions are ids (``columns``), members their places in member order, no object per
partition (issue 24). When no topic needs rack matching (always, without racks), the plain
ranges are laid out for all topics at once: each topic's partitions in order, cut into its
subscribers' quotas. When some topic does, every choice reads the counts the one before left,
a step per partition (co-partitioned topics) or per member and topic that no array step
reproduces: those passes run in the compiled core (``kassign_native.range_with_racks``,
``assignor/native/src/range.rs``; issue 24: 40,000 Python steps were 97% of a 40,000-partition
group's assignment).
"""

from __future__ import annotations

from dataclasses import dataclass

import kassign_native
import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.columns import Ids, PartitionSpace, replica_rack_sets
from kassign.assignor.consumer.common import (
    member_order,
    partitions_per_topic,
    rack_reason,
    subscription_matrix,
)
from kassign.assignor.consumer.model import ConsumerGroup, Member
from kassign.assignor.consumer.result import GroupAssignment, RackReason, group_assignment
from kassign.assignor.interrupt import checkpoint

__all__ = ["NAME", "assign_range"]

NAME = "range"


def assign_range(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``RangeAssignor.assign`` on ``group``."""
    circle = member_order(group.members)
    counts = partitions_per_topic(group)
    subscribes = subscription_matrix(circle, list(counts))
    subscribers = [np.flatnonzero(subscribes[:, i]) for i in range(len(counts))]
    racks = _RackCodes.of(circle)
    topic_racks = [racks.among(places) for places in subscribers]
    space = PartitionSpace.of(counts)  # topics by name, as ``counts``
    replicas = _Replicas.of(group, space, racks) if any(topic_racks) else None
    reasons = _topic_reasons(space, topic_racks, replicas)
    if replicas is not None and any(r.enables for r in reasons):
        passes = _rack_passes(space, subscribers, [bool(r) for r in topic_racks], reasons)
        owner = _rack_matched_owners(space, subscribers, racks, replicas, passes)
    else:
        owner = _plain_owners(list(counts.values()), subscribers)
    across = None if replicas is None else replicas.across(racks, owner)
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
    return group_assignment(
        NAME, group, target, claims=claims, rack_reason=reason, cross_rack=across
    )


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


@dataclass(frozen=True, slots=True)
class _Replicas:
    """The partitions' replica racks as numbers: each id's rack set (``set_of``, among the
    distinct ``rack_sets``), and per set and member rack (``_RackCodes.names``) whether the
    set holds it."""

    rack_sets: tuple[frozenset[str], ...]
    set_of: Ids
    set_has: npt.NDArray[np.bool_]

    @staticmethod
    def of(group: ConsumerGroup, space: PartitionSpace, racks: _RackCodes) -> _Replicas:
        rack_sets, set_of = replica_rack_sets(group.topics, space)
        set_has = np.array([[r in s for r in racks.names] for s in rack_sets], dtype=bool)
        return _Replicas(rack_sets, set_of, set_has.reshape(len(rack_sets), len(racks.names)))

    def across(self, racks: _RackCodes, owner: Ids) -> int:
        """How many partitions (ids, taken by the places in ``owner``) are read from a rack
        holding none of their replicas (a member without a rack reads none across)."""
        rack = racks.at[owner]
        racked = rack >= 0
        return int(np.count_nonzero(~self.set_has[self.set_of[racked], rack[racked]]))


def _topic_reasons(
    space: PartitionSpace, topic_racks: list[list[str]], replicas: _Replicas | None
) -> list[RackReason]:
    """KIP-881's switch for each topic, over its subscribers' racks and its partitions' (the
    distinct rack sets among them decide it)."""
    if replicas is None:
        return [rack_reason((), ())] * len(topic_racks)
    topics = len(topic_racks)
    topic = np.repeat(np.arange(topics, dtype=np.int64), np.diff(space.offsets))
    has = np.zeros((topics, len(replicas.rack_sets)), dtype=bool)  # per topic, its sets
    has[topic, replicas.set_of] = True
    return [
        rack_reason(among, [replicas.rack_sets[i] for i in np.flatnonzero(row).tolist()])
        if among
        else rack_reason((), ())
        for among, row in zip(topic_racks, has, strict=True)
    ]


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


def _rack_passes(
    space: PartitionSpace,
    subscribers: list[Ids],
    racked: list[bool],
    reasons: list[RackReason],
) -> list[list[int]]:
    """The rack-matched passes, as Kafka runs them: topics (by index) grouped by subscribers
    and, if a subscriber has a rack, partition count, groups in order of their first topic;
    a group of several is one co-partitioned pass, a single topic a pass of its own if it
    needs rack matching. (Topics whose subscribers have no rack group with a count of zero:
    such a group has no partition to pass over.)"""
    sizes = np.diff(space.offsets).tolist()
    groups: dict[tuple[bytes, int], list[int]] = {}
    for t, (places, has_racks) in enumerate(zip(subscribers, racked, strict=True)):
        key = (places.tobytes(), sizes[t] if has_racks else 0)
        groups.setdefault(key, []).append(t)
    return [
        together
        for (_, size), together in groups.items()
        if (len(together) > 1 and size > 0) or (len(together) == 1 and reasons[together[0]].enables)
    ]


def _rack_matched_owners(
    space: PartitionSpace,
    subscribers: list[Ids],
    racks: _RackCodes,
    replicas: _Replicas,
    passes: list[list[int]],
) -> Ids:
    """Each partition id's taker after the rack-matched ``passes`` and the plain ranges (the
    compiled core, without the GIL)."""
    sizes = np.fromiter(map(len, subscribers), dtype=np.int64, count=len(subscribers))
    owner: Ids = np.frombuffer(
        kassign_native.range_with_racks(
            offsets=space.offsets.tolist(),
            subscribers=np.concatenate([np.zeros(0, dtype=np.int64), *subscribers]).tobytes(),
            subscriber_ends=np.cumsum(sizes).tolist(),
            passes=passes,
            member_rack=racks.at.tolist(),
            set_of=np.ascontiguousarray(replicas.set_of, dtype=np.int64).tobytes(),
            set_has=replicas.set_has.ravel().tolist(),
            racks=len(racks.names),
            checkpoint=checkpoint,
        ),
        dtype=np.int64,
    )
    return owner
