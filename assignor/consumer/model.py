"""The consumer assignors' input: a classic consumer group at the leader's JoinGroup, read-only.

What Kafka's ``ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)`` reads, and no more:
per member its ``Subscription`` fields as they arrive on the wire (``ConsumerProtocolSubscription``
v0-3), and per subscribed topic the racks of each partition's replicas (KIP-881).

Ownership is carried as Kafka carries it, and each assignor reads it as Kafka's does:
``owned_partitions`` and ``generation`` are the subscription's fields (v1+, v2+), ``user_data``
the assignor's own bytes. ``cooperative-sticky`` takes the fields, or the generation from its
user data when the field is absent; eager ``sticky`` ignores the fields and decodes its previous
assignment and generation from ``user_data`` (``kassign.kafka.consumer_user_data``);
``range`` and ``roundrobin`` ignore both.

Members keep the order the leader received them in: Kafka walks them in the order of a Java
``HashMap`` filled in that order, which the sticky assignors reproduce (``java_order``).
Build a group with ``consumer_group(...)``, which checks it (``InvalidRequest`` naming the
field and the member).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np
import numpy.typing as npt
from kassign.assignor.claims import (
    OwnedPartitions,
    TopicPartition,
    any_claimed,
    as_topic_partitions,
    claim_columns,
    claims_on,
    distinct_claims,
    none_repeated,
    per_entry,
    per_number,
    shared_claims,
    topic_partitions,
)
from kassign.assignor.consumer.group_claims import GroupClaims
from kassign.assignor.consumer.member_checks import INT32_MAX as _INT32_MAX
from kassign.assignor.consumer.member_checks import INT32_MIN as _INT32_MIN
from kassign.assignor.consumer.member_checks import legal_topic_name as _legal_topic_name
from kassign.assignor.consumer.member_checks import plainly_sound
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.load.figures import Balance

__all__ = [
    "DEFAULT_GENERATION",
    "AssignOptions",
    "ConsumerGroup",
    "Member",
    "OwnedPartitions",
    "RackSetIds",
    "Topic",
    "TopicPartition",
    "as_topic_partitions",
    "check_claims",
    "check_partitions",
    "claims_on",
    "consumer_group",
    "distinct_claims",
    "partition_counts",
    "shared_claims",
    "topic_partitions",
]

DEFAULT_GENERATION = -1
"""A subscription's generation when it has none (Kafka: any negative value means absent)."""

_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_MEMBER_ID, _OWNED = operator.attrgetter("member_id"), operator.attrgetter("owned_partitions")
_RACKS = operator.attrgetter("partition_racks")  # a topic's, one per partition


@dataclass(frozen=True, slots=True)
class RackSetIds:
    """A topic's replica rack sets as numbers, for a caller that has them so (the service's
    decoder: a compact request sends each partition's as an index into a few distinct lists):
    ``sets``, distinct, one tuple shared by every topic of the group that has them, and per
    partition its set's index in ``sets``, which must agree with the topic's
    ``partition_racks``. The assignors then number a million partitions' rack sets without
    hashing a ``frozenset`` each (issue 24: 40-50% of rack-aware ``range``'s call)."""

    sets: tuple[frozenset[str], ...]
    ids: npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic in the cluster metadata: per partition (index = partition number) the racks of
    its replicas, offline and out-of-sync ones included (KIP-881). Replicas on brokers without
    ``broker.rack`` add nothing, so a partition may have no rack at all. ``rack_set_ids``:
    optionally the same racks as numbers (``RackSetIds``); not part of the topic's value."""

    name: str
    partition_racks: tuple[frozenset[str], ...]
    rack_set_ids: RackSetIds | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def without_racks(name: str, partitions: int) -> Topic:
        """A topic whose brokers have no racks (rack-aware assignment then stays off)."""
        return Topic(name, (frozenset(),) * partitions)

    @property
    def partitions(self) -> int:
        return len(self.partition_racks)


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """One member's subscription as the leader decoded it.

    ``generation`` is the subscription's generation id, ``DEFAULT_GENERATION`` (-1) when the
    member sent none (protocol v0-1) or has none yet; ``rack_id`` is ``client.rack`` (an empty
    rack is no rack, as Kafka's decoder makes it); ``group_instance_id`` marks a static member.
    """

    member_id: str
    topics: tuple[str, ...]
    group_instance_id: str | None = None
    rack_id: str | None = None
    owned_partitions: Sequence[TopicPartition] = ()  # a tuple, or compact ``OwnedPartitions``
    generation: int = DEFAULT_GENERATION
    user_data: bytes | None = None

    @property
    def rack(self) -> str | None:
        """The rack that takes part in rack-aware assignment: ``None`` for none or empty."""
        return self.rack_id or None


