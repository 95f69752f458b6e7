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
import re
from array import array
from bisect import bisect_right
from collections.abc import Collection, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from typing import NamedTuple, overload

import numpy as np
from kassign.assignor.errors import InvalidRequest

__all__ = [
    "DEFAULT_GENERATION",
    "AssignOptions",
    "ConsumerGroup",
    "Member",
    "OwnedPartitions",
    "Topic",
    "TopicPartition",
    "as_topic_partitions",
    "check_partitions",
    "claims_on",
    "consumer_group",
    "distinct_claims",
    "shared_claims",
    "topic_partitions",
]

DEFAULT_GENERATION = -1
"""A subscription's generation when it has none (Kafka: any negative value means absent)."""

_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_RACKS = operator.attrgetter("partition_racks")  # a topic's, one per partition


class TopicPartition(NamedTuple):
    """A partition of a topic, ordered by topic then partition number.

    A tuple rather than a dataclass: assignors hash and compare partitions in their inner
    loops, and the tuple's order is Kafka's ``TopicPartitionComparator`` (topic names are ASCII,
    so Python's string order is Java's).
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def claims_on(
    partitions: Collection[TopicPartition], topics: Container[str]
) -> Collection[TopicPartition]:
    """``partitions`` as they are, or, when compact (``OwnedPartitions``), only those on
    ``topics``: for counts and comparisons with assigned partitions, which claims of other
    topics never meet, without an object per such claim."""
    return partitions.of_topics(topics) if isinstance(partitions, OwnedPartitions) else partitions


def distinct_claims(claims: Sequence[Collection[TopicPartition]]) -> bool:
    """Whether no partition is claimed twice over all ``claims``; compact ones (all
    ``OwnedPartitions``) are compared topic by topic as numbers, without an object each."""
    if not all(isinstance(c, OwnedPartitions) for c in claims):
        return len(set().union(*claims)) == sum(map(len, claims))
    by_topic: dict[str, list[array[int]]] = {}
    for owned in claims:
        for topic, numbers in owned.runs:  # type: ignore[attr-defined]
            by_topic.setdefault(topic, []).append(numbers)
    return all(map(_distinct_numbers, by_topic.values()))


def shared_claims(claims: Sequence[OwnedPartitions]) -> dict[str, set[int]]:
    """Per topic, the partitions more than one of ``claims`` holds (each distinct within
    itself), found topic by topic as numbers, without an object per partition."""
    by_topic: dict[str, list[array[int]]] = {}
    for owned in claims:
        for topic, numbers in owned.runs:
            by_topic.setdefault(topic, []).append(numbers)
    shared = {}
    for topic, runs in by_topic.items():
        if len(runs) > 1:
            values = np.sort(np.concatenate([np.frombuffer(run, dtype=np.intc) for run in runs]))
            repeated = values[1:][values[1:] == values[:-1]]
            if len(repeated):
                shared[topic] = set(repeated.tolist())
    return shared


def _distinct_numbers(runs: list[array[int]]) -> bool:
    """No number twice over ``runs`` (sorted in C: ``np.unique`` hashes, several times slower)."""
    values = np.sort(np.concatenate([np.frombuffer(run, dtype=np.intc) for run in runs]))
    return not np.any(values[1:] == values[:-1])


def as_topic_partitions(pairs: Iterable[tuple[str, int]]) -> tuple[TopicPartition, ...]:
    """(topic, partition) pairs as ``TopicPartition``s, without a Python step per partition
    (``tuple.__new__`` over the pairs: the values the constructor gives). A group's owned
    partitions run to tens of thousands."""
    return tuple(map(tuple.__new__, repeat(TopicPartition), pairs))


def topic_partitions(topic: str, partitions: Iterable[int]) -> list[TopicPartition]:
    """``TopicPartition(topic, p)`` for each ``p``, as ``as_topic_partitions`` builds them."""
    return list(map(tuple.__new__, repeat(TopicPartition), zip(repeat(topic), partitions)))


class OwnedPartitions(Sequence[TopicPartition]):
    """Claimed partitions in claim order, kept per {topic, partitions} entry as on the wire: the
    topic once, its numbers in one ``array('i')``, 4 bytes a partition where a ``TopicPartition``
    takes about 70 (issue 16: 4 million owned partitions took 2.7 GB as objects). Iterating
    builds each ``TopicPartition`` as it goes; equal to any sequence of the same partitions.
    """

    __slots__ = ("_ends", "_runs")

    def __init__(self, runs: Iterable[tuple[str, Iterable[int]]] = ()) -> None:
        self._runs = tuple(
            (topic, numbers if isinstance(numbers, array) else array("i", numbers))
            for topic, numbers in runs
        )
        self._ends = tuple(accumulate(len(numbers) for _, numbers in self._runs))

    @staticmethod
    def sorted_from(partitions: Iterable[tuple[str, int]]) -> OwnedPartitions:
        """``partitions`` sorted, one entry per topic (as Kafka's leader reads them)."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        return OwnedPartitions((t, sorted(by_topic[t])) for t in sorted(by_topic))

    @property
    def runs(self) -> tuple[tuple[str, array[int]], ...]:
        """The entries: each topic and its partition numbers, in claim order."""
        return self._runs

    def of_topics(self, topics: Container[str]) -> OwnedPartitions:
        """The claims on ``topics`` only, dropped entry by entry."""
        return OwnedPartitions(run for run in self._runs if run[0] in topics)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __iter__(self) -> Iterator[TopicPartition]:
        return chain.from_iterable(
            map(tuple.__new__, repeat(TopicPartition), zip(repeat(t), numbers))
            for t, numbers in self._runs
        )

    @overload
    def __getitem__(self, index: int) -> TopicPartition: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TopicPartition, ...]: ...

    def __getitem__(self, index: int | slice) -> TopicPartition | tuple[TopicPartition, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        at = index + len(self) if index < 0 else index
        if not 0 <= at < len(self):
            raise IndexError(index)
        run = bisect_right(self._ends, at)
        topic, numbers = self._runs[run]
        return TopicPartition(topic, numbers[at - (self._ends[run - 1] if run else 0)])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"OwnedPartitions({[(t, list(numbers)) for t, numbers in self._runs]!r})"


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic in the cluster metadata: per partition (index = partition number) the racks of
    its replicas, offline and out-of-sync ones included (KIP-881). Replicas on brokers without
    ``broker.rack`` add nothing, so a partition may have no rack at all."""

    name: str
    partition_racks: tuple[frozenset[str], ...]

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
    ``time_budget_s``: the solver's budget, past which a valid fallback is returned and reported.
    """

    cooperative: bool = False
    co_partitioned: tuple[frozenset[str], ...] = ()
    stickiness_cost: float = 0.0
    time_budget_s: float = 2.0


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
    for member in members:
        _check_member(member, topic_map, seen_ids, seen_instances)
    return ConsumerGroup(members, dict(sorted(topic_map.items())))


def _legal_topic_name(name: str) -> bool:
    return bool(_TOPIC_NAME.fullmatch(name)) and name not in (".", "..")


def _check_topic_name(name: str, field: str, member: str | None) -> None:
    if not _legal_topic_name(name):
        raise InvalidRequest(f"illegal topic name {name!r}", field=field, member=member)


def _check_member(
    member: Member, topics: Mapping[str, Topic], seen_ids: set[str], seen_instances: set[str]
) -> None:
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
    for topic in member.topics:
        if topic not in topics:  # the metadata's names are checked already
            _check_topic_name(topic, "topics", who)
    if len(set(member.topics)) != len(member.topics):
        raise InvalidRequest("a topic is subscribed twice", field="topics", member=who)
    if not _INT32_MIN <= member.generation <= _INT32_MAX:
        raise InvalidRequest(
            f"generation {member.generation} is outside int32", field="generation", member=who
        )
    check_partitions(member.owned_partitions, topics, field="owned_partitions", member=who)


def check_partitions(
    partitions: Iterable[TopicPartition],
    topics: Mapping[str, Topic],
    *,
    field: str,
    member: str,
) -> None:
    """Claimed partitions must have legal topic names, be distinct and, for topics in the
    metadata, exist there. Partitions of other topics are ignored by every assignor.
    ``topics`` is a checked group's metadata (``consumer_group``): its names are legal.

    The usual claim (distinct partitions of known topics, numbers under the smallest of their
    topics' counts) is recognised with set and min/max passes; anything else is walked
    partition by partition, which finds the first fault in claim order."""
    if isinstance(partitions, OwnedPartitions) and _runs_plainly_valid(partitions, topics):
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


def _runs_plainly_valid(claimed: OwnedPartitions, topics: Mapping[str, Topic]) -> bool:
    """``_plainly_valid`` for compact claims, topic by topic and without an object per
    partition; claims of topics outside the metadata need legal names and distinct numbers."""
    by_topic: dict[str, list[array[int]]] = {}
    for topic, numbers in claimed.runs:
        by_topic.setdefault(topic, []).append(numbers)
    for topic, runs in by_topic.items():
        known = topics.get(topic)
        if known is None and not _legal_topic_name(topic):
            return False
        values = np.concatenate([np.frombuffer(run, dtype=np.intc) for run in runs])
        count = known.partitions if known is not None else _INT32_MAX
        if len(values) and (values.min() < 0 or values.max() >= count):
            return False
        if not _distinct_numbers(runs):
            return False
    return True


def _plainly_valid(claimed: tuple[TopicPartition, ...], topics: Mapping[str, Topic]) -> bool:
    """No repeats, every topic in the metadata, every number in [0, the least count)."""
    named = set(map(_FIRST, claimed))
    if not all(map(topics.__contains__, named)) or len(set(claimed)) != len(claimed):
        return False
    numbers: list[int] = list(map(_SECOND, claimed))
    least = min(map(len, map(_RACKS, map(topics.__getitem__, named))))
    return min(numbers) >= 0 and max(numbers) < least
