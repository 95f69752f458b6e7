"""``sticky``: Kafka's eager ``StickyAssignor``, balanced first, then sticky, rack-aware.

Priorities, in order: balance (loads within one where subscriptions allow), rack locality
(KIP-881, best effort; an owned partition on the wrong rack is given up), stickiness (as many
partitions as possible stay where they were).

Eager members give up everything before joining, so their subscriptions own nothing: each
member's previous assignment and generation travel in its userData, which this assignor wrote
on the member's last assignment (``kassign.kafka.consumer_user_data``). Kafka reads that
userData as follows, and so do we:

- none or empty: no previous partitions, no generation;
- v1 (partitions and generation) or else v0 (partitions only, no generation);
- bytes that fit neither: no previous partitions, generation -1.

The subscription's own generation still counts where Kafka reads it: when two members claim a
partition, the standing claim's generation is its subscription's (``sticky_base``).

``assign_sticky_partitions`` is the part ``cooperative-sticky`` shares (Kafka's
``AbstractStickyAssignor``); it picks the constrained builder when every member subscribes to
the same topics and the general one otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

from kassign.assignor.consumer import sticky_constrained, sticky_general
from kassign.assignor.consumer.columns import PartitionSpace
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.group_claims import GroupClaims
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    ConsumerGroup,
    Member,
    OwnedPartitions,
    check_claims,
    partition_counts,
)
from kassign.assignor.consumer.result import GroupAssignment, group_assignment
from kassign.assignor.consumer.sticky_base import (
    MemberData,
    StickyOutcome,
    member_hash_order,
    rack_info,
    resolve_ownership,
)
from kassign.kafka.consumer_user_data import read_sticky_user_data_group

__all__ = [
    "NAME",
    "assign_sticky",
    "assign_sticky_partitions",
    "sticky_member_data",
    "sticky_members_data",
]

NAME = "sticky"

_TOPIC = operator.itemgetter(0)
_CLAIMS = operator.itemgetter(1)
_MEMBER_ID = operator.attrgetter("member_id")
_USER_DATA = operator.attrgetter("user_data")
_PARTITIONS = operator.attrgetter("partitions")


def assign_sticky(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``StickyAssignor.assign`` on ``group``."""
    data, distinct, read = _members_data(group, group.members)
    outcome = assign_sticky_partitions(group, data, distinct=distinct, claimed=read)
    claims = dict(zip(data, map(_PARTITIONS, data.values())))
    return group_assignment(
        NAME, group, outcome.assignment, claims=claims, rack_reason=outcome.rack.reason
    )


def sticky_members_data(group: ConsumerGroup, members: Sequence[Member]) -> dict[str, MemberData]:
    """Each member's previous assignment as ``StickyAssignor`` decodes its userData, the
    group's bytes read at once (``read_sticky_user_data_group``), each member's claims made
    from the compiled reader's columns directly. Kafka's reading: none or empty, nothing and
    no generation; bytes that fit neither layout, nothing and -1.

    Decoded partitions of topics in the metadata must exist there and be distinct
    (``InvalidRequest`` naming the first member at fault: Kafka would assign such a partition
    twice); claims of other topics are ignored, unchecked.
    """
    return _members_data(group, members)[0]


def _members_data(
    group: ConsumerGroup, members: Sequence[Member]
) -> tuple[dict[str, MemberData], bool, GroupClaims | None]:
    """``sticky_members_data``, whether its check found no partition claimed twice in the
    group (``distinct_claims`` of the returned claims: the claims check's own pass), and the
    claims as the reader's columns (``None`` when nothing was read)."""
    given = list(map(_USER_DATA, members))
    if not any(given):  # a fresh group: nothing to read, nothing claimed (one empty claims
        nothing = MemberData(OwnedPartitions(), None)  # object, as the decoder's fresh members)
        return dict.fromkeys(map(_MEMBER_ID, members), nothing), True, None
    sent = [data or None for data in given]
    owned, generations, failures, read = read_sticky_user_data_group(
        sent, OwnedPartitions.of_entries
    )
    for i in [i for i, failure in enumerate(failures) if failure is not None]:
        owned[i], generations[i] = OwnedPartitions(), DEFAULT_GENERATION  # Kafka's reading
    columns = GroupClaims.of(owned, read)  # a failed member has no entries there either
    seen: dict[object, bool] = {}
    known = [
        (m.member_id, o.of_topics(group.topics, seen)) for m, o in zip(members, owned, strict=True)
    ]
    counts = partition_counts(group.topics)
    distinct = check_claims(known, group.topics, field="user_data", counts=counts, group=columns)
    # the answer holds for the claims returned when none had entries outside the metadata
    distinct = distinct and all(map(operator.is_, map(_CLAIMS, known), owned))
    ids = [m.member_id for m in members]
    return dict(zip(ids, map(MemberData, owned, generations), strict=True)), distinct, columns


def sticky_member_data(group: ConsumerGroup, member: Member) -> MemberData:
    """``sticky_members_data`` of one member."""
    return sticky_members_data(group, [member])[member.member_id]


def assign_sticky_partitions(
    group: ConsumerGroup,
    member_data: Mapping[str, MemberData],
    *,
    distinct: bool = False,
    claimed: GroupClaims | None = None,
) -> StickyOutcome:
    """Kafka's ``AbstractStickyAssignor.assignPartitions``: settle claims, pick a builder
    (``member_data``: each member's, by id; ``distinct``: the caller knows no partition is claimed twice, as ``resolve_ownership``;
    ``claimed``: the claims as their reader's columns, numbered once for the call)."""
    topics = partitions_per_topic(group)
    members = member_hash_order(group)
    space = PartitionSpace.of(topics)
    if claimed is not None:
        space.adopt(claimed)
    rack = rack_info(group, space)
    ids = list(map(_MEMBER_ID, members))
    data = dict(zip(ids, map(member_data.__getitem__, ids)))  # in hash order
    ownership = resolve_ownership(members, topics, data, distinct=distinct, hash_ordered=True)
    if ownership.all_subscriptions_equal:
        return sticky_constrained.build(topics, rack, ownership)
    return sticky_general.build(topics, rack, ownership, members, data)
