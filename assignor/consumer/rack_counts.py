"""Partitions read across racks (KIP-881): a member with a rack holding none of a partition's
replicas, counted for the assignors' reports over the assigned partitions and over the claims.

Counted as ids of the call's ``PartitionSpace`` against a table of the distinct replica rack
sets (``replica_rack_sets``) and the members' racks, not a look-up per partition (issue 24: a
rejoining group's claims are all its partitions; the per-partition count took most of a
rack-aware ``sticky`` call at a million).
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import repeat

import numpy as np
from kassign.assignor.claims import all_within
from kassign.assignor.consumer.columns import (
    AssignedColumns,
    Ids,
    PartitionSpace,
    replica_rack_sets,
)
from kassign.assignor.consumer.model import (
    ConsumerGroup,
    Member,
    OwnedPartitions,
    Topic,
    TopicPartition,
)

__all__ = ["as_sequence", "cross_rack_claims", "cross_rack_ids", "local_count"]

_TOPIC, _PARTITION = operator.itemgetter(0), operator.itemgetter(1)
_RACKS = operator.attrgetter("partition_racks")
_RACK_ID = operator.attrgetter("rack_id")


def cross_rack_ids(group: ConsumerGroup, ordered: list[Member], columns: AssignedColumns) -> int:
    """Assigned partitions whose member has a rack holding none of their replicas."""
    if not any(map(_RACK_ID, ordered)):  # no member has a rack (a non-empty ``rack_id``)
        return 0
    racks = [m.rack for m in ordered]
    return _misses(group.topics, columns.space, racks, columns.owner(), columns.ids)


def _misses(
    topics: Mapping[str, Topic],
    space: PartitionSpace,
    racks: Sequence[str | None],
    owner: Ids,
    ids: Ids,
) -> int:
    """How many of ``ids`` (id ``k`` held by member ``owner[k]``, whose rack is in ``racks``)
    have no replica on their member's rack, counted with a table of the distinct replica
    rack sets against the members' racks; a member without a rack misses none."""
    names = sorted({r for r in racks if r is not None})
    if not names or not len(ids):
        return 0
    rack_sets, set_of = replica_rack_sets(topics, space)
    index = {r: i for i, r in enumerate(names)}
    local = np.array([[r in s for r in names] for s in rack_sets], dtype=bool)
    rack_at = np.array([-1 if r is None else index[r] for r in racks], dtype=np.int64)
    rack = rack_at[owner]
    racked = rack >= 0
    return int(np.count_nonzero(~local[set_of[ids[racked]], rack[racked]]))


def local_count(partitions: list[TopicPartition], rack: str, topics: Mapping[str, Topic]) -> int:
    """How many of ``partitions`` have a replica on ``rack``: each partition's rack set looked
    up and tested with ``map`` (no Python step per partition; a member may hold thousands)."""
    racks = map(_RACKS, map(topics.__getitem__, map(_TOPIC, partitions)))
    found: Iterator[frozenset[str]] = map(operator.getitem, racks, map(_PARTITION, partitions))
    return sum(map(frozenset.__contains__, found, repeat(rack)))


def cross_rack_claims(
    group: ConsumerGroup,
    claims: Mapping[str, Collection[TopicPartition]],
    space: PartitionSpace | None,
) -> int:
    """Claimed partitions of the metadata whose claimant has a rack holding none of their
    replicas (counted here, where the claims the assignor read are at hand: eager ``sticky``
    decodes them from user data); as ids of ``space`` when every claim is on its topics (issue
    24: a rejoining group's claims are its partitions, a Python step each otherwise)."""
    racked = [m for m in group.members if m.rack is not None and claims.get(m.member_id)]
    if not racked:
        return 0
    held = [as_sequence(claims[m.member_id]) for m in racked]
    if space is None or not _on_space(space, held):
        return _cross_rack_objects(group, racked, held)
    ids, sizes = space.claimed_column(held)
    owner = np.repeat(np.arange(len(racked), dtype=np.int64), sizes)
    return _misses(group.topics, space, [m.rack for m in racked], owner, ids)


def as_sequence(partitions: Collection[TopicPartition]) -> Sequence[TopicPartition]:
    """``partitions`` as a sequence (a tuple of them unless one); compact claims known by
    their type first (an ABC check per member of a thousand is most of a small step)."""
    if type(partitions) is OwnedPartitions or isinstance(partitions, Sequence):
        return partitions
    return tuple(partitions)


def _on_space(space: PartitionSpace, claims: Sequence[Sequence[TopicPartition]]) -> bool:
    """Whether every claim is on one of the space's topics (compact ones' topic tuples
    checked once each)."""
    seen: dict[object, bool] = {}
    for claimed in claims:
        if isinstance(claimed, OwnedPartitions):
            if not all_within(claimed.topics, space.index, seen):
                return False
        elif not set(map(_TOPIC, claimed)).issubset(space.index):
            return False
    return True


def _cross_rack_objects(
    group: ConsumerGroup, members: Sequence[Member], claims: Sequence[Sequence[TopicPartition]]
) -> int:
    """``cross_rack_claims`` partition by partition (claims of topics outside the space)."""
    total = 0
    for member, claimed in zip(members, claims, strict=True):
        for tp in claimed:
            topic = group.topics.get(tp.topic)
            if topic is not None and 0 <= tp.partition < topic.partitions:
                total += member.rack not in topic.partition_racks[tp.partition]
    return total