@dataclass(frozen=True, slots=True)
class ConsumerGroup:
    """The members in the order the leader received them, and the cluster's topics by name.

    Subscribed topics missing from ``topics`` (or with no partitions) are skipped, as Kafka skips
    topics without metadata; topics nobody subscribes to are never assigned.
    """

    members: tuple[Member, ...]
    topics: Mapping[str, Topic]

    def partition_count(self, topic: str) -> int:
        """Partitions of ``topic`` in the metadata; 0 when it has none."""
        found = self.topics.get(topic)
        return found.partitions if found is not None else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignOptions:
    """How kassign's own assignor may assign; Kafka's four read none of it.

    ``cooperative``: a partition changes owner only through revocation (withheld this round);
    ``co_partitioned``: sets of topics whose partition p goes to one member; ``stickiness_cost``:
    the cost of moving an owned partition, against 1 per cross-rack partition (0: racks
    first, exactly, then the fewest moves);
    ``time_budget_s``: the solver's budget, past which a valid fallback is returned and reported;
    ``balance``: ``LOAD`` balances load per unit of capacity (issue 25) with ``sticky``,
    ``cooperative-sticky`` and ``rack-optimal`` (``load_balanced``), from ``loads`` (topic ->
    each partition's load; 1 for a topic not listed) and ``capacities`` (member id -> weight;
    1 for a member not listed).
    """

    cooperative: bool = False
    co_partitioned: tuple[frozenset[str], ...] = ()
    stickiness_cost: float = 0.0
    time_budget_s: float = 2.0
    balance: Balance = Balance.COUNT
    loads: Mapping[str, Sequence[float]] | None = None
    capacities: Mapping[str, float] | None = None


def consumer_group(members: Iterable[Member], topics: Iterable[Topic]) -> ConsumerGroup:
    """A checked ``ConsumerGroup``; ``InvalidRequest`` names the field and member at fault.

    Refused, because Kafka's answer would be undefined or because no real group sends them:
    duplicate member or instance ids, duplicate topics in a subscription, illegal topic names,
    generations outside int32, and owned partitions that repeat or do not exist in the metadata
    (Kafka's sticky assignors would hand such a partition out twice).
    """
    topic_map: dict[str, Topic] = {}
    for i, topic in enumerate(topics):
        _check_topic_name(topic.name, f"topics[{i}].name", None)
        if topic.name in topic_map:
            raise InvalidRequest(f"topic {topic.name!r} listed twice", field=f"topics[{i}]")
        topic_map[topic.name] = topic
    members = tuple(members)
    if not members:
        raise InvalidRequest("a group has at least one member", field="members")
    seen_ids: set[str] = set()
    seen_instances: set[str] = set()
    checked: dict[int, tuple[str, ...]] = {}  # topic lists found sound, by identity
    counts = partition_counts(topic_map)
    claims = list(zip(map(_MEMBER_ID, members), map(_OWNED, members)))
    for i, member in enumerate(() if plainly_sound(members, topic_map) else members):
        try:
            _check_member(member, topic_map, seen_ids, seen_instances, checked)
        except InvalidRequest:
            # a fault of an earlier member's claims comes first, as checked member by member
            check_claims(claims[:i], topic_map, field="owned_partitions", counts=counts)
            raise
    check_claims(claims, topic_map, field="owned_partitions", counts=counts)
    return ConsumerGroup(members, dict(sorted(topic_map.items())))


