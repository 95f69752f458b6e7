"""Kafka's ``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment`` v0-v3: an int16
version header, then the struct.

Subscription: topics (array of string), userData (nullable bytes), ownedPartitions (v1+, array of
{topic, partitions}), generationId (v2+, -1 unknown), rackId (v3+, nullable string). As Kafka's
``ConsumerProtocol`` does, a header version above 3 is read as v3 and bytes after the struct are
ignored (newer versions only ever append fields); the header is kept as sent.

Assignment: assignedPartitions (array of {topic, partitions}), userData (nullable bytes), the
same layout at every version. A leader writes it at the highest version, 3
(``ConsumerProtocol.serializeAssignment``), topics in the order they first appear in the
assignor's partition list, each topic's partitions in list order (``assignment_for``).
"""

from __future__ import annotations

import dataclasses
import operator
import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

from kassign.kafka.buffer import Reader, TopicPartitionRuns, WireError, Writer

__all__ = [
    "LATEST_VERSION",
    "AssignmentEncoder",
    "ConsumerProtocolAssignment",
    "ConsumerProtocolSubscription",
    "OwnedTopicPartitions",
    "SubscriptionDecoder",
    "assignment_for",
    "decode_consumer_assignment",
    "decode_consumer_subscription",
    "encode_consumer_assignment",
    "encode_consumer_subscription",
]

LATEST_VERSION = 3

_ASSIGNMENT_HEAD = struct.Struct(">hi")  # version header, assignedPartitions count
_INT32 = struct.Struct(">i").pack
_ONE = _INT32(1)
_TOPIC, _PARTITION = operator.itemgetter(0), operator.itemgetter(1)


