"""Kafka's ``GeneralAssignmentBuilder``: the sticky assignors when subscriptions differ.

1. Keep each member's settled claims, except partitions of topics it no longer subscribes to
   or (rack mode) whose replicas miss its rack; dropping any means "revocation required".
2. Give each unassigned partition (topics with fewest subscribers first, then by name;
   partitions ascending) to the least-loaded subscriber (ties by member id): in rack mode
   first only to subscribers on one of its racks, then to any.
3. Balance: set aside topics with one subscriber and members that cannot change; then, pass
   after pass until nothing moves or the group is balanced (no member could take a partition
   of its topics from a member with two more than it), walk the partitions: send one back to
   its *previous* owner (the member with the latest generation below the group's newest that
   claimed it) if that owner has two fewer than the current one, else to the least-loaded
   subscriber if some subscriber has two fewer. Newly assigned partitions get a pass of their
   own first, unless something had to be revoked. Moves go through ``Movements``.
4. Unless every member started empty, keep the balanced result only if it lowers the balance
   score (the sum of load differences over all pairs of members).

Kafka's step 3 looks for a lighter subscriber on the partition's rack before looking at all
subscribers, but both branches make the same move, to the least-loaded subscriber wherever
it is: the rack preference changes nothing, so it is not repeated here.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import DEFAULT_GENERATION, Member, TopicPartition
from kassign.assignor.consumer.sticky_base import (
    MemberData,
    Ownership,
    RackInfo,
    StickyOutcome,
)
from kassign.assignor.consumer.sticky_movements import Movements
from kassign.assignor.errors import InvalidAssignment
from kassign.assignor.interrupt import checkpoint

__all__ = ["build"]


@dataclass(slots=True)
class _Builder:
    """Scratch state of one general assignment."""

    topics: Mapping[str, int]
    rack: RackInfo
    subscribed: dict[str, frozenset[str]]  # member -> subscribed topics with partitions
    subscribers: dict[str, int]  # topic -> number of subscribers
    subscribers_of: dict[str, list[str]]  # topic -> its subscribers
    current: dict[str, list[TopicPartition]]
    owner: dict[TopicPartition, str]
    previous: dict[TopicPartition, tuple[str, int]]
    keys: dict[str, bytes]
    max_sizes: dict[str, int]  # member -> partitions of its subscribed topics
    partitions_of: dict[str, list[TopicPartition]]  # topic -> its partitions, ascending
    movements: Movements = field(default_factory=Movements)

    def order(self, member: str) -> tuple[int, bytes]:
        """Kafka's ``SubscriptionComparator``: load, then member id."""
        return (len(self.current[member]), self.keys[member])

    def max_size(self, member: str) -> int:
        return self.max_sizes[member]


@dataclass(slots=True)
class _Lightest:
    """Step 2's least-loaded candidate, per candidate set (a topic's subscribers, or those of
    them on some racks) a heap of (load, member key, member). Loads only grow while partitions
    are handed out, so a stale entry is refreshed when it reaches the top, and the top, once
    fresh, is the member ``min(candidates, key=order)`` would return."""

    b: _Builder
    heaps: dict[tuple[str, frozenset[str] | None], list[tuple[int, bytes, str]]] = field(
        default_factory=dict
    )

    def pick(self, tp: TopicPartition, *, rack_local: bool) -> str | None:
        b = self.b
        racks = b.rack.racks_of(tp) if rack_local else None
        heap = self.heaps.get((tp.topic, racks))
        if heap is None:
            heap = self.heaps[(tp.topic, racks)] = [
                (len(b.current[m]), b.keys[m], m)
                for m in b.subscribers_of[tp.topic]
                if not (rack_local and b.rack.mismatch(m, tp))
            ]
            heapq.heapify(heap)
        while heap:
            load, key, member = heap[0]
            actual = len(b.current[member])
            if load == actual:
                heapq.heapreplace(heap, (load + 1, key, member))
                return member
            heapq.heapreplace(heap, (actual, key, member))
        return None


