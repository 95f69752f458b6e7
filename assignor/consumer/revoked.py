"""What a cooperative member gives up: partitions it reports owning that go elsewhere.

Under the cooperative protocol (``cooperative-sticky``, and kassign's own assignors asked to be
cooperative) a partition changing owner is withheld from its new owner for a round, and its
old owner is told to revoke it. Both are counted here, from the members' reported claims;
kept apart from ``result`` (the answer and its report), which takes them as inputs.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Mapping

import numpy as np
from kassign.assignor.claims import any_claimed
from kassign.assignor.consumer.columns import PartitionList, PartitionSpace, concatenated
from kassign.assignor.consumer.model import ConsumerGroup, TopicPartition, claims_on
from kassign.assignor.consumer.result import one_space

__all__ = ["moving_away", "withheld_from"]

_MEMBER_ID, _OWNED = operator.attrgetter("member_id"), operator.attrgetter("owned_partitions")


def withheld_from(
    group: ConsumerGroup, target: Mapping[str, Collection[TopicPartition]]
) -> frozenset[TopicPartition]:
    """Partitions going to a member while another member still reports owning them: under
    the cooperative protocol nobody gets them this round (their owner revokes them first)."""
    claimants: dict[TopicPartition, set[str]] = {}
    for m in group.members:
        for tp in m.owned_partitions:
            claimants.setdefault(tp, set()).add(m.member_id)
    if not claimants:  # a fresh group: the target's lists are not read
        return frozenset()
    return frozenset(
        tp for member, tps in target.items() for tp in tps if claimants.get(tp, set()) - {member}
    )


def moving_away(
    group: ConsumerGroup, target: Mapping[str, Collection[TopicPartition]]
) -> dict[str, tuple[TopicPartition, ...]]:
    """Per member, the partitions it reports owning that ``target`` gives to another member
    (set differences first: most members keep all they own, and a fresh group owns nothing)."""
    space = one_space(target)
    if space is not None:
        return _moving_away_ids(group, space, target)  # type: ignore[arg-type]
    lost: dict[str, set[TopicPartition]] = {}
    for m in group.members:
        if m.owned_partitions:
            claimed = claims_on(m.owned_partitions, group.topics)
            gone = set(claimed).difference(target.get(m.member_id, ()))
            if gone:
                lost[m.member_id] = gone
    assigned: set[TopicPartition] = set().union(*target.values()) if lost else set()
    moving: dict[str, tuple[TopicPartition, ...]] = {}
    for m in group.members:
        gone = lost.get(m.member_id, set())
        moving[m.member_id] = (
            tuple(tp for tp in m.owned_partitions if tp in gone and tp in assigned) if gone else ()
        )
    return moving


def _moving_away_ids(
    group: ConsumerGroup, space: PartitionSpace, target: Mapping[str, PartitionList]
) -> dict[str, tuple[TopicPartition, ...]]:
    """``moving_away`` over ids, the group's claims as one column (issue 24: a few numpy steps
    per member were 5 ms of a rejoining group of 1,000): a claim outside the space is never
    assigned, so never moves; the moving ones keep their claim order. A group that claims
    nothing (a fresh one) moves nothing: no owner table is filled."""
    ids_of = list(map(_MEMBER_ID, group.members))
    moving: dict[str, tuple[TopicPartition, ...]] = dict.fromkeys(ids_of, ())
    claims = list(map(_OWNED, group.members))
    if not any_claimed(claims):
        return moving
    place = {m: i for i, m in enumerate(target)}
    lists = [mine.ids for mine in target.values()]
    owner = np.full(space.total, -1, dtype=np.int64)
    owner[concatenated(lists)] = np.repeat(
        np.arange(len(lists), dtype=np.int64), list(map(len, lists))
    )
    ids, sizes = space.claimed_column(claims)
    claimant = np.repeat(np.arange(len(claims), dtype=np.int64), sizes)
    mine_at = np.asarray([place.get(m, -2) for m in ids_of], dtype=np.int64)
    got = owner[ids]
    away = (got >= 0) & (got != mine_at[claimant])
    if not away.any():
        return moving
    gone, by = space.objects(ids[away]), claimant[away]
    ends = np.searchsorted(by, np.arange(len(claims) + 1, dtype=np.int64)).tolist()
    for i in np.flatnonzero(np.diff(ends)).tolist():
        moving[ids_of[i]] = tuple(gone[ends[i] : ends[i + 1]])
    return moving
