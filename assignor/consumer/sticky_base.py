"""What ``sticky`` and ``cooperative-sticky`` share: Kafka's ``AbstractStickyAssignor``'s inputs.

Each member's previous ownership comes through the assignor's own ``member_data`` (the two
assignors differ only there, and in what cooperative does afterwards); ``resolve_ownership``
settles partitions claimed by several members and tells whether every member subscribes to
the same topics, which picks the builder (``sticky_constrained`` or ``sticky_general``);
``rack_info`` decides rack mode once, for the whole group.

Claims are settled walking the members in Java hash order (``java_order``), as Kafka does:

- a claim on a topic nobody subscribes to, or one without metadata, is dropped;
- the first claim on a partition stands until a later one comes;
- a later claim from the same generation as the standing one (that one's generation read from
  its *subscription*, while the newcomer's comes from its member data: for eager ``sticky``
  the two can differ) voids both, and marks the partition as claimed by several owners;
- a later claim from a higher generation wins; from a lower one, loses.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from kassign.assignor.claims import any_claimed
from kassign.assignor.consumer.columns import Ids, PartitionSpace, replica_rack_sets
from kassign.assignor.consumer.common import rack_reason
from kassign.assignor.consumer.java_order import SIZED_BY_COUNT, hash_order, string_hash
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    ConsumerGroup,
    Member,
    OwnedPartitions,
    TopicPartition,
    distinct_claims,
)
from kassign.assignor.consumer.result import RackReason
from kassign.assignor.shared_objects import distinct_objects, per_object

__all__ = [
    "MemberData",
    "Ownership",
    "RackInfo",
    "StickyOutcome",
    "member_hash_order",
    "rack_info",
    "rack_numbers",
    "resolve_ownership",
    "subscription_generation",
]

_TOPIC = operator.itemgetter(0)
_MEMBER_ID = operator.attrgetter("member_id")
_TOPICS = operator.attrgetter("topics")
_RACK_ID = operator.attrgetter("rack_id")
_GENERATION = operator.attrgetter("generation")
_PARTITIONS = operator.attrgetter("partitions")
_NONE: Ids = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class MemberData:
    """A member's previous partitions and generation as a sticky assignor reads them.

    ``generation`` is ``None`` when the member gave none (Kafka's empty ``Optional``).
    """

    partitions: Sequence[TopicPartition]
    generation: int | None


@dataclass(frozen=True, slots=True)
class RackInfo:
    """Kafka's ``RackInfo`` over the partitions' ids (``columns``): racks by member, and per
    partition its replicas' racks, empty unless rack mode is on.

    ``counted`` (per partition id, the members whose rack holds a replica) is filled whenever
    some member has a rack, rack mode or not, as in Kafka: the constrained builder sorts by it
    either way (which changes nothing when rack mode is off).
    """

    reason: RackReason
    member_rack: Mapping[str, str]
    space: PartitionSpace
    rack_sets: tuple[frozenset[str], ...]  # the distinct replica rack sets
    set_of: Ids  # per partition id, its rack set's index; empty unless rack mode
    counted: Ids  # per partition id; empty unless some member has a rack

    def racks_of(self, tp: TopicPartition) -> frozenset[str]:
        """The racks of ``tp``'s replicas (none outside rack mode)."""
        return self.racks_of_id(self.space.id_of(tp)) if len(self.set_of) else frozenset()

    def racks_of_id(self, partition: int) -> frozenset[str]:
        return self.rack_sets[self.set_of[partition]] if len(self.set_of) else frozenset()

    def mismatch(self, member: str, tp: TopicPartition) -> bool:
        """The member has a rack (in rack mode) that holds no replica of ``tp``."""
        rack = self.member_rack.get(member)
        return rack is not None and rack not in self.racks_of(tp)

    def local_to(self, rack: str | None) -> npt.NDArray[np.bool_]:
        """Per rack set, whether ``rack`` (a member's) is in it (every set for a member
        without a rack: it misses none)."""
        return np.array([rack is None or rack in s for s in self.rack_sets], dtype=bool)


def rack_numbers(
    rack: RackInfo, member_ids: Sequence[str]
) -> tuple[list[int], bytes, list[bool], int]:
    """Rack mode as numbers for the compiled core: per member its rack's number or -1, per
    partition its replica rack set (``rack.set_of``, int64 bytes), per (set, rack) whether the
    set holds the rack, the racks' count. Outside rack mode: no rack, no set."""
    if not rack.member_rack:
        return [-1] * len(member_ids), b"", [], 0
    names = sorted(set(rack.member_rack.values()))
    number = {r: i for i, r in enumerate(names)}
    of = rack.member_rack
    member_rack = [number[of[m]] if m in of else -1 for m in member_ids]
    set_has = [r in s for s in rack.rack_sets for r in names]
    return member_rack, np.asarray(rack.set_of, dtype=np.int64).tobytes(), set_has, len(names)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Claims after settling: each member's kept partitions (members in Kafka's map order)."""

    all_subscriptions_equal: bool
    owned: Mapping[str, Sequence[TopicPartition]]
    claimed_by_several: frozenset[TopicPartition]
    max_generation: int


@dataclass(frozen=True, slots=True)
class StickyOutcome:
    """A builder's answer; ``transferring`` (partition -> new owner) only from the constrained
    builder, which tracks it, ``None`` from the general one (cooperative computes it then)."""

    assignment: Mapping[str, Sequence[TopicPartition]]
    transferring: dict[TopicPartition, str] | None
    rack: RackInfo


def member_hash_order(group: ConsumerGroup) -> list[Member]:
    """Members as Kafka's ``GroupSubscription`` map iterates them (filled in arrival order)."""
    by_id = dict(zip(map(_MEMBER_ID, group.members), group.members))
    return list(map(by_id.__getitem__, hash_order(by_id, string_hash)))