def build(
    topics: Mapping[str, int],
    rack: RackInfo,
    ownership: Ownership,
    members: list[Member],
    data: Mapping[str, MemberData],
) -> StickyOutcome:
    """The general assignment of every partition of ``topics`` (``members`` in hash order)."""
    subscribed = {m.member_id: frozenset(t for t in m.topics if t in topics) for m in members}
    b = _Builder(
        topics=topics,
        rack=rack,
        subscribed=subscribed,
        subscribers={t: sum(1 for s in subscribed.values() if t in s) for t in topics},
        subscribers_of={t: [m for m, s in subscribed.items() if t in s] for t in topics},
        current={m: list(tps) for m, tps in ownership.owned.items()},
        owner={},
        previous=_previous_owners(members, data, ownership.max_generation),
        keys={m.member_id: java_key(m.member_id) for m in members},
        max_sizes={m: sum(topics[t] for t in ts) for m, ts in subscribed.items()},
        partitions_of={t: [TopicPartition(t, p) for p in range(n)] for t, n in topics.items()},
    )
    sorted_topics = sorted(topics, key=lambda t: (b.subscribers[t], t))
    every = [tp for t in sorted_topics for tp in b.partitions_of[t]]
    revocation_required = _keep_owned(b, {m.member_id: frozenset(m.topics) for m in members})
    kept = {tp for tps in b.current.values() for tp in tps}
    b.owner = {tp: m for m, tps in b.current.items() for tp in tps}
    _balance(b, every, [tp for tp in every if tp not in kept], revocation_required)
    return StickyOutcome(b.current, None, rack)


def _previous_owners(
    members: list[Member], data: Mapping[str, MemberData], max_generation: int
) -> dict[TopicPartition, tuple[str, int]]:
    """Per partition, the claimant from the latest generation below the newest (Kafka's
    ``prevAssignment``); a claim without a generation counts as -1 once any member has one."""
    previous: dict[TopicPartition, tuple[str, int]] = {}
    for member in members:
        md = data[member.member_id]
        if md.generation is not None and md.generation < max_generation:
            generation = md.generation
        elif md.generation is None and max_generation > DEFAULT_GENERATION:
            generation = DEFAULT_GENERATION
        else:
            continue
        for tp in md.partitions:
            standing = previous.get(tp)
            if standing is None or generation > standing[1]:
                previous[tp] = (member.member_id, generation)
    return previous


def _keep_owned(b: _Builder, topics_of: Mapping[str, frozenset[str]]) -> bool:
    """Step 1; returns whether some claim had to be dropped (revocation required)."""
    dropped = False
    for member, claims in b.current.items():
        keep = [
            tp for tp in claims if tp.topic in topics_of[member] and not b.rack.mismatch(member, tp)
        ]
        dropped = dropped or len(keep) != len(claims)
        claims[:] = keep
    return dropped


def _balance(
    b: _Builder,
    every: list[TopicPartition],
    unassigned: list[TopicPartition],
    revocation_required: bool,
) -> None:
    """Steps 2 to 4."""
    initializing = all(not tps for tps in b.current.values())
    left = unassigned
    lightest = _Lightest(b)
    if b.rack.member_rack:
        left = [tp for tp in unassigned if not _give(b, lightest, tp, rack_local=True)]
    for tp in left:
        _give(b, lightest, tp, rack_local=False)

    movable = [tp for tp in every if b.subscribers[tp.topic] >= 2]
    new = [tp for tp in unassigned if b.subscribers[tp.topic] >= 2]
    fixed = {m: b.current.pop(m) for m in list(b.current) if not _can_change(b, m)}
    before = {m: list(tps) for m, tps in b.current.items()}
    owners_before = dict(b.owner)
    if not revocation_required:
        _reassign_until_balanced(b, new)
    moved = _reassign_until_balanced(b, movable)
    if not initializing and moved and _score(b.current) >= _score(before):
        b.current = before
        b.owner = owners_before
    b.current.update(fixed)


