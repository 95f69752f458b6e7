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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import kassign_native
import numpy as np
import numpy.typing as npt
from kassign.assignor.claims import any_claimed
from kassign.assignor.consumer.assigned import BuiltLists
from kassign.assignor.consumer.columns import Ids, PartitionSpace, concatenated
from kassign.assignor.consumer.java_order import java_keys
from kassign.assignor.consumer.model import TopicPartition
from kassign.assignor.consumer.sticky_base import Ownership, RackInfo, StickyOutcome, rack_numbers
from kassign.assignor.errors import InvalidAssignment

__all__ = ["build"]


@dataclass(slots=True)
class _Builder:
    """Scratch state of one constrained assignment (Kafka's builder fields, one to one);
    partitions are ids of ``space``, members their places in ``members`` (Kafka's map order):
    each partition's member in ``owner`` (-1: not yet placed), each member's count in
    ``count`` (issue 24: no list of chunks, nor a Python step, per member)."""

    rack: RackInfo
    space: PartitionSpace
    several: Ids
    min_quota: int
    max_quota: int
    expected_over: int
    members: list[str]
    owner: Ids
    count: Ids
    over: int = 0
    under_min: list[int] = field(default_factory=list)
    at_min: list[int] = field(default_factory=list)
    maybe_revoked: dict[int, int] = field(default_factory=dict)
    transferring: dict[int, int] = field(default_factory=dict)

    def give(self, member: int, partitions: Ids) -> int:
        self.owner[partitions] = member
        self.count[member] += len(partitions)
        return int(self.count[member])

    def give_each(self, members: Ids, partitions: Ids) -> None:
        """Partition ``k`` to ``members[k]``; a member may come several times."""
        self.owner[partitions] = members
        self.count += np.bincount(members, minlength=len(self.count))


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
        members=members,
        owner=np.full(total, -1, dtype=np.int64),
        count=np.zeros(len(members), dtype=np.int64),
    )
    taken = np.zeros(total, dtype=bool)
    taken[_keep_owned(b, ownership.owned)] = True
    unassigned = np.flatnonzero(~taken).astype(np.int64)
    keys = java_keys(members)
    b.under_min.sort(key=keys.__getitem__)
    b.at_min.sort(key=keys.__getitem__)
    if len(rack.counted):
        unassigned = unassigned[np.argsort(rack.counted[unassigned], kind="stable")]
    if rack.member_rack:
        unassigned = _assign_rack_aware_round_robin(b, unassigned)
    _assign_round_robin(b, unassigned)
    _verify_unfilled(b)
    # each member's partitions ascending (the order the answer lists them in anyway): a
    # stable argsort of the owners, as 16-bit numbers where they fit (numpy's radix sort)
    small = np.int16 if len(members) < 1 << 15 else np.int64
    order: Ids = np.argsort(b.owner.astype(small), kind="stable")
    bounds = np.searchsorted(b.owner[order], np.arange(len(members) + 1))
    assignment = BuiltLists(space, members, order, bounds)  # no list made per member
    moving = np.fromiter(b.transferring, dtype=np.int64, count=len(b.transferring))
    to = [members[i] for i in b.transferring.values()]
    transferring = dict(zip(space.objects(moving), to, strict=True))
    return StickyOutcome(assignment, transferring, rack)


def _keep_owned(b: _Builder, owned: Mapping[str, Sequence[TopicPartition]]) -> Ids:
    """Step 1: each member keeps what its claims and the quotas allow; returns the kept.

    The group's claims are filtered and sorted as one array (member, then partition, then
    topic); the member-by-member walk that follows decides counts only (issue 24: a few numpy
    steps per member were most of a rejoining group's assignment)."""
    if not any_claimed(owned.values()):
        return _keep_nothing(b)
    members = list(owned)
    every, sizes = b.space.claimed_column(list(owned.values()), within=False)
    owner = np.repeat(np.arange(len(members), dtype=np.int64), sizes)
    if b.rack.member_rack:  # rack mode: claims on no replica of the member's rack go
        fits = _rack_local(b, members, owner, every)
        if not fits.all():
            _may_revoke(b, len(members), every[~fits], owner[~fits])
            every, owner = every[fits], owner[fits]
    if len(b.several):
        free = ~np.isin(every, b.several)
        every, owner = every[free], owner[free]
    counts = np.bincount(owner, minlength=len(members))
    keeps = [_quota_kept(b, place, size) for place, size in enumerate(counts.tolist())]
    kept = np.asarray(keeps, dtype=np.int64)
    if np.array_equal(kept, counts):  # each keeps all it claims: their order does not matter
        b.give_each(owner, every)
        return every
    found, owner = _first_kept(b, every, owner, counts, kept)
    b.give_each(owner, found)
    return found


