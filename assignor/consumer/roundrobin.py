"""``roundrobin``: Kafka's ``RoundRobinAssignor``, one partition at a time around the group.

All subscribed partitions, topics by name and partitions ascending, are dealt to the members in
``member_order`` (static members first) like cards: each goes to the next member in the circle
that subscribes to its topic, skipping those that do not. Racks and previous ownership play no
part. With identical subscriptions counts differ by at most one; with unequal ones a member can
end up with many more than another (the sticky assignors balance that).
"""

from __future__ import annotations

import itertools
from itertools import chain

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.common import (
    member_order,
    partitions_per_topic,
    subscription_matrix,
)
from kassign.assignor.consumer.model import (
    ConsumerGroup,
    Member,
    TopicPartition,
    as_topic_partitions,
    topic_partitions,
)
from kassign.assignor.consumer.result import GroupAssignment, RackReason, group_assignment

__all__ = ["NAME", "assign_roundrobin"]

NAME = "roundrobin"

Places = npt.NDArray[np.int64]
_TABLE = 1 << 20  # distinct replica rack sets x member racks counted in one table, at most


def assign_roundrobin(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``RoundRobinAssignor.assign`` on ``group``."""
    circle = member_order(group.members)
    counts = partitions_per_topic(group)
    dealt = set(counts)
    if all(dealt.issubset(m.topics) for m in circle):
        assignment = _dealt_to_all(circle, counts)
        taker = np.arange(sum(counts.values()), dtype=np.int64) % max(len(circle), 1)
    else:
        taker = _takers(circle, counts)
        assignment = _grouped(circle, counts, taker)
    claims = {m.member_id: m.owned_partitions for m in group.members}
    return group_assignment(
        NAME,
        group,
        assignment,
        claims=claims,
        rack_reason=RackReason.NOT_RACK_AWARE,
        cross_rack=_cross_rack(group, circle, counts, taker),
    )


def _dealt_to_all(circle: list[Member], counts: dict[str, int]) -> dict[str, list[TopicPartition]]:
    """Every member subscribes to every topic dealt: nobody is skipped, so the ``k``-th
    partition goes to the ``k``-th member around the circle, ``k mod len(circle)``."""
    every = list(chain.from_iterable(topic_partitions(t, range(n)) for t, n in counts.items()))
    return {m.member_id: every[i :: len(circle)] for i, m in enumerate(circle)}


def _dealt_to_subscribers(
    circle: list[Member], counts: dict[str, int]
) -> dict[str, list[TopicPartition]]:
    """Each member's partitions in the order the deal gives them (``_takers``)."""
    return _grouped(circle, counts, _takers(circle, counts))


def _takers(circle: list[Member], counts: dict[str, int]) -> Places:
    """The deal a topic at a time: its partitions go round its subscribers (their places in
    the circle, ascending) from the first at or after the turn, and the turn moves past the
    last taker. Each partition's taker (its place in the circle), written down a topic at a
    time, the subscribers rotated and repeated: the partitions of ``counts`` laid end to end."""
    subscribes = subscription_matrix(circle, list(counts))
    takers = [np.zeros(0, dtype=np.int64)]
    turn = 0
    for topic_id, count in enumerate(counts.values()):
        places = np.flatnonzero(subscribes[:, topic_id])  # a counted topic has a subscriber
        rotated = np.roll(places, -(int(np.searchsorted(places, turn)) % len(places)))
        takers.append(rotated[np.arange(count) % len(rotated)])
        turn = (int(rotated[(count - 1) % len(rotated)]) + 1) % len(circle)
    return np.concatenate(takers)


def _grouped(
    circle: list[Member], counts: dict[str, int], taker: Places
) -> dict[str, list[TopicPartition]]:
    """The partitions grouped by taker with one stable sort, which keeps each member's in the
    order the deal gives them; only then is each partition built, in that order."""
    names = list(counts)
    topic_ids = np.repeat(np.arange(len(names), dtype=np.int64), list(counts.values()))
    numbers = np.concatenate([np.zeros(0, dtype=np.int64), *map(np.arange, counts.values())])
    order = np.argsort(taker, kind="stable")
    topics = map(names.__getitem__, topic_ids[order].tolist())
    dealt = as_topic_partitions(zip(topics, numbers[order].tolist(), strict=True))
    taken = np.bincount(taker, minlength=len(circle))
    ends = np.cumsum(taken).tolist()
    return {
        m.member_id: list(dealt[end - n : end])
        for m, end, n in zip(circle, ends, taken.tolist(), strict=True)
    }


def _cross_rack(
    group: ConsumerGroup, circle: list[Member], counts: dict[str, int], taker: Places
) -> int | None:
    """Partitions dealt to a member with a rack that holds none of their replicas, from each
    partition's taker: a table of the distinct replica rack sets against the members' racks.
    ``None`` (counted by ``group_assignment``) when that table would be large."""
    racks = sorted({m.rack for m in circle if m.rack is not None})
    if not racks:
        return 0
    replicas = chain.from_iterable(group.topics[t].partition_racks for t in counts)
    first: dict[frozenset[str], int] = {}  # each distinct set, and where it first comes
    seen = np.fromiter(
        map(first.setdefault, replicas, itertools.count()), dtype=np.int64, count=len(taker)
    )
    if len(first) * len(racks) > _TABLE:
        return None
    distinct = list(first)
    row = np.zeros(len(seen), dtype=np.int64)  # a first place's row in the table
    row[list(first.values())] = np.arange(len(first))
    sets = row[seen]
    rack_of = {rack: i for i, rack in enumerate(racks)}
    place_rack = np.array([-1 if m.rack is None else rack_of[m.rack] for m in circle])
    local = np.array([rack in held for held in distinct for rack in racks], dtype=bool)
    local = local.reshape(len(distinct), len(racks))
    rack = place_rack[taker]
    racked = rack >= 0
    return int(np.count_nonzero(~local[sets[racked], rack[racked]]))