def _check_topic_name(name: str, field: str, member: str | None) -> None:
    if not _legal_topic_name(name):
        raise InvalidRequest(f"illegal topic name {name!r}", field=field, member=member)


def _check_member(
    member: Member,
    topics: Mapping[str, Topic],
    seen_ids: set[str],
    seen_instances: set[str],
    checked: dict[int, tuple[str, ...]],
) -> None:
    """The member's own fields but its claims (``check_claims`` checks the group's at once)."""
    who = member.member_id
    if not who:
        raise InvalidRequest("member id is empty", field="member_id")
    if who in seen_ids:
        raise InvalidRequest("member id listed twice", field="member_id", member=who)
    seen_ids.add(who)
    instance = member.group_instance_id
    if instance is not None:
        if not instance:
            raise InvalidRequest("empty group instance id", field="group_instance_id", member=who)
        if instance in seen_instances:
            raise InvalidRequest(
                f"group instance id {instance!r} used twice", field="group_instance_id", member=who
            )
        seen_instances.add(instance)
    if id(member.topics) not in checked:
        _check_topics(member, topics)
        checked[id(member.topics)] = member.topics  # kept, so the id stays its own
    if not _INT32_MIN <= member.generation <= _INT32_MAX:
        raise InvalidRequest(
            f"generation {member.generation} is outside int32", field="generation", member=who
        )


def _check_topics(member: Member, topics: Mapping[str, Topic]) -> None:
    """A subscription's topic names are legal and distinct. Members mostly share one topic
    list object (the service's decoder keeps equal lists as one), checked once."""
    for topic in member.topics:
        if topic not in topics:  # the metadata's names are checked already
            _check_topic_name(topic, "topics", member.member_id)
    if len(set(member.topics)) != len(member.topics):
        raise InvalidRequest("a topic is subscribed twice", field="topics", member=member.member_id)


def check_partitions(
    partitions: Iterable[TopicPartition],
    topics: Mapping[str, Topic],
    *,
    field: str,
    member: str,
    counts: Mapping[str, int] | None = None,
) -> None:
    """Claimed partitions must have legal topic names, be distinct and, for topics in the
    metadata, exist there. Partitions of other topics are ignored by every assignor.
    ``topics`` is a checked group's metadata (``consumer_group``): its names are legal;
    ``counts`` its partition counts by topic, when a caller checks many members' claims
    (``partition_counts``, made once).

    The usual claim (distinct partitions of known topics, numbers under the smallest of their
    topics' counts) is recognised with set and min/max passes; anything else is walked
    partition by partition, which finds the first fault in claim order."""
    if isinstance(partitions, OwnedPartitions) and _runs_plainly_valid(
        partitions, topics, counts or partition_counts(topics)
    ):
        return
    claimed = tuple(partitions)
    if not claimed or _plainly_valid(claimed, topics):
        return
    seen: set[TopicPartition] = set()
    for tp in claimed:
        topic = topics.get(tp.topic)
        if topic is None:
            _check_topic_name(tp.topic, field, member)
        if tp in seen:
            raise InvalidRequest(f"{tp} listed twice", field=field, member=member)
        seen.add(tp)
        count = topic.partitions if topic is not None else _INT32_MAX
        if not 0 <= tp.partition < count:
            raise InvalidRequest(
                f"{tp} is not a partition of the topic", field=field, member=member
            )


def check_claims(
    claims: Sequence[tuple[str, Sequence[TopicPartition]]],
    topics: Mapping[str, Topic],
    *,
    field: str,
    counts: Mapping[str, int],
    group: GroupClaims | None = None,
) -> bool:
    """Each member's claims as ``check_partitions`` checks them, the first fault in member
    order raised. Compact claims (``OwnedPartitions``) of the whole group are checked at once
    (one pass over their numbers, not a few numpy calls per member: a rejoining group of a
    thousand members spent more on those than on assigning); any doubt, member by member.
    Returns whether the pass also found no partition claimed twice in the whole group
    (``distinct_claims``' answer, which a caller holding these claims need not ask again);
    ``False`` when not known. ``group``: the claims' reader's columns, read from there when
    they hold these claims (no pass over the members' arrays)."""
    if not any_claimed(map(_SECOND, claims)):  # a fresh group: nothing to check
        return True
    compact = [c for _, c in claims if isinstance(c, OwnedPartitions)]
    if len(compact) == len(claims):
        plain = _group_plainly_valid(compact, topics, counts, group)
        if plain is not None:
            return plain
    for member, partitions in claims:
        check_partitions(partitions, topics, field=field, member=member, counts=counts)
    return False


