"""``rack-optimal``'s input as arrays: units to place, the classes they fall into, their claims.

A *unit* is what goes to one member whole: a partition, or with ``co_partitioned`` a column (the
partitions ``p`` of every topic of one set). Units of equal size form one ``Problem``: balance
counts units, and a member's load in partitions is the sum over problems of size x units.

Compactness is the point (50,000 partitions, 1,000 members): the solver never sees a partition or
a member-partition pair, only

- *subscription classes*: members with the same topics (``sub_of``);
- *unit classes*: units with the same eligible subscription classes and the same cross-rack cost
  for every member rack (``class_of``, ``class_eligible``, ``class_cost``);
- *claims*: for each unit the members that own some of its partitions, after settling claims as
  ``cooperative-sticky`` does (``sticky_base.resolve_ownership``: the highest generation wins, a
  tie voids both). A claim by a member that no longer subscribes to the unit's topics cannot be
  kept: it is a move whatever happens, a constant, so it is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.columns import PartitionSpace, replica_rack_sets
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.cooperative_sticky import cooperative_members_data
from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup, TopicPartition
from kassign.assignor.consumer.sticky_base import member_hash_order, resolve_ownership
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.flow import IntArray
from kassign.assignor.shared_objects import per_object

__all__ = ["BoolArray", "Problem", "Unit", "build_problems", "settled_owners"]

Unit = tuple[TopicPartition, ...]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Problem:
    """Units of one size, and everything the flows read about them.

    Members are indexed in member-id order (``members``); ``rack_of[m]`` indexes ``racks``, with
    ``len(racks)`` for a member without a rack (never cross-rack, as ``cross_rack_partitions``
    counts). ``class_cost[k, r]``: partitions of a class-``k`` unit a member on rack ``r`` reads
    across racks. ``claim_unit``/``claim_member``/``claim_count``: per claim, how many of the
    unit's partitions the member owns (sorted by unit, then member). ``space``: set when every
    unit is one partition, the units then being the space's ids in order and ``units`` empty
    (issue 24: a ``Unit`` per partition was most of a million-partition call).
    """

    size: int
    members: tuple[str, ...]
    racks: tuple[str, ...]
    rack_of: IntArray
    sub_of: IntArray
    units: tuple[Unit, ...]
    class_of: IntArray
    class_eligible: BoolArray
    class_cost: IntArray
    claim_unit: IntArray
    claim_member: IntArray
    claim_count: IntArray
    space: PartitionSpace | None = None

    @property
    def num_subs(self) -> int:
        return int(self.class_eligible.shape[1])

    @property
    def num_units(self) -> int:
        return self.space.total if self.space is not None else len(self.units)


def settled_claims(group: ConsumerGroup) -> Mapping[str, Sequence[TopicPartition]]:
    """Each member's claims on the topics assigned, settled as ``cooperative-sticky`` settles
    them (compact claims stay compact)."""
    topics = partitions_per_topic(group)
    members = member_hash_order(group)
    data = cooperative_members_data(members)
    return resolve_ownership(members, topics, data, hash_ordered=True).owned


def settled_owners(group: ConsumerGroup) -> dict[TopicPartition, str]:
    """Each claimed partition's owner, claims settled as ``cooperative-sticky`` settles them."""
    return _owners(settled_claims(group))


def _owners(claims: Mapping[str, Sequence[TopicPartition]]) -> dict[TopicPartition, str]:
    return {tp: member for member, tps in claims.items() for tp in tps}


def build_problems(group: ConsumerGroup, options: AssignOptions) -> list[Problem]:
    """The group's units, split by size (singletons first), as arrays."""
    topics = partitions_per_topic(group)
    members = sorted(group.members, key=lambda m: java_key(m.member_id))
    racks = tuple(sorted({m.rack for m in members if m.rack is not None}))
    rack_index = {r: i for i, r in enumerate(racks)}
    rack_of = np.array([rack_index.get(m.rack or "", len(racks)) for m in members], np.int64)
    subs: dict[frozenset[str], int] = {}
    subscribed = per_object([m.topics for m in members], frozenset)  # members share a few
    sub_of = np.array([subs.setdefault(s, len(subs)) for s in subscribed], np.int64)
    together = _co_partitioned(options, topics)
    member_index = {m.member_id: i for i, m in enumerate(members)}
    claims = settled_claims(group)
    context = _Context(group, tuple(subs), racks, rack_of, sub_of, claims, member_index)
    names = tuple(m.member_id for m in members)
    if not together:
        return [context.singletons(PartitionSpace.of(topics), names)] if topics else []
    by_size: dict[int, list[Unit]] = {}
    for unit in _units(topics, together):
        by_size.setdefault(len(unit), []).append(unit)
    return [context.problem(size, by_size[size], names) for size in sorted(by_size)]