def subscription_generation(member: Member) -> int:
    """The subscription's generation as Kafka reads it: negative means none, i.e. -1."""
    return member.generation if member.generation >= 0 else DEFAULT_GENERATION


def rack_info(group: ConsumerGroup, space: PartitionSpace) -> RackInfo:
    """Rack mode for the whole group, over every subscribed partition."""
    racks = (
        {m.member_id: m.rack for m in group.members if m.rack is not None}
        if any(map(_RACK_ID, group.members))  # a rack is a non-empty ``rack_id``
        else {}
    )
    if not racks:  # no member has a rack: nothing to match or count
        return RackInfo(rack_reason((), ()), {}, space, (), _NONE, _NONE)
    rack_sets, set_of = replica_rack_sets(group.topics, space)
    reason = rack_reason(racks.values(), rack_sets)
    per_rack: dict[str, int] = {}
    for r in racks.values():
        per_rack[r] = per_rack.get(r, 0) + 1
    # a few distinct rack sets serve tens of thousands of partitions: count each once
    per_set = np.array([sum(per_rack.get(r, 0) for r in rs) for rs in rack_sets], dtype=np.int64)
    counted: Ids = per_set[set_of] if len(set_of) else _NONE
    if not reason.enables:
        return RackInfo(reason, {}, space, (), _NONE, counted)
    return RackInfo(reason, racks, space, rack_sets, set_of, counted)