def _first_kept(b: _Builder, every: Ids, owner: Ids, counts: Ids, kept: Ids) -> tuple[Ids, Ids]:
    """The claims (``owner``: member by member, ``counts`` each) that members keeping fewer
    than they claim (``kept``) keep: the first in (partition, topic) order, Kafka's (only
    those members' claims sorted); the rest may be revoked. Returns the kept and owners."""
    pick = (kept < counts)[owner]
    every = every.copy()  # the space's column is read-only
    every[pick], owner[pick] = _by_member_partition_topic(b.space, every[pick], owner[pick])
    rank = np.arange(len(every), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    keep = rank < kept[owner]  # within its member
    b.maybe_revoked.update(zip(every[~keep].tolist(), owner[~keep].tolist(), strict=True))
    return every[keep], owner[keep]


def _quota_kept(b: _Builder, place: int, size: int) -> int:
    """How many of its ``size`` claims member ``place`` keeps, Kafka's way: all of them under
    the minimum quota, the maximum while members at the maximum are wanted, else the
    minimum; the under-minimum and at-minimum lists and the count at the maximum as it goes."""
    if size < b.min_quota:
        b.under_min.append(place)
        return size
    if size >= b.max_quota and b.over < b.expected_over:
        b.over += 1
        if b.over == b.expected_over:
            b.at_min.clear()
        return b.max_quota
    if b.over < b.expected_over:
        b.at_min.append(place)
    return b.min_quota


def _by_member_partition_topic(space: PartitionSpace, ids: Ids, owner: Ids) -> tuple[Ids, Ids]:
    """``ids`` and their owners sorted by owner, then partition number, then topic: one sort
    of one int64 key where it fits (a third of a three-key ``lexsort``'s time), none when
    they come so."""
    if not len(ids):
        return ids, owner
    topic = space.topic_of(ids)
    number = ids - space.offsets[topic]
    topics = len(space.names)
    span = (int(number.max()) + 1) * topics
    if span * (int(owner[-1]) + 1) >= 2**63:
        order = np.lexsort((topic, number, owner))
        return ids[order], owner[order]
    key = owner * span + number * topics + topic
    if np.all(key[1:] >= key[:-1]):  # as claimed (a group's claims often come in this order)
        return ids, owner
    key.sort()
    if np.all(owner[1:] >= owner[:-1]):  # member by member (step 1's): the owners stay put
        rest = key - owner * span
    else:
        owner, rest = np.divmod(key, span)
    number, topic = np.divmod(rest, topics)
    return space.offsets[topic] + number, owner


def _rack_local(b: _Builder, members: list[str], owner: Ids, ids: Ids) -> npt.NDArray[np.bool_]:
    """Per claim (``ids``, of member ``owner``), whether a replica is on its member's rack
    (always, for a member without one): a table of the members' distinct racks against the
    replica rack sets, not a row per member."""
    rows: dict[str | None, int] = {}
    row = [rows.setdefault(b.rack.member_rack.get(m), len(rows)) for m in members]
    table = np.array([b.rack.local_to(r) for r in rows], dtype=bool)
    sets = len(b.rack.rack_sets)
    at = np.asarray(row, dtype=np.int64)[owner] * sets + b.rack.set_of[ids]
    local: npt.NDArray[np.bool_] = table.reshape(-1)[at]
    return local


def _may_revoke(b: _Builder, members: int, ids: Ids, owner: Ids) -> None:
    """Each of ``ids`` may be revoked from its member (``owner``, ascending: member order)."""
    bounds = np.searchsorted(owner, np.arange(members + 1)).tolist()
    for i in np.flatnonzero(np.diff(bounds)).tolist():
        b.maybe_revoked.update(dict.fromkeys(ids[bounds[i] : bounds[i + 1]].tolist(), i))


def _keep_nothing(b: _Builder) -> Ids:
    """Step 1 when no member claims anything (a fresh group): what the member-by-member step
    does with empty claims, without its numpy steps per member (issue 24: 50-70 ms at 2,000
    members). Each keeps nothing, so is under a minimum above zero; with a minimum of zero it
    is at the minimum while members at the maximum are wanted (no member reaches it here)."""
    if b.min_quota > 0:
        b.under_min.extend(range(len(b.members)))
    elif b.over < b.expected_over:
        b.at_min.extend(range(len(b.members)))
    return concatenated([])


def _assign_rack_aware_round_robin(b: _Builder, unassigned: Ids) -> Ids:
    """Step 2: rack-local placements within the quotas; returns the partitions still unplaced.

    A step per partition, each reading the cursor and lists the one before left: it runs in
    the compiled core (``kassign_native.rack_round_robin``, issue 24: 25 us a partition in
    Python, most of a rack-aware group's call), which hands back each partition's member."""
    if not len(b.rack.set_of):  # no replica racks: no partition is local to anyone
        return unassigned
    member_rack, set_of, set_has, racks = rack_numbers(b.rack, b.members)
    dealt, b.under_min, b.at_min, b.over = kassign_native.rack_round_robin(
        unassigned=np.ascontiguousarray(unassigned, dtype=np.int64).tobytes(),
        under_min=b.under_min,
        at_min=b.at_min,
        counts=b.count.tolist(),
        min_quota=b.min_quota,
        max_quota=b.max_quota,
        over=b.over,
        expected_over=b.expected_over,
        member_rack=member_rack,
        set_of=set_of,
        set_has=set_has,
        racks=racks,
    )
    to = np.frombuffer(dealt, dtype=np.int64)
    placed = to >= 0
    taken, by = unassigned[placed], to[placed]
    b.give_each(by, taken)
    _flag_transfers(b, taken, by)
    return unassigned[~placed]


def _assign_round_robin(b: _Builder, unassigned: Ids) -> None:
    """Step 3: under-minimum members in turn (a cursor over the live list, as Kafka's
    iterator), then at-minimum ones first come first served.

    Dealt a pass at a time (``_deal_pass``; each pass starts at the cursor's first place),
    whole rounds in which no under-minimum member reaches the minimum at once (a fresh group's
    rounds but the last): what the cursor would do one partition at a time."""
    i = 0
    while i < len(unassigned):
        if b.under_min:
            rounds = _whole_rounds(b, len(unassigned) - i)
            if rounds:
                end = i + rounds * len(b.under_min)
                _deal_rounds(b, unassigned[i:end])
                i = end
            else:
                i = _deal_pass(b, unassigned, i)
        else:
            i = _deal_at_min(b, unassigned, i)


def _whole_rounds(b: _Builder, left: int) -> int:
    """Rounds of one partition per under-minimum member that leave all of them under it."""
    top = int(b.count[b.under_min].max())
    return max(0, min(b.min_quota - 1 - top, left // len(b.under_min)))


def _deal_rounds(b: _Builder, partitions: Ids) -> None:
    """Partition k to under-minimum member k mod their number; transferring as ``_deal_pass``."""
    takers = np.asarray(b.under_min, dtype=np.int64)
    members = np.tile(takers, len(partitions) // len(takers))
    b.give_each(members, partitions)
    _flag_transfers(b, partitions, members)


def _deal_pass(b: _Builder, unassigned: Ids, i: int) -> int:
    """One pass of the cursor from the list's first place: each under-minimum member in turn
    takes one partition from ``i`` on; those that reach the minimum leave the list for the
    at-minimum one, in the order reached. Returns where the next pass starts."""
    k = min(len(b.under_min), len(unassigned) - i)
    takers = np.asarray(b.under_min[:k], dtype=np.int64)
    partitions = unassigned[i : i + k]
    b.give_each(takers, partitions)
    _flag_transfers(b, partitions, takers)
    counts = b.count[takers]
    reached = counts == b.min_quota
    b.over += int(np.count_nonzero(~reached & (counts == b.max_quota)))
    if reached.any():
        b.at_min.extend(takers[reached].tolist())
        b.under_min = takers[~reached].tolist() + b.under_min[k:]
    return i + k


def _deal_at_min(b: _Builder, unassigned: Ids, i: int) -> int:
    """No member under the minimum: at-minimum members first come first served, one
    partition each, each then at the maximum."""
    k = min(len(b.at_min), len(unassigned) - i)
    takers = np.asarray(b.at_min[:k], dtype=np.int64)
    del b.at_min[:k]
    partitions = unassigned[i : i + k]
    b.give_each(takers, partitions)
    _flag_transfers(b, partitions, takers)
    counts = b.count[takers]
    if np.any(counts == b.min_quota):
        raise InvalidAssignment("ILLEGAL_STATE", "removing a member the cursor did not give")
    b.over += int(np.count_nonzero(counts == b.max_quota))
    if i + k < len(unassigned):
        raise InvalidAssignment("ILLEGAL_STATE", "no more unfilled consumers to be assigned")
    return i + k


def _flag_transfers(b: _Builder, partitions: Ids, members: Ids) -> None:
    """Partitions given to another member than the one that dropped them, or claimed by
    several, are transferring (partition ``k`` went to ``members[k]``)."""
    if not b.maybe_revoked and not len(b.several):
        return
    flagged = np.union1d(b.several, np.fromiter(b.maybe_revoked, dtype=np.int64))
    for k in np.flatnonzero(np.isin(partitions, flagged)).tolist():
        tp, member = int(partitions[k]), int(members[k])
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
    for place in b.under_min:
        if b.count[place] != b.min_quota:
            member = b.members[place]
            raise InvalidAssignment("ILLEGAL_STATE", f"{member!r} did not reach the minimum quota")