def _group_plainly_valid(
    claims: Sequence[OwnedPartitions],
    topics: Mapping[str, Topic],
    counts: Mapping[str, int],
    group: GroupClaims | None,
) -> bool | None:
    """``_runs_plainly_valid`` of every member's claims at once: legal names, numbers in
    their topics' ranges, none twice within a member (claims of two members may overlap).
    ``None`` when not plainly valid; else whether none is claimed twice in the group."""
    lists = {id(c.topics): c.topics for c in claims}  # members mostly share one topic tuple
    named = set().union(*lists.values())
    if not named.issubset(topics) and not all(t in topics or _legal_topic_name(t) for t in named):
        return None
    if group is not None and group.holds(claims):  # the reader's columns: topics numbered
        names, topic, numbers, sizes = group.names, group.topic, group.numbers, group.sizes
    else:
        held = [c for c in claims if c.numbers]
        column = {t: i for i, t in enumerate(sorted(named))}
        names, sizes = tuple(column), list(map(len, held))
        counted, numbers = claim_columns(held)

        def columns_of(listed: tuple[str, ...]) -> np.ndarray:
            return np.fromiter(map(column.__getitem__, listed), np.int64, count=len(listed))

        topic = per_number(per_entry(held, columns_of), counted, len(numbers))
    if not len(numbers):
        return True
    limit = np.fromiter(map(counts.get, names, repeat(_INT32_MAX)), np.int64, len(names))
    if numbers.min() < 0 or np.any(numbers >= limit[topic]):  # each topic's count bounds it
        return None
    if none_repeated(topic, numbers):
        return True  # none twice in the group, so none twice within a member
    owner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    keys = ((owner * len(names) + topic) << 32) | numbers.astype(np.int64)
    keys.sort()
    return None if bool(np.any(keys[1:] == keys[:-1])) else False


def partition_counts(topics: Mapping[str, Topic]) -> dict[str, int]:
    """Each topic's partition count."""
    return {name: topic.partitions for name, topic in topics.items()}


def _runs_plainly_valid(
    claimed: OwnedPartitions, topics: Mapping[str, Topic], counts: Mapping[str, int]
) -> bool:
    """``_plainly_valid`` for compact claims, as numbers, without an object per partition;
    claims of topics outside the metadata need legal names and distinct numbers."""
    named = set(claimed.topics)
    if not named.issubset(topics) and not all(t in topics or _legal_topic_name(t) for t in named):
        return False
    if not claimed.numbers:
        return True
    entries = len(claimed.topics)
    limits = np.fromiter(
        map(counts.get, claimed.topics, repeat(_INT32_MAX)), dtype=np.int64, count=entries
    )
    bound = np.repeat(limits, np.frombuffer(claimed.counts, dtype=np.int64))
    numbers = np.frombuffer(claimed.numbers, dtype=np.intc)
    if numbers.min() < 0 or np.any(numbers >= bound):
        return False
    return distinct_claims([claimed])


def _plainly_valid(claimed: tuple[TopicPartition, ...], topics: Mapping[str, Topic]) -> bool:
    """No repeats, every topic in the metadata, every number in [0, the least count)."""
    named = set(map(_FIRST, claimed))
    if not all(map(topics.__contains__, named)) or len(set(claimed)) != len(claimed):
        return False
    numbers: list[int] = list(map(_SECOND, claimed))
    least = min(map(len, map(_RACKS, map(topics.__getitem__, named))))
    return min(numbers) >= 0 and max(numbers) < least