def resolve_ownership(
    members: list[Member],
    topics: Mapping[str, int],
    data: Mapping[str, MemberData],
    *,
    distinct: bool = False,
    hash_ordered: bool = False,
) -> Ownership:
    """Kafka's ``allSubscriptionsEqual``: compare subscriptions and settle claims.

    Subscriptions are compared with the first non-empty one seen: a member subscribed to
    nothing that comes first in hash order does not make the group unequal (Kafka's check).
    ``distinct``: the caller's claims check found no partition claimed twice in ``data``
    (its answer, so ``distinct_claims`` does not join the group's claims once more);
    ``hash_ordered``: ``members`` are ``member_hash_order``'s, so past 48 members (where the
    table's size follows from the count alone) the second map's order is theirs, not replayed.
    """
    ids = list(map(_MEMBER_ID, members))
    held = list(map(data.__getitem__, ids))
    equal = _equal_subscriptions(members)
    generations = set(map(_GENERATION, held))  # the group's few distinct values
    generations.discard(None)
    max_generation = max(generations | {DEFAULT_GENERATION})  # never below Kafka's default
    claims = list(map(_PARTITIONS, held))
    owned: Mapping[str, Sequence[TopicPartition]]
    if not any_claimed(claims):  # a fresh group: nothing to settle, nothing to filter
        owned = dict(zip(ids, claims, strict=True))
        several: set[TopicPartition] = set()
    elif distinct or distinct_claims(claims):
        # nobody claims a partition another claims: every claim on an assigned topic stands
        seen: dict[object, bool] = {}
        owned = {
            m.member_id: _assigned(c, topics, seen) for m, c in zip(members, claims, strict=True)
        }
        several = set()
    else:
        owned, several = _settle_claims(members, topics, data)
    # Kafka keeps these in a second HashMap, filled while walking the first: same keys, same
    # growth, hence the same order; replayed, unless ``members`` are in hash order already and
    # the table's size follows from the count (then the replay is the identity)
    if not (hash_ordered and len(owned) > SIZED_BY_COUNT):
        order = hash_order(owned, string_hash)
        owned = dict(zip(order, map(owned.__getitem__, order)))
    return Ownership(equal, owned, frozenset(several), max_generation)


def _equal_subscriptions(members: Sequence[Member]) -> bool:
    """Every subscription the first non-empty one seen (an empty one before it does not
    count: Kafka's check). Members sharing one topic list object are equal at once (issue
    24: a fresh group's members mostly do); else compared as sets, one per distinct list."""
    lists = list(map(_TOPICS, members))
    if len(distinct_objects(lists)) <= 1:
        return True
    first: frozenset[str] = frozenset()
    for subscribed in per_object(lists, frozenset):
        if not first:
            first = subscribed
        elif subscribed is not first and subscribed != first:  # shared: no compare
            return False
    return True


def _assigned(
    claims: Sequence[TopicPartition], topics: Mapping[str, int], seen: dict[object, bool]
) -> Sequence[TopicPartition]:
    """The claims on topics being assigned, in claim order (compact claims stay compact, those
    of other topics passed over without an object per partition; ``seen``: ``of_topics``')."""
    if isinstance(claims, OwnedPartitions):
        return claims.of_topics(topics, seen)
    if set(map(_TOPIC, claims)).issubset(topics):
        return list(claims)
    return [tp for tp in claims if tp.topic in topics]


def _settle_claims(
    members: list[Member], topics: Mapping[str, int], data: Mapping[str, MemberData]
) -> tuple[dict[str, list[TopicPartition]], set[TopicPartition]]:
    """Claims walked one by one, in member order: each member's standing claims, and the
    partitions claimed by several members of one generation."""
    owned: dict[str, list[TopicPartition]] = {}
    standing: dict[TopicPartition, Member] = {}
    several: set[TopicPartition] = set()
    for member in members:
        md = data[member.member_id]
        generation = md.generation if md.generation is not None else DEFAULT_GENERATION
        mine: list[TopicPartition] = []
        owned[member.member_id] = mine
        for tp in md.partitions:
            if tp.topic not in topics:
                continue
            other = standing.get(tp)
            if other is None:
                mine.append(tp)
                standing[tp] = member
                continue
            other_generation = subscription_generation(other)
            if generation == other_generation:
                several.add(tp)
                _discard(owned[other.member_id], tp)
                standing[tp] = member
            elif generation > other_generation:
                mine.append(tp)
                _discard(owned[other.member_id], tp)
                standing[tp] = member
    return owned, several


def _discard(partitions: list[TopicPartition], tp: TopicPartition) -> None:
    if tp in partitions:
        partitions.remove(tp)
