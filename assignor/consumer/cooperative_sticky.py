"""``cooperative-sticky``: Kafka's ``CooperativeStickyAssignor``, sticky without stopping the world.

It assigns exactly as ``sticky`` does (``assign_sticky_partitions``), reading ownership from
the subscription instead of userData: the owned partitions, and the generation field, or when
the member sent none (protocol v0-1) the generation in its userData (none if it has no
userData, -1 if the bytes are not four).

Then the cooperative protocol's rule: a member may not take a partition another member still
owns. Every partition changing owner is withheld from its new owner this round; its old owner
sees it missing from its assignment, revokes it, and rejoins, and the follow-up rebalance hands
it over. Which partitions change owner:

- constrained builder (equal subscriptions): those it gave to a member other than the one that
  had to drop it, and those several members claimed;
- general builder: those assigned to a member that did not own them while a member that owned
  them does not get them (owned as the subscriptions say, whatever the generations).

``MemberAssignment.revoked`` lists, per member, its owned partitions that go to another member.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

from kassign.assignor.consumer.model import ConsumerGroup, Member, TopicPartition, claims_on
from kassign.assignor.consumer.result import GroupAssignment, group_assignment
from kassign.assignor.consumer.revoked import moving_away
from kassign.assignor.consumer.sticky import assign_sticky_partitions
from kassign.assignor.consumer.sticky_base import MemberData
from kassign.assignor.shared_objects import distinct_objects
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_user_data import decode_cooperative_generation

__all__ = [
    "NAME",
    "assign_cooperative_sticky",
    "cooperative_member_data",
    "cooperative_members_data",
]

NAME = "cooperative-sticky"
_MEMBER_ID, _OWNED = operator.attrgetter("member_id"), operator.attrgetter("owned_partitions")
_USER_DATA, _GENERATION = operator.attrgetter("user_data"), operator.attrgetter("generation")


def assign_cooperative_sticky(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``CooperativeStickyAssignor.assign`` on ``group``."""
    outcome = assign_sticky_partitions(group, cooperative_members_data(group.members))
    transferring = outcome.transferring
    if transferring is None:
        transferring = _changing_owner(group, outcome.assignment)
    return group_assignment(
        NAME,
        group,
        outcome.assignment,
        claims=dict(zip(map(_MEMBER_ID, group.members), map(_OWNED, group.members))),
        rack_reason=outcome.rack.reason,
        withheld=transferring,
        revoked=moving_away(group, outcome.assignment),
    )


def cooperative_members_data(members: Sequence[Member]) -> dict[str, MemberData]:
    """``cooperative_member_data`` of each member, by id. Members that sent no generation
    and no userData (a fresh group's) read as their claims and no generation: one
    ``MemberData`` per distinct claims object (a fresh group's members share one), found from
    the group's columns, not a call per member (issue 24)."""
    ids = list(map(_MEMBER_ID, members))
    owned = list(map(_OWNED, members))
    user_data = list(map(_USER_DATA, members))
    if user_data.count(None) != len(user_data) or max(map(_GENERATION, members)) >= 0:
        return dict(zip(ids, map(cooperative_member_data, members)))
    shared = {id(o): MemberData(o, None) for o in distinct_objects(owned)}
    return dict(zip(ids, map(shared.__getitem__, map(id, owned))))


def cooperative_member_data(member: Member) -> MemberData:
    """Owned partitions and generation as ``CooperativeStickyAssignor`` reads them."""
    if member.generation >= 0:
        return MemberData(member.owned_partitions, member.generation)
    if member.user_data is None:
        return MemberData(member.owned_partitions, None)
    try:
        generation = decode_cooperative_generation(member.user_data)
    except WireError:
        generation = -1
    return MemberData(member.owned_partitions, generation)


def _changing_owner(
    group: ConsumerGroup, assignment: Mapping[str, Sequence[TopicPartition]]
) -> dict[TopicPartition, str]:
    """General builder: partitions gained by a non-owner and lost by an owner -> new owner.

    What was lost is found first, from the members that own something: a group that lost
    nothing (a fresh one, say) hands over nothing, and no member's answer is read as objects
    (40,000 of them at 800 members, most of a fresh unequal call's assign phase)."""
    owned_by = {m.member_id: claims_on(m.owned_partitions, group.topics) for m in group.members}
    lost: set[TopicPartition] = set()
    for member, assigned in assignment.items():
        if owned_by[member]:
            kept = set(assigned)
            lost.update(tp for tp in owned_by[member] if tp not in kept)
    if not lost:
        return {}
    added: dict[TopicPartition, str] = {}
    for member, assigned in assignment.items():
        owned = set(owned_by[member])
        added.update((tp, member) for tp in assigned if tp not in owned)
    return {tp: member for tp, member in added.items() if tp in lost}