def _co_partitioned(options: AssignOptions, topics: Mapping[str, int]) -> list[tuple[str, ...]]:
    """The sets to keep together; a topic may be in one set, and must be assigned (read by a
    member and in the metadata): a set naming one that is not was once silently dropped."""
    seen: set[str] = set()
    sets = []
    for i, topic_set in enumerate(options.co_partitioned):
        for topic in sorted(topic_set):
            if topic in seen:
                raise InvalidRequest(
                    f"topic {topic!r} is in two co-partitioned sets",
                    field=f"options.co_partitioned[{i}]",
                )
            if topic not in topics:
                raise InvalidRequest(
                    f"co-partitioned topic {topic!r} is read by no member, or not in the metadata",
                    field=f"options.co_partitioned[{i}]",
                )
            seen.add(topic)
        if len(topic_set) > 1:
            sets.append(tuple(sorted(topic_set)))
    return sets


def _units(topics: Mapping[str, int], together: Sequence[tuple[str, ...]]) -> list[Unit]:
    """Every partition once: columns of the co-partitioned sets, the rest one by one; sorted."""
    units: list[Unit] = []
    grouped = {t for s in together for t in s}
    for topic_set in together:
        for p in range(max(topics[t] for t in topic_set)):
            units.append(tuple(TopicPartition(t, p) for t in topic_set if p < topics[t]))
    for topic, count in topics.items():
        if topic not in grouped:
            units.extend((TopicPartition(topic, p),) for p in range(count))
    units.sort()
    return units


