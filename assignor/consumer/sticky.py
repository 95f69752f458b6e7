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
from collections.abc import Callable, Mapping

from kassign.assignor.consumer import sticky_constrained, sticky_general
from kassign.assignor.consumer.columns import PartitionSpace
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    ConsumerGroup,
    Member,
    OwnedPartitions,
    check_claims,
    check_partitions,
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
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_user_data import decode_sticky_user_data_runs

__all__ = ["NAME", "assign_sticky", "assign_sticky_partitions", "sticky_member_data"]

NAME = "sticky"

_TOPIC = operator.itemgetter(0)


def assign_sticky(group: ConsumerGroup) -> GroupAssignment:
    """Kafka's ``StickyAssignor.assign`` on ``group``."""
    names: dict[bytes, str] = {}  # topic names met in the members' userData, decoded once
    decoded = {m.member_id: _decoded(m, names) for m in group.members}
    known = [(m, claims.of_topics(group.topics)) for m, (claims, _) in decoded.items()]
    check_claims(known, group.topics, field="user_data", counts=partition_counts(group.topics))
    data = {m: MemberData(claims, generation) for m, (claims, generation) in decoded.items()}
    outcome = assign_sticky_partitions(group, lambda m: data[m.member_id])
    claims = {m: d.partitions for m, d in data.items()}
    return group_assignment(
        NAME, group, outcome.assignment, claims=claims, rack_reason=outcome.rack.reason
    )


def sticky_member_data(
    group: ConsumerGroup,
    member: Member,
    *,
    names: dict[bytes, str] | None = None,
    counts: Mapping[str, int] | None = None,
) -> MemberData:
    """The member's previous assignment as ``StickyAssignor`` decodes its userData.

    Decoded partitions of topics in the metadata must exist there and be distinct
    (``InvalidRequest`` otherwise: Kafka would assign such a partition twice). ``names``:
    topic names already decoded (``decode_sticky_user_data``), shared by a group's members;
    ``counts``: the metadata's partition counts (``partition_counts``), likewise.
    """
    partitions, generation = _decoded(member, names)
    known = partitions.of_topics(group.topics)  # claims of other topics: ignored, unchecked
    check_partitions(known, group.topics, field="user_data", member=member.member_id, counts=counts)
    return MemberData(partitions, generation)


def _decoded(member: Member, names: dict[bytes, str] | None) -> tuple[OwnedPartitions, int | None]:
    """The member's userData as ``StickyAssignor`` reads it (partitions, generation), unchecked:
    none or empty, nothing and no generation; bytes that fit neither layout, nothing and -1."""
    if not member.user_data:
        return OwnedPartitions(), None
    try:
        runs, generation = decode_sticky_user_data_runs(member.user_data, names)
    except WireError:
        return OwnedPartitions(), DEFAULT_GENERATION
    return OwnedPartitions.of_entries(runs.topics, runs.counts, runs.numbers), generation


def assign_sticky_partitions(
    group: ConsumerGroup, member_data: Callable[[Member], MemberData]
) -> StickyOutcome:
    """Kafka's ``AbstractStickyAssignor.assignPartitions``: settle claims, pick a builder."""
    topics = partitions_per_topic(group)
    members = member_hash_order(group)
    rack = rack_info(group, PartitionSpace.of(topics))
    data = {m.member_id: member_data(m) for m in members}
    ownership = resolve_ownership(members, topics, data)
    if ownership.all_subscriptions_equal:
        return sticky_constrained.build(topics, rack, ownership)
    return sticky_general.build(topics, rack, ownership, members, data)