class OwnedTopicPartitions(NamedTuple):
    """{topic, partitions}: the element of ownedPartitions and of assignedPartitions alike.

    A tuple rather than a dataclass: a group's subscriptions carry tens of thousands of them,
    built in one pass from the decoder's (topic, partitions) pairs.
    """

    topic: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerProtocolSubscription:
    """The message as on the wire; ``version`` is the header, the body layout is min(version, 3)."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[OwnedTopicPartitions, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None


def _owned(runs: TopicPartitionRuns) -> tuple[OwnedTopicPartitions, ...]:
    return tuple(map(tuple.__new__, repeat(OwnedTopicPartitions), runs.groups()))


def _read_owned(r: Reader, what: str) -> tuple[OwnedTopicPartitions, ...]:
    return _owned(r.topic_partition_runs(what, "ownedPartitions topic"))


def decode_consumer_subscription(data: bytes) -> ConsumerProtocolSubscription:
    """Decode as Kafka does; ``WireError`` (with the byte offset) when the bytes run short."""
    return SubscriptionDecoder().decode(data)


class SubscriptionDecoder:
    """``decode_consumer_subscription`` for a whole group: the members of a group mostly send
    the same topic list, or one of a few, so a topic list whose bytes equal one already read is
    not read again; and they own partitions of the same topics, each topic name decoded once.

    Equal bytes at the same offset decode to the same topics and end at the same offset (the
    read depends on nothing else once it succeeded), so the answers and errors are those of
    decoding each subscription on its own. Kept lists are found by their bytes, tried at each
    kept length (lists of one group's topics come in few lengths). One decoder per request; it
    keeps at most ``_KEPT`` lists of ``_LENGTHS`` lengths, and the topic names it met.
    """

    _KEPT = 256
    _LENGTHS = 8

    def __init__(self) -> None:
        self._lists: dict[bytes, tuple[str, ...]] = {}
        self._lengths: list[int] = []
        self._names: dict[bytes, str] = {}

    def decode(self, data: bytes) -> ConsumerProtocolSubscription:
        sub, owned = self.decode_runs(data)
        return dataclasses.replace(sub, owned_partitions=_owned(owned))

    def decode_runs(self, data: bytes) -> tuple[ConsumerProtocolSubscription, TopicPartitionRuns]:
        """``decode``, the owned partitions apart as runs (``TopicPartitionRuns.pairs``: one by
        one without an object per entry) and left out of the subscription."""
        r = Reader(data)
        version = r.int16("version")
        if version < 0:
            raise WireError(f"unsupported ConsumerProtocolSubscription version {version}", 0)
        return _subscription_body(r, version, self._topics(r, data), self._names)

    def _topics(self, r: Reader, data: bytes) -> tuple[str, ...]:
        start = r.offset
        for size in self._lengths:
            found = self._lists.get(data[start : start + size])
            # a slice cut short by the data's end may equal a shorter kept list's bytes
            if found is not None and start + size <= len(data):
                r.offset = start + size
                return found
        topics = r.strings("topics", "topic", names=self._names)
        size = r.offset - start
        if len(self._lists) < self._KEPT and (
            size in self._lengths or len(self._lengths) < self._LENGTHS
        ):
            self._lists[data[start : r.offset]] = topics
            if size not in self._lengths:
                self._lengths.append(size)
        return topics


def _subscription_body(
    r: Reader, version: int, topics: tuple[str, ...], names: dict[bytes, str]
) -> tuple[ConsumerProtocolSubscription, TopicPartitionRuns]:
    """The fields after the topic list, read as Kafka reads them for ``version``; the owned
    partitions apart (``names``: topic names already decoded, ``Reader.topic_partition_runs``)."""
    body = min(version, LATEST_VERSION)
    user_data = r.bytes_("userData", nullable=True)
    owned = (
        r.topic_partition_runs("ownedPartitions", "ownedPartitions topic", names=names)
        if body >= 1
        else TopicPartitionRuns([], [], array("i"))
    )
    generation = r.int32("generationId") if body >= 2 else -1
    rack = r.string("rackId", nullable=True) if body >= 3 else None
    sub = ConsumerProtocolSubscription(
        version=version,
        topics=topics,
        user_data=user_data,
        generation_id=generation,
        rack_id=rack,
    )
    return sub, owned


def _write_owned(w: Writer, owned: OwnedTopicPartitions) -> None:
    w.string(owned.topic)
    w.int32s(owned.partitions)


def encode_consumer_subscription(sub: ConsumerProtocolSubscription) -> bytes:
    """The bytes Kafka writes; fields the version lacks are dropped, as Kafka drops them."""
    if not 0 <= sub.version < 2**15:
        raise ValueError(f"cannot encode ConsumerProtocolSubscription version {sub.version}")
    body = min(sub.version, LATEST_VERSION)
    w = Writer()
    w.int16(sub.version)
    w.array(sub.topics, Writer.string)
    w.bytes_(sub.user_data)
    if body >= 1:
        w.array(sub.owned_partitions, _write_owned)
    if body >= 2:
        w.int32(sub.generation_id)
    if body >= 3:
        w.string(sub.rack_id)
    return w.getvalue()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerProtocolAssignment:
    """The message as on the wire: what a leader sends one member in SyncGroup."""

    version: int = LATEST_VERSION
    assigned_partitions: tuple[OwnedTopicPartitions, ...] = ()
    user_data: bytes | None = None


def assignment_for(
    partitions: Iterable[tuple[str, int]], *, user_data: bytes | None = None
) -> ConsumerProtocolAssignment:
    """The assignment a Kafka leader writes for this partition list (at version 3).

    ``serializeAssignment`` groups partitions by topic, a topic's entry created where the topic
    first appears, its partitions kept in list order; this groups the same way.
    """
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    return ConsumerProtocolAssignment(
        assigned_partitions=tuple(OwnedTopicPartitions(t, tuple(ps)) for t, ps in grouped.items()),
        user_data=user_data,
    )


def encode_consumer_assignment(assignment: ConsumerProtocolAssignment) -> bytes:
    """The bytes Kafka writes: the int16 version header, then the struct."""
    if not 0 <= assignment.version < 2**15:
        raise ValueError(f"cannot encode ConsumerProtocolAssignment version {assignment.version}")
    w = Writer()
    w.int16(assignment.version)
    w.array(assignment.assigned_partitions, _write_owned)
    w.bytes_(assignment.user_data)
    return w.getvalue()


def decode_consumer_assignment(data: bytes) -> ConsumerProtocolAssignment:
    """Decode as Kafka does (any version >= 0 read with the one layout, trailing bytes ignored)."""
    r = Reader(data)
    version = r.int16("version")
    if version < 0:
        raise WireError(f"unsupported ConsumerProtocolAssignment version {version}", 0)
    assigned = _read_owned(r, "assignedPartitions")
    return ConsumerProtocolAssignment(
        version=version, assigned_partitions=assigned, user_data=r.bytes_("userData", nullable=True)
    )


class AssignmentEncoder:
    """``encode_consumer_assignment(assignment_for(partitions, user_data=...))`` for a whole
    group: the same bytes, written with a few calls per topic instead of a dataclass and a
    writer call per field. A group's members share their topics, so each topic name is encoded
    once per encoder, and each run length's ``struct`` compiled once. One encoder per response.

    A topic's run of partitions is its entry; a list in which a topic comes back after another
    (never a sorted one) takes the general path, which groups the entry where it first appears.
    A list with mostly one partition of each topic (``roundrobin``'s and ``range``'s answer
    when partitions per topic are about as many as members) is written without a Python step
    per entry: each partition's number after its topic's name and a count of one, the few
    longer runs' heads put right afterwards.
    """

    def __init__(self) -> None:
        self._names: dict[str, bytes] = {}
        self._singles: dict[str, bytes] = {}  # topic -> its name and a count of one
        self._runs: dict[int, Callable[..., bytes]] = {}  # run length -> its packer

    def encode(
        self, partitions: Sequence[tuple[str, int]], *, user_data: bytes | None = None
    ) -> bytes:
        topics = list(map(_TOPIC, partitions))
        body: bytes | None
        if (len(topics) < 2 or topics[0] != topics[1]) and len(set(topics)) == len(topics):
            body = self._mostly_single(topics, partitions, {}, len(topics))
        elif len(topics) < 2 * len(counts := Counter(topics)):
            longer = {t: n for t, n in counts.items() if n > 1}
            body = self._mostly_single(topics, partitions, longer, len(counts))
        else:
            runs = self._runs_of(partitions)
            body = None if runs is None else self._entries(runs)
        if body is None:
            return encode_consumer_assignment(assignment_for(partitions, user_data=user_data))
        tail = Writer()
        tail.bytes_(user_data)
        return b"".join((body, tail.getvalue()))

    def _mostly_single(
        self,
        topics: list[str],
        partitions: Sequence[tuple[str, int]],
        longer: dict[str, int],
        entries: int,
    ) -> bytes | None:
        """Each partition's bytes: its entry's head if it begins one, then its number
        (``longer``: the topics with more than one partition, and how many); ``None`` if one
        of those comes back after another topic."""
        singles = self._singles
        for topic in set(topics).difference(singles):
            singles[topic] = self._name(topic) + _ONE
        heads = list(map(singles.__getitem__, topics))
        for topic, n in longer.items():
            first = topics.index(topic)
            if topics[first : first + n].count(topic) < n:
                return None
            heads[first : first + n] = [self._name(topic) + _INT32(n), *[b""] * (n - 1)]
        written = map(operator.add, heads, map(_INT32, map(_PARTITION, partitions)))
        return _ASSIGNMENT_HEAD.pack(LATEST_VERSION, entries) + b"".join(written)

    @staticmethod
    def _runs_of(partitions: Sequence[tuple[str, int]]) -> list[tuple[str, list[int]]] | None:
        """Each topic's run of partitions, ``None`` if a topic comes back after another."""
        runs: list[tuple[str, list[int]]] = []
        last: str | None = None
        run: list[int] = []
        for topic, partition in partitions:
            if topic != last:
                run = []
                runs.append((topic, run))
                last = topic
            run.append(partition)
        return None if len({topic for topic, _ in runs}) < len(runs) else runs

    def _entries(self, runs: list[tuple[str, list[int]]]) -> bytes:
        chunks = [_ASSIGNMENT_HEAD.pack(LATEST_VERSION, len(runs))]
        append, packers = chunks.append, self._runs
        for topic, run in runs:
            append(self._names.get(topic) or self._name(topic))
            pack = packers.get(len(run))
            if pack is None:
                pack = packers[len(run)] = struct.Struct(f">i{len(run)}i").pack
            append(pack(len(run), *run))
        return b"".join(chunks)

    def _name(self, topic: str) -> bytes:
        found = self._names.get(topic)
        if found is None:
            w = Writer()
            w.string(topic)
            found = self._names[topic] = w.getvalue()
        return found