@dataclass(frozen=True, slots=True)
class _Context:
    group: ConsumerGroup
    subs: tuple[frozenset[str], ...]
    racks: tuple[str, ...]
    rack_of: IntArray
    sub_of: IntArray
    claims: Mapping[str, Sequence[TopicPartition]]
    member_index: Mapping[str, int]

    def problem(self, size: int, units: list[Unit], members: tuple[str, ...]) -> Problem:
        eligible_of: dict[frozenset[str], tuple[bool, ...]] = {}
        cost_of: dict[frozenset[str], tuple[int, ...]] = {}
        classes: dict[tuple[tuple[bool, ...], tuple[int, ...]], int] = {}
        class_of = np.empty(len(units), np.int64)
        claims: list[tuple[int, int, int]] = []
        owners = _owners(self.claims)
        for u, unit in enumerate(units):
            topic_set = frozenset(tp.topic for tp in unit)
            eligible = eligible_of.get(topic_set)
            if eligible is None:
                eligible = tuple(topic_set <= s for s in self.subs)
                eligible_of[topic_set] = eligible
                if not any(eligible):
                    raise InvalidRequest(
                        f"no member subscribes to every topic of {sorted(topic_set)}",
                        field="options.co_partitioned",
                    )
            cost = self._cost(unit, cost_of)
            class_of[u] = classes.setdefault((eligible, cost), len(classes))
            claims.extend(self._claims(u, unit, eligible, owners))
        keys = list(classes)
        claim = np.array(sorted(claims), np.int64).reshape(-1, 3)
        return Problem(
            size=size,
            members=members,
            racks=self.racks,
            rack_of=self.rack_of,
            sub_of=self.sub_of,
            units=tuple(units),
            class_of=class_of,
            class_eligible=np.array([k[0] for k in keys], bool).reshape(len(keys), -1),
            class_cost=np.array([k[1] for k in keys], np.int64).reshape(len(keys), -1),
            claim_unit=claim[:, 0],
            claim_member=claim[:, 1],
            claim_count=claim[:, 2],
        )

    def singletons(self, space: PartitionSpace, members: tuple[str, ...]) -> Problem:
        """``problem`` of every partition of ``space`` on its own, as whole arrays: a unit's
        class is its topic's eligibility and its replica rack set's costs, numbered in order of
        first appearance as ``problem`` numbers them, with no step per partition."""
        eligible_id: dict[tuple[bool, ...], int] = {}
        topic_class = np.empty(len(space.names), np.int64)
        for i, topic in enumerate(space.names):
            eligible = tuple(topic in s for s in self.subs)
            if not any(eligible):
                raise InvalidRequest(
                    f"no member subscribes to every topic of {[topic]}",
                    field="options.co_partitioned",
                )
            topic_class[i] = eligible_id.setdefault(eligible, len(eligible_id))
        rack_sets, set_of = replica_rack_sets(self.group.topics, space)
        cost_id: dict[tuple[int, ...], int] = {}
        set_cost = np.array(
            [cost_id.setdefault(self._set_cost(rs), len(cost_id)) for rs in rack_sets], np.int64
        )
        sizes = np.diff(space.offsets)
        pair = np.repeat(topic_class, sizes) * len(cost_id) + set_cost[set_of]
        keys, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(keys), np.int64)
        rank[order] = np.arange(len(keys), dtype=np.int64)
        eligibles, costs = list(eligible_id), list(cost_id)
        ordered = keys[order].tolist()
        claim = self._space_claims(space, topic_class, np.array(eligibles, bool))
        return Problem(
            size=1,
            members=members,
            racks=self.racks,
            rack_of=self.rack_of,
            sub_of=self.sub_of,
            units=(),
            class_of=rank[inverse.reshape(-1)],
            class_eligible=np.array([eligibles[k // len(costs)] for k in ordered], bool).reshape(
                len(ordered), -1
            ),
            class_cost=np.array([costs[k % len(costs)] for k in ordered], np.int64).reshape(
                len(ordered), -1
            ),
            claim_unit=claim[0],
            claim_member=claim[1],
            claim_count=np.ones(len(claim[0]), np.int64),
            space=space,
        )

    def _space_claims(
        self, space: PartitionSpace, topic_class: IntArray, eligible: BoolArray
    ) -> tuple[IntArray, IntArray]:
        """The settled claims as (unit, member) columns sorted by unit, a claim of a member
        no longer subscribed to the partition's topic left out (as ``_claims`` leaves it); read
        as one column (``claimed_column``), no step per claimed partition."""
        owning = [m for m, tps in self.claims.items() if tps]
        if not owning:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        units, sizes = space.claimed_column([self.claims[m] for m in owning])
        members = np.fromiter(map(self.member_index.__getitem__, owning), np.int64, len(owning))
        owner = np.repeat(members, sizes)
        kept = eligible[topic_class[space.topic_of(units)], self.sub_of[owner]]
        units, owner = units[kept], owner[kept]
        order = np.argsort(units, kind="stable")
        return units[order], owner[order]

    def _set_cost(self, replica_racks: frozenset[str]) -> tuple[int, ...]:
        return tuple(int(r not in replica_racks) for r in self.racks) + (0,)

    def _cost(self, unit: Unit, cache: dict[frozenset[str], tuple[int, ...]]) -> tuple[int, ...]:
        """Cross-rack partitions of ``unit`` per member rack (a rackless member last, 0)."""
        total = [0] * (len(self.racks) + 1)
        for tp in unit:
            replica_racks = self.group.topics[tp.topic].partition_racks[tp.partition]
            per_rack = cache.get(replica_racks)
            if per_rack is None:
                per_rack = self._set_cost(replica_racks)
                cache[replica_racks] = per_rack
            if len(unit) == 1:
                return per_rack
            total = [a + b for a, b in zip(total, per_rack, strict=True)]
        return tuple(total)

    def _claims(
        self, u: int, unit: Unit, eligible: tuple[bool, ...], owners: Mapping[TopicPartition, str]
    ) -> list[tuple[int, int, int]]:
        counts: dict[int, int] = {}
        for tp in unit:
            owner = owners.get(tp)
            if owner is None:
                continue
            m = self.member_index[owner]
            if eligible[int(self.sub_of[m])]:
                counts[m] = counts.get(m, 0) + 1
        return [(u, m, c) for m, c in sorted(counts.items())]
