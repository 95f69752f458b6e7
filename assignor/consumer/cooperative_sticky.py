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

from collections.abc import Mapping, Sequence

from kassign.assignor.consumer.model import ConsumerGroup, Member, TopicPartition, claims_on
from kassign.assignor.consumer.result import GroupAssignment, group_assignment
from kassign.assignor.consumer.revoked import moving_away
from kassign.assignor.consumer.sticky import assign_sticky_partitions
from kassign.assignor.consumer.sticky_base import MemberData
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_user_data import decode_cooperative_generation

__all__ = ["NAME", "assign_cooperative_sticky", "cooperative_member_data"]

NAME = "cooperative-sticky"


def assign_cooperative_sticky(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``CooperativeStickyAssignor.assign`` on ``group``."""
    outcome = assign_sticky_partitions(group, cooperative_member_data)
    transferring = outcome.transferring
    if transferring is None:
        transferring = _changing_owner(group, outcome.assignment)
    return group_assignment(
        NAME,
        group,
        outcome.assignment,
        claims={m.member_id: m.owned_partitions for m in group.members},
        rack_reason=outcome.rack.reason,
        withheld=transferring,
        revoked=moving_away(group, outcome.assignment),
    )


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
