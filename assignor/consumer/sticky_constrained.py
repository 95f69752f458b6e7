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

Partitions are ids here (``columns``): a fresh group's partitions are dealt as slices of one
array, and no ``TopicPartition`` is made for a partition nobody claimed (issue 24). Step 2, a
step per partition that no array step reproduces, runs in the compiled core
(``kassign_native.rack_round_robin``, ``assignor/native/src/constrained.rs``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import kassign_native
import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.columns import Ids, PartitionSpace, concatenated
from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import TopicPartition
from kassign.assignor.consumer.sticky_base import Ownership, RackInfo, StickyOutcome, rack_numbers
from kassign.assignor.errors import InvalidAssignment

__all__ = ["build"]


@dataclass(slots=True)
class _Builder:
    """Scratch state of one constrained assignment (Kafka's builder fields, one to one);
    partitions are ids of ``space``, each member's kept as chunks of them and a count."""

    rack: RackInfo
    space: PartitionSpace
    several: Ids
    min_quota: int
    max_quota: int
    expected_over: int
    chunks: dict[str, list[Ids | list[int]]]
    count: dict[str, int]
    over: int = 0
    under_min: list[str] = field(default_factory=list)
    at_min: list[str] = field(default_factory=list)
    maybe_revoked: dict[int, str] = field(default_factory=dict)
    transferring: dict[int, str] = field(default_factory=dict)

    def give(self, member: str, partitions: Ids | list[int]) -> int:
        self.chunks[member].append(partitions)
        self.count[member] += len(partitions)
        return self.count[member]


def build(topics: Mapping[str, int], rack: RackInfo, ownership: Ownership) -> StickyOutcome:
    """The constrained assignment of every partition of ``topics`` (``rack.space``'s)."""
    space = rack.space
    members = list(ownership.owned)
    total = space.total
    several = np.sort(space.ids(sorted(ownership.claimed_by_several)))
    b = _Builder(
        rack=rack,
        space=space,
        several=several,
        min_quota=total // len(members),
        max_quota=-(-total // len(members)),
        expected_over=total % len(members),
        chunks={m: [] for m in members},
        count=dict.fromkeys(members, 0),
    )
    taken = np.zeros(total, dtype=bool)
    taken[_keep_owned(b, ownership.owned)] = True
    unassigned = np.flatnonzero(~taken).astype(np.int64)
    b.under_min.sort(key=java_key)
    b.at_min.sort(key=java_key)
    if len(rack.counted):
        unassigned = unassigned[np.argsort(rack.counted[unassigned], kind="stable")]
    if rack.member_rack:
        unassigned = _assign_rack_aware_round_robin(b, unassigned)
    _assign_round_robin(b, unassigned)
    _verify_unfilled(b)
    assignment: dict[str, Sequence[TopicPartition]] = {
        m: space.partitions(concatenated(b.chunks[m])) for m in members
    }
    moving = np.fromiter(b.transferring, dtype=np.int64, count=len(b.transferring))
    transferring = dict(zip(space.objects(moving), b.transferring.values(), strict=True))
    return StickyOutcome(assignment, transferring, rack)


def _keep_owned(b: _Builder, owned: Mapping[str, Sequence[TopicPartition]]) -> Ids:
    """Step 1: each member keeps what its claims and the quotas allow; returns the kept.

    The group's claims are filtered and sorted as one array (member, then partition, then
    topic); the member-by-member walk that follows decides counts only (issue 24: a few numpy
    steps per member were most of a rejoining group's assignment)."""
    if not any(map(len, owned.values())):
        return _keep_nothing(b, list(owned))
    members = list(owned)
    lists = b.space.claimed_all(list(owned.values()), within=False)
    every = concatenated(lists)
    owner = np.repeat(np.arange(len(members), dtype=np.int64), [len(x) for x in lists])
    if b.rack.member_rack:  # rack mode: claims on no replica of the member's rack go
        fits = _rack_local(b, members)[owner, b.rack.set_of[every]]
        _may_revoke(b, members, every[~fits], owner[~fits])
        every, owner = every[fits], owner[fits]
    every, owner = _by_member_partition_topic(b.space, every, owner)
    if len(b.several):
        free = ~np.isin(every, b.several)
        every, owner = every[free], owner[free]
    sizes = np.bincount(owner, minlength=len(members)).tolist()
    kept: list[Ids] = []
    start = 0
    for member, size in zip(members, sizes, strict=True):
        if size < b.min_quota:
            keep = size
            b.under_min.append(member)
        elif size >= b.max_quota and b.over < b.expected_over:
            b.over += 1
            if b.over == b.expected_over:
                b.at_min.clear()
            keep = b.max_quota
        else:
            keep = b.min_quota
            if b.over < b.expected_over:
                b.at_min.append(member)
        if keep < size:
            b.maybe_revoked.update(
                dict.fromkeys(every[start + keep : start + size].tolist(), member)
            )
        kept.append(every[start : start + keep])
        b.give(member, kept[-1])
        start += size
    return concatenated(kept)


def _by_member_partition_topic(space: PartitionSpace, ids: Ids, owner: Ids) -> tuple[Ids, Ids]:
    """``ids`` and their owners sorted by owner, then partition number, then topic: one sort
    of one int64 key where it fits (a third of a three-key ``lexsort``'s time)."""
    if not len(ids):
        return ids, owner
    topic = space.topic_of(ids)
    number = ids - space.offsets[topic]
    topics = len(space.names)
    span = (int(number.max()) + 1) * topics
    if span * (int(owner[-1]) + 1) >= 2**63:
        order = np.lexsort((topic, number, owner))
        return ids[order], owner[order]
    key = np.sort(owner * span + number * topics + topic)
    owner, rest = np.divmod(key, span)
    number, topic = np.divmod(rest, topics)
    return space.offsets[topic] + number, owner


def _rack_local(b: _Builder, members: list[str]) -> npt.NDArray[np.bool_]:
    """Per member (row) and replica rack set, whether the set holds the member's rack (every
    set for a member without one)."""
    rows: dict[str | None, npt.NDArray[np.bool_]] = {}
    for member in members:
        rack = b.rack.member_rack.get(member)
        if rack not in rows:
            rows[rack] = b.rack.local_to(member)
    return np.array([rows[b.rack.member_rack.get(m)] for m in members], dtype=bool).reshape(
        len(members), len(b.rack.rack_sets)
    )


def _may_revoke(b: _Builder, members: list[str], ids: Ids, owner: Ids) -> None:
    """Each of ``ids`` may be revoked from its member (``owner``, ascending: member order)."""
    bounds = np.searchsorted(owner, np.arange(len(members) + 1)).tolist()
    for i in np.flatnonzero(np.diff(bounds)).tolist():
        b.maybe_revoked.update(dict.fromkeys(ids[bounds[i] : bounds[i + 1]].tolist(), members[i]))


def _keep_nothing(b: _Builder, members: list[str]) -> Ids:
    """Step 1 when no member claims anything (a fresh group): what the member-by-member step
    does with empty claims, without its numpy steps per member (issue 24: 50-70 ms at 2,000
    members). Each keeps nothing, so is under a minimum above zero; with a minimum of zero it
    is at the minimum while members at the maximum are wanted (no member reaches it here)."""
    if b.min_quota > 0:
        b.under_min.extend(members)
    elif b.over < b.expected_over:
        b.at_min.extend(members)
    return concatenated([])


def _assign_rack_aware_round_robin(b: _Builder, unassigned: Ids) -> Ids:
    """Step 2: rack-local placements within the quotas; returns the partitions still unplaced.

    A step per partition, each reading the cursor and lists the one before left: it runs in
    the compiled core (``kassign_native.rack_round_robin``, issue 24: 25 us a partition in
    Python, most of a rack-aware group's call), which hands back each partition's member."""
    if not len(b.rack.set_of):  # no replica racks: no partition is local to anyone
        return unassigned
    members = list(b.count)
    number = {m: i for i, m in enumerate(members)}
    member_rack, set_of, set_has, racks = rack_numbers(b.rack, members)
    dealt, under_min, at_min, b.over = kassign_native.rack_round_robin(
        unassigned=np.ascontiguousarray(unassigned, dtype=np.int64).tobytes(),
        under_min=[number[m] for m in b.under_min],
        at_min=[number[m] for m in b.at_min],
        counts=[b.count[m] for m in members],
        min_quota=b.min_quota,
        max_quota=b.max_quota,
        over=b.over,
        expected_over=b.expected_over,
        member_rack=member_rack,
        set_of=set_of,
        set_has=set_has,
        racks=racks,
    )
    b.under_min = [members[i] for i in under_min]
    b.at_min = [members[i] for i in at_min]
    to = np.frombuffer(dealt, dtype=np.int64)
    placed = to >= 0
    taken, by = unassigned[placed], to[placed]
    order = np.argsort(by, kind="stable")  # each member's partitions in the order dealt
    bounds = np.searchsorted(by[order], np.arange(len(members) + 1))
    for i in np.flatnonzero(np.diff(bounds)).tolist():
        b.give(members[i], taken[order[bounds[i] : bounds[i + 1]]])
    _flag_transfers(b, taken, lambda k: members[int(by[k])])
    return unassigned[~placed]


def _assign_round_robin(b: _Builder, unassigned: Ids) -> None:
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
        tp = int(unassigned[i])
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
    top = max(b.count[m] for m in b.under_min)
    return max(0, min(b.min_quota - 1 - top, left // len(b.under_min)))


def _deal_rounds(b: _Builder, partitions: Ids) -> None:
    """Partition k to under-minimum member k mod their number; transferring as ``_assign_new``."""
    step = len(b.under_min)
    for j, member in enumerate(b.under_min):
        b.give(member, partitions[j::step])
    _flag_transfers(b, partitions, lambda k: b.under_min[k % step])


def _assign_new(b: _Builder, tp: int, member: str) -> int:
    count = b.give(member, [tp])
    _flag_transfer(b, tp, member)
    return count


def _flag_transfers(b: _Builder, partitions: Ids, member_of: Callable[[int], str]) -> None:
    """``_flag_transfer`` for each partition ``k`` of ``partitions`` given to ``member_of(k)``,
    in order, where one may apply (a partition revoked from another, or claimed by several)."""
    if not b.maybe_revoked and not len(b.several):
        return
    flagged = np.union1d(b.several, np.fromiter(b.maybe_revoked, dtype=np.int64))
    for k in np.flatnonzero(np.isin(partitions, flagged)).tolist():
        _flag_transfer(b, int(partitions[k]), member_of(k))


def _flag_transfer(b: _Builder, tp: int, member: str) -> None:
    previous = b.maybe_revoked.get(tp)
    if (previous is not None and previous != member) or (
        len(b.several) and _contains(b.several, tp)
    ):
        b.transferring[tp] = member


def _contains(ordered: Ids, value: int) -> bool:
    at = int(np.searchsorted(ordered, value))
    return at < len(ordered) and int(ordered[at]) == value


def _verify_unfilled(b: _Builder) -> None:
    """Kafka's final check: members still under the minimum must be exactly at it."""
    if not b.under_min:
        return
    if b.over != b.expected_over:
        raise InvalidAssignment(
            "ILLEGAL_STATE", "members under the minimum quota but no partitions left"
        )
    for member in b.under_min:
        if b.count[member] != b.min_quota:
            raise InvalidAssignment("ILLEGAL_STATE", f"{member!r} did not reach the minimum quota")
