"""Kafka's ``ConstrainedAssignmentBuilder``: the sticky assignors when subscriptions are equal.

With ``P`` partitions and ``C`` members every member ends with ``P // C`` (the minimum quota)
or one more (the maximum), and exactly ``P % C`` members with the maximum:

1. Keep claims, member by member in Kafka's map order (``Ownership.owned``): drop partitions
   whose replicas miss the member's rack (rack mode) or that several members claimed; sort the
   rest by (partition, topic); keep them all if under the minimum (the member stays
   *under-minimum*), else the first maximum-quota ones while members at the maximum are still
   wanted, else the first minimum-quota ones (the member may still take one more: *at-minimum*).
   What is not kept may be revoked.
2. The partitions left, topics by name and partitions ascending, in rack mode stably sorted so
   that partitions local to the fewest members go first, are dealt in rack mode to members on
   one of their replicas' racks: under-minimum members round-robin first, else the first
   at-minimum member on such a rack.
3. Plain round-robin of the rest: under-minimum members in member-id order, then at-minimum
   ones, until the quotas are met.

A partition given to a member other than the one that dropped it, or one claimed by several,
is *transferring*: cooperative-sticky withholds it this round.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain, filterfalse

from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import TopicPartition, topic_partitions
from kassign.assignor.consumer.sticky_base import Ownership, RackInfo, StickyOutcome
from kassign.assignor.errors import InvalidAssignment

__all__ = ["build"]

_PARTITION_THEN_TOPIC = operator.itemgetter(1, 0)


@dataclass(slots=True)
class _Builder:
    """Scratch state of one constrained assignment (Kafka's builder fields, one to one)."""

    rack: RackInfo
    several: frozenset[TopicPartition]
    min_quota: int
    max_quota: int
    expected_over: int
    assignment: dict[str, list[TopicPartition]]
    over: int = 0
    under_min: list[str] = field(default_factory=list)
    at_min: list[str] = field(default_factory=list)
    maybe_revoked: dict[TopicPartition, str] = field(default_factory=dict)
    transferring: dict[TopicPartition, str] = field(default_factory=dict)


def build(topics: Mapping[str, int], rack: RackInfo, ownership: Ownership) -> StickyOutcome:
    """The constrained assignment of every partition of ``topics``."""
    members = list(ownership.owned)
    total = sum(topics.values())
    b = _Builder(
        rack=rack,
        several=ownership.claimed_by_several,
        min_quota=total // len(members),
        max_quota=-(-total // len(members)),
        expected_over=total % len(members),
        assignment={m: [] for m in members},
    )
    kept = _keep_owned(b, ownership.owned)
    every = chain.from_iterable(topic_partitions(t, range(topics[t])) for t in sorted(topics))
    unassigned = list(filterfalse(kept.__contains__, every) if kept else every)
    b.under_min.sort(key=java_key)
    b.at_min.sort(key=java_key)
    if rack.consumers_in_racks:
        unassigned.sort(key=lambda tp: rack.consumers_in_racks.get(tp, 0))
    if rack.member_rack:
        unassigned = _assign_rack_aware_round_robin(b, unassigned)
    _assign_round_robin(b, unassigned)
    _verify_unfilled(b)
    return StickyOutcome(b.assignment, b.transferring, rack)


def _keep_owned(b: _Builder, owned: Mapping[str, list[TopicPartition]]) -> set[TopicPartition]:
    """Step 1: each member keeps what its claims and the quotas allow."""
    kept: set[TopicPartition] = set()
    for member, claims in owned.items():
        if member in b.rack.member_rack:
            mine = []
            for tp in claims:
                if b.rack.mismatch(member, tp):
                    b.maybe_revoked[tp] = member
                else:
                    mine.append(tp)
        else:  # no rack to miss
            mine = list(claims)
        mine.sort(key=_PARTITION_THEN_TOPIC)
        if b.several:
            mine = [tp for tp in mine if tp not in b.several]
        if len(mine) < b.min_quota:
            keep = mine
            b.under_min.append(member)
        elif len(mine) >= b.max_quota and b.over < b.expected_over:
            b.over += 1
            if b.over == b.expected_over:
                b.at_min.clear()
            keep = mine[: b.max_quota]
        else:
            keep = mine[: b.min_quota]
            if b.over < b.expected_over:
                b.at_min.append(member)
        for tp in mine[len(keep) :]:
            b.maybe_revoked[tp] = member
        b.assignment[member].extend(keep)
        kept.update(keep)
    return kept


def _next_rack_member(b: _Builder, tp: TopicPartition, members: list[str], start: int) -> int:
    """Index of the first of ``members``, from ``start`` round the list, on a rack of ``tp``."""
    racks = b.rack.partition_racks.get(tp)
    if not racks:
        return -1
    for i in range(len(members)):
        index = (start + i) % len(members)
        if b.rack.member_rack.get(members[index]) in racks:
            return index
    return -1


def _assign_rack_aware_round_robin(
    b: _Builder, unassigned: list[TopicPartition]
) -> list[TopicPartition]:
    """Step 2: rack-local placements within the quotas; returns the partitions still unplaced."""
    left = []
    next_index = 0
    for tp in unassigned:
        member = None
        index = _next_rack_member(b, tp, b.under_min, next_index)
        if index >= 0:
            member = b.under_min[index]
            count = len(b.assignment[member]) + 1
            if count >= b.min_quota:
                b.under_min.remove(member)
                if count < b.max_quota and b.over < b.expected_over:
                    b.at_min.append(member)
            else:
                index += 1
            next_index = index % len(b.under_min) if b.under_min else 0
        elif b.at_min:
            first = _next_rack_member(b, tp, b.at_min, 0)
            if first >= 0:
                member = b.at_min[first]
                if len(b.assignment[member]) + 1 == b.max_quota:
                    del b.at_min[first]
                    b.over += 1
                    if b.over == b.expected_over:
                        b.at_min.clear()
        if member is None:
            left.append(tp)
        else:
            _assign_new(b, tp, member)
    return left


def _assign_round_robin(b: _Builder, unassigned: list[TopicPartition]) -> None:
    """Step 3: under-minimum members in turn (a cursor over the live list, as Kafka's
    iterator), then at-minimum ones first come first served.

    Whole rounds in which no under-minimum member reaches the minimum are dealt at once, a
    slice per member (a fresh group's rounds but the last), which is what the cursor would do
    one partition at a time."""
    cursor = 0
    i = 0
    while i < len(unassigned):
        if b.under_min and (i == 0 or cursor == len(b.under_min)):  # a pass begins
            rounds = _whole_rounds(b, len(unassigned) - i)
            if rounds:
                end = i + rounds * len(b.under_min)
                _deal_rounds(b, unassigned[i:end])
                i, cursor = end, 0
                continue
        tp = unassigned[i]
        i += 1
        from_cursor = True
        if cursor < len(b.under_min):
            member = b.under_min[cursor]
            cursor += 1
        elif not b.under_min and not b.at_min:
            raise InvalidAssignment("ILLEGAL_STATE", "no more unfilled consumers to be assigned")
        elif not b.under_min:
            member = b.at_min.pop(0)
            from_cursor = False
        else:
            member = b.under_min[0]
            cursor = 1
        count = _assign_new(b, tp, member)
        if count == b.min_quota:
            if not from_cursor:
                raise InvalidAssignment(
                    "ILLEGAL_STATE", "removing a member the cursor did not give"
                )
            cursor -= 1
            del b.under_min[cursor]
            b.at_min.append(member)
        elif count == b.max_quota:
            b.over += 1


def _whole_rounds(b: _Builder, left: int) -> int:
    """Rounds of one partition per under-minimum member that leave all of them under it."""
    top = max(len(b.assignment[m]) for m in b.under_min)
    return max(0, min(b.min_quota - 1 - top, left // len(b.under_min)))


def _deal_rounds(b: _Builder, partitions: list[TopicPartition]) -> None:
    """Partition k to under-minimum member k mod their number; transferring as ``_assign_new``."""
    flagged = b.several.union(b.maybe_revoked)
    step = len(b.under_min)
    for j, member in enumerate(b.under_min):
        dealt = partitions[j::step]
        b.assignment[member].extend(dealt)
        for tp in flagged.intersection(dealt) if flagged else ():
            previous = b.maybe_revoked.get(tp)
            if (previous is not None and previous != member) or tp in b.several:
                b.transferring[tp] = member


def _assign_new(b: _Builder, tp: TopicPartition, member: str) -> int:
    mine = b.assignment[member]
    mine.append(tp)
    previous = b.maybe_revoked.get(tp)
    if (previous is not None and previous != member) or tp in b.several:
        b.transferring[tp] = member
    return len(mine)


def _verify_unfilled(b: _Builder) -> None:
    """Kafka's final check: members still under the minimum must be exactly at it."""
    if not b.under_min:
        return
    if b.over != b.expected_over:
        raise InvalidAssignment(
            "ILLEGAL_STATE", "members under the minimum quota but no partitions left"
        )
    for member in b.under_min:
        if len(b.assignment[member]) != b.min_quota:
            raise InvalidAssignment("ILLEGAL_STATE", f"{member!r} did not reach the minimum quota")
