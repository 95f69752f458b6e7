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
   own first, unless something had to be revoked. Kafka's ``PartitionMovements`` decides what
   actually moves: a partition of the same topic that already moved the other way goes back
   instead (the first of a Java ``HashSet``, whose hash order is replayed).
4. Unless every member started empty, keep the balanced result only if it lowers the balance
   score (the sum of load differences over all pairs of members).

Kafka's step 3 looks for a lighter subscriber on the partition's rack before looking at all
subscribers, but both branches make the same move, to the least-loaded subscriber wherever
it is: the rack preference changes nothing, so it is not repeated here.

The algorithm runs in the compiled core (``kassign_native.general_assignment``, Rust,
``assignor/native``): a Python step per partition cost ~25 µs, a second at 40,000 partitions
(issue 24). This module only turns the group into numbers (partition ids of ``columns``,
members by their place in hash order) and the answer back; the core releases the GIL while
it computes and calls ``checkpoint`` every few milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import kassign_native
import numpy as np
from kassign.assignor.consumer.columns import Ids, PartitionSpace, concatenated
from kassign.assignor.consumer.java_order import java_keys, string_hash
from kassign.assignor.consumer.model import DEFAULT_GENERATION, Member, TopicPartition
from kassign.assignor.consumer.sticky_base import (
    MemberData,
    Ownership,
    RackInfo,
    StickyOutcome,
    rack_numbers,
)
from kassign.assignor.errors import InvalidAssignment
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.shared_objects import per_object

__all__ = ["build"]

_NO_IDS: Ids = np.zeros(0, dtype=np.int64)
JAVA_SET_ORDER = True
"""Move back the first partition of a Java ``HashSet`` as Kafka does; ``False`` (tests only)
takes the smallest, to show that Java's order still decides some groups."""


def build(
    topics: Mapping[str, int],
    rack: RackInfo,
    ownership: Ownership,
    members: list[Member],
    data: Mapping[str, MemberData],
) -> StickyOutcome:
    """The general assignment of every partition of ``topics`` (``members`` in hash order);
    ``rack.space`` is ``topics``' space."""
    space = rack.space
    place = {m.member_id: i for i, m in enumerate(members)}
    keys = java_keys([m.member_id for m in members])
    rank = [0] * len(members)
    for r, i in enumerate(sorted(range(len(members)), key=keys.__getitem__)):
        rank[i] = r
    sets, set_of_member = _subscriptions(members, space)
    owned = [_ids(space, ownership.owned[m.member_id]) for m in members]
    generations = _previous_generations(members, data, ownership.max_generation)
    previous = [
        _NO_IDS if g is None else _ids(space, data[m.member_id].partitions)
        for m, g in zip(members, generations, strict=True)
    ]
    member_rack, set_of, set_has, racks = rack_numbers(rack, [m.member_id for m in members])
    ids, ends, order, null_pointer = kassign_native.general_assignment(
        offsets=space.offsets.tolist(),
        topic_hashes=[string_hash(t) for t in space.names],
        rank=rank,
        subscription_sets=sets,
        subscription_of=set_of_member,
        owned_order=[place[m] for m in ownership.owned],
        owned=concatenated(owned).tobytes(),
        owned_ends=np.cumsum([len(o) for o in owned], dtype=np.int64).tolist(),
        previous_generation=generations,
        previous=concatenated(previous).tobytes(),
        previous_ends=np.cumsum([len(p) for p in previous], dtype=np.int64).tolist(),
        member_rack=member_rack,
        set_of=set_of,
        set_has=set_has,
        racks=racks,
        checkpoint=checkpoint,
        java_set_order=JAVA_SET_ORDER,
    )
    if null_pointer is not None:
        partition, home = null_pointer
        tp = space.objects(np.array([partition], dtype=np.int64))[0]
        raise InvalidAssignment(
            "KAFKA_NULL_POINTER",
            f"{tp}'s previous owner {members[home].member_id!r} cannot take part in the"
            " reassignment; Kafka's assignor throws NullPointerException here",
        )
    every: Ids = np.frombuffer(ids, dtype=np.int64)
    starts = [0, *ends[:-1]]
    assignment = {members[i].member_id: space.partitions(every[starts[i] : ends[i]]) for i in order}
    return StickyOutcome(assignment, None, rack)


def _ids(space: PartitionSpace, partitions: Sequence[TopicPartition]) -> Ids:
    """The ids of ``partitions`` on the space's topics (a fresh member's none, at no cost)."""
    return space.claimed(partitions) if len(partitions) else _NO_IDS


def _subscriptions(
    members: list[Member], space: PartitionSpace
) -> tuple[list[list[int]], list[int]]:
    """The distinct subscriptions as sorted topic numbers (topics being assigned only), and
    each member's; members mostly share one topic list object."""
    by_value: dict[tuple[int, ...], int] = {}

    def numbered(topics: Sequence[str]) -> int:
        numbers = tuple(sorted({space.index[t] for t in topics if t in space.index}))
        return by_value.setdefault(numbers, len(by_value))

    of_member = per_object([m.topics for m in members], numbered)
    return [list(s) for s in by_value], of_member


def _previous_generations(
    members: list[Member], data: Mapping[str, MemberData], max_generation: int
) -> list[int | None]:
    """Per member, the generation its previous partitions count as in Kafka's
    ``prevAssignment`` (the claimant from the latest generation below the newest), ``None``
    when they do not count: a claim without a generation counts as -1 once any member has one."""
    found: list[int | None] = []
    for member in members:
        generation = data[member.member_id].generation
        if generation is not None and generation < max_generation:
            found.append(generation)
        elif generation is None and max_generation > DEFAULT_GENERATION:
            found.append(DEFAULT_GENERATION)
        else:
            found.append(None)
    return found