def _give(b: _Builder, lightest: _Lightest, tp: TopicPartition, *, rack_local: bool) -> bool:
    """Assign ``tp`` to its least-loaded subscriber (on its racks if ``rack_local``)."""
    member = lightest.pick(tp, rack_local=rack_local)
    if member is None:
        return False
    b.current[member].append(tp)
    b.owner[tp] = member
    return True


def _can_change(b: _Builder, member: str) -> bool:
    """Kafka's ``canConsumerParticipateInReassignment``."""
    mine = b.current[member]
    return len(mine) < b.max_size(member) or any(b.subscribers[tp.topic] >= 2 for tp in mine)


def _reassign_until_balanced(b: _Builder, partitions: list[TopicPartition]) -> bool:
    """Kafka's ``performReassignments``; returns whether anything moved.

    Kafka asks ``isBalanced`` before every partition; the answer changes only with a move, so
    a "no" is remembered until the next one (thousands of calls become one per move). Kafka
    then looks for a subscriber with two fewer than the owner: none can exist while the owner
    has at most one more than the least-loaded member of all (``floor``).
    """
    topics = {tp.topic for tp in partitions}
    subscribers = {t: [m for m in b.subscribers_of[t] if m in b.current] for t in topics}
    moved = False
    unbalanced = False  # isBalanced said no, and nothing moved since
    floor: int | None = None  # the lowest load, until the next move
    while True:
        modified = False
        for tp in partitions:
            checkpoint()
            if not unbalanced and _is_balanced(b):
                break
            unbalanced = True
            load = len(b.current[b.owner[tp]])
            previous = b.previous.get(tp)
            if previous is not None:
                home = previous[0]
                if home not in b.current:
                    raise InvalidAssignment(
                        "KAFKA_NULL_POINTER",
                        f"{tp}'s previous owner {home!r} cannot take part in the reassignment;"
                        " Kafka's assignor throws NullPointerException here",
                    )
                if load > len(b.current[home]) + 1:
                    _move(b, tp, home)
                    moved = modified = True
                    unbalanced, floor = False, None
                    continue
            if floor is None:
                floor = min(map(len, b.current.values()))
            if load <= floor + 1 or not subscribers[tp.topic]:
                continue
            lightest = min(subscribers[tp.topic], key=b.order)
            if load > len(b.current[lightest]) + 1:
                _move(b, tp, lightest)
                moved = modified = True
                unbalanced, floor = False, None
        if not modified:
            return moved


def _move(b: _Builder, tp: TopicPartition, new: str) -> None:
    """Move ``tp`` to ``new``, or the partition ``Movements`` says to move instead."""
    actual = b.movements.partition_to_move(tp, b.owner[tp], new)
    old = b.owner[actual]
    b.movements.move(actual, old, new)
    b.current[old].remove(actual)
    b.current[new].append(actual)
    b.owner[actual] = new


def _is_balanced(b: _Builder) -> bool:
    """Loads within one, or no member could take a partition of its topics from a member
    with two more than it (Kafka's ``isBalanced``)."""
    loads = {m: len(tps) for m, tps in b.current.items()}
    if min(loads.values()) >= max(loads.values()) - 1:
        return True
    heaviest: dict[str, int] = {}
    for member, load in loads.items():
        if load == b.max_size(member):
            continue
        for topic in b.subscribed[member]:
            top = heaviest.get(topic)
            if top is None:
                owners = map(b.owner.__getitem__, b.partitions_of[topic])
                top = heaviest[topic] = max(map(loads.__getitem__, owners))
            if top > load + 1:
                return False
    return True


def _score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """Kafka's balance score: the sum of load differences over all pairs of members."""
    loads = sorted(len(tps) for tps in assignment.values())
    return sum(load * (2 * i - len(loads) + 1) for i, load in enumerate(loads))
