"""Partitions a member claims: ``TopicPartition``, and ``OwnedPartitions``, claims kept compact.

Shared by both rooms' decoders and the consumer assignors. A member's owned partitions arrive
as {topic, partitions} entries and may run to millions (issue 16: 4 million took 2.7 GB as one
object each), so they are kept per entry, the numbers in one ``array('i')``, and compared and
checked topic by topic as numbers (numpy); objects are made only for partitions an assignor
works with. Importing this loads no solver (tests/test_layering.py).
"""

from __future__ import annotations

import operator
from array import array
from bisect import bisect_right
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Sequence
from itertools import accumulate, chain, repeat
from typing import NamedTuple, overload

import numpy as np
from kassign.assignor.shared_objects import distinct_objects

__all__ = [
    "OwnedPartitions",
    "TopicPartition",
    "all_within",
    "any_claimed",
    "as_topic_partitions",
    "claim_columns",
    "claims_on",
    "distinct_claims",
    "none_repeated",
    "per_entry",
    "per_number",
    "shared_claims",
    "topic_partitions",
]


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
    partitions: Collection[TopicPartition],
    topics: Container[str],
    seen: dict[object, bool] | None = None,
) -> Collection[TopicPartition]:
    """``partitions`` as they are, or, when compact (``OwnedPartitions``), only those on
    ``topics``: for counts and comparisons with assigned partitions, which claims of other
    topics never meet, without an object per such claim (``seen``: as ``of_topics``)."""
    if isinstance(partitions, OwnedPartitions):
        return partitions.of_topics(topics, seen)
    return partitions


def any_claimed(claims: Iterable[Collection[TopicPartition]]) -> bool:
    """Whether any of ``claims`` holds a partition, each distinct object asked once: a fresh
    group's members share one empty claims object (the decoder's), so a thousand members cost
    one ``len``, not a Python ``__len__`` each (issue 24)."""
    return any(map(len, distinct_objects(claims)))


def claim_columns(claims: Sequence[OwnedPartitions]) -> tuple[np.ndarray, np.ndarray]:
    """Every claim's entry counts (int64) and numbers (int32) end to end: one copy of their
    bytes (``bytes.join`` reads each ``array`` as a buffer), not a numpy array per claim
    (issue 24: a rejoining group of 800 members spent 0.4 ms a column on those)."""
    counts = np.frombuffer(b"".join([c.counts for c in claims]), dtype=np.int64)
    numbers = np.frombuffer(b"".join([c.numbers for c in claims]), dtype=np.intc)
    return counts, numbers


def per_entry(
    claims: Sequence[OwnedPartitions], of_topics: Callable[[tuple[str, ...]], np.ndarray]
) -> np.ndarray:
    """Each entry's value, the claims end to end: ``of_topics`` of a claim's topic tuple gives
    its entries' (called once per distinct tuple value, in claim order); one list of topics
    for every claim (a group's members mostly name one, as one tuple from the wire, as equal
    ones when a caller built each member's) is tiled, not joined claim by claim."""
    per_list: dict[int, np.ndarray] = {}
    per_value: dict[tuple[str, ...], np.ndarray] = {}
    for owned in claims:
        if id(owned.topics) not in per_list:
            found = per_value.get(owned.topics)
            if found is None:
                found = per_value[owned.topics] = of_topics(owned.topics)
            per_list[id(owned.topics)] = found
    if len(per_value) == 1:
        return np.tile(next(iter(per_value.values())), len(claims))
    return np.concatenate([np.zeros(0, np.int64), *(per_list[id(c.topics)] for c in claims)])


def per_number(values: np.ndarray, counts: np.ndarray, numbers: int) -> np.ndarray:
    """Each entry's value repeated by its count (``numbers`` in all): the values as they are
    when every entry holds one number (a rejoining eager member's, topic by topic)."""
    if len(counts) == numbers and (not numbers or int(counts.max()) == 1):
        return values
    return np.repeat(values, counts)


def _keys(claims: Sequence[OwnedPartitions]) -> tuple[np.ndarray, list[str]]:
    """Every claimed partition as one int64, its topic's index (in the returned list of
    topics) in the high half and its number in the low, claim by claim."""
    index: dict[str, int] = {}
    held = [owned for owned in claims if owned.numbers]
    if not held:
        return np.zeros(0, np.int64), list(index)

    def indexes(topics: tuple[str, ...]) -> np.ndarray:
        return np.fromiter(map(index.setdefault, topics, map(len, repeat(index))), np.int64)

    counts, numbers = claim_columns(held)
    topic_of = per_number(per_entry(held, indexes), counts, len(numbers))
    return (topic_of << 32) | numbers.view(np.uint32), list(index)


def distinct_claims(claims: Sequence[Collection[TopicPartition]]) -> bool:
    """Whether no partition is claimed twice over all ``claims``; compact ones (all
    ``OwnedPartitions``) are compared as numbers, without an object each."""
    if not all(isinstance(c, OwnedPartitions) for c in claims):
        return len(set().union(*claims)) == sum(map(len, claims))
    if len(claims) == 1 and claims[0].ascending():  # type: ignore[attr-defined]
        return True
    keys = _keys(claims)[0]  # type: ignore[arg-type]
    counted = none_repeated(keys >> 32, keys & 0xFFFFFFFF)
    if counted is not None:
        return counted
    keys = np.sort(keys)
    return not np.any(keys[1:] == keys[:-1])


def none_repeated(topic: np.ndarray, number: np.ndarray) -> bool | None:
    """Whether no (topic, number) pair repeats (both non-negative), counted in a table of
    every pair when it is small (a few times the pairs), no sort; ``None`` when it is not."""
    if not len(number):
        return True
    span = int(number.max()) + 1
    if span * (int(topic.max()) + 1) > 4 * len(number) + 4096:
        return None
    return int(np.bincount(topic * span + number).max()) <= 1


def shared_claims(claims: Sequence[OwnedPartitions]) -> dict[str, set[int]]:
    """Per topic, the partitions more than one of ``claims`` holds (each distinct within
    itself), found as numbers, without an object per partition."""
    keys, topics = _keys(claims)
    keys = np.sort(keys)
    repeats = keys[1:][keys[1:] == keys[:-1]]
    shared: dict[str, set[int]] = {}
    if not len(repeats):  # the usual group: np.unique's fixed cost is most of a small call's step
        return shared
    for key in np.unique(repeats).tolist():
        shared.setdefault(topics[key >> 32], set()).add(_signed(key & 0xFFFFFFFF))
    return shared


def all_within(
    names: tuple[str, ...], topics: Container[str], seen: dict[object, bool] | None
) -> bool:
    """Whether every one of ``names`` is in ``topics``; ``seen``: answers by topic tuple (its
    id, then its value: equal tuples a caller built per member), kept by a caller asking a
    group's members about one container (members mostly name one list: a thousand scans of
    it per call otherwise). The caller holds the tuples meanwhile, so no id is reused."""
    if seen is None:
        return all(map(topics.__contains__, names))
    within = seen.get(id(names))
    if within is None:
        within = seen.get(names)
        if within is None:
            within = seen[names] = all(map(topics.__contains__, names))
        seen[id(names)] = within
    return within


def _signed(value: int) -> int:
    return value - 2**32 if value >= 2**31 else value


def as_topic_partitions(pairs: Iterable[tuple[str, int]]) -> tuple[TopicPartition, ...]:
    """(topic, partition) pairs as ``TopicPartition``s, without a Python step per partition
    (``tuple.__new__`` over the pairs: the values the constructor gives). A group's owned
    partitions run to tens of thousands."""
    return tuple(map(tuple.__new__, repeat(TopicPartition), pairs))


def topic_partitions(topic: str, partitions: Iterable[int]) -> list[TopicPartition]:
    """``TopicPartition(topic, p)`` for each ``p``, as ``as_topic_partitions`` builds them."""
    return list(map(tuple.__new__, repeat(TopicPartition), zip(repeat(topic), partitions)))


class OwnedPartitions(Sequence[TopicPartition]):
    """Claimed partitions in claim order, kept as the wire's {topic, partitions} entries: each
    entry's topic and partition count, and all entries' numbers end to end in one
    ``array('i')``: 4 bytes a partition and 16 an entry, where a ``TopicPartition`` takes
    about 70 (issue 16: 4 million owned partitions took 2.7 GB as objects). Iterating builds
    each ``TopicPartition`` once, kept for the next walk (the assignors compare a member's
    claims several times: one object per claim, as a tuple of them had); equal to any sequence
    of the same partitions. Claims no assignor walks (topics outside the metadata) stay numbers.
    """

    __slots__ = ("_ends_cache", "_objects", "_within", "counts", "numbers", "topics")

    def __init__(self, runs: Iterable[tuple[str, Iterable[int]]] = ()) -> None:
        topics: list[str] = []
        counts: array[int] = array("q")
        numbers: array[int] = array("i")
        for topic, partitions in runs:
            before = len(numbers)
            numbers.extend(partitions)
            topics.append(topic)
            counts.append(len(numbers) - before)
        self._set(topics, counts, numbers)

    @classmethod
    def of_entries(
        cls, topics: Sequence[str], counts: Iterable[int], numbers: array[int]
    ) -> OwnedPartitions:
        """From a reader's entries (``TopicPartitionRuns``): topics and counts per entry, the
        numbers end to end; ``numbers`` is kept, not copied, and so are ``counts`` when an
        ``array('q')`` and ``topics`` when a tuple."""
        owned = cls.__new__(cls)
        kept = isinstance(counts, array) and counts.typecode == "q"
        owned._set(topics, counts if kept else array("q", counts), numbers)  # type: ignore[arg-type]
        return owned

    def _set(self, topics: Sequence[str], counts: array[int], numbers: array[int]) -> None:
        self.topics = tuple(topics)  # a tuple given is kept: members' equal lists stay one object
        self.counts = counts
        self.numbers = numbers
        self._ends_cache: array[int] | None = None
        self._objects: tuple[TopicPartition, ...] | None = None
        self._within: tuple[Container[str], OwnedPartitions] | None = None

    @property
    def _ends(self) -> array[int]:
        """Each entry's end in ``numbers``, made when first read (most claims never are)."""
        if self._ends_cache is None:
            self._ends_cache = array("q", accumulate(self.counts))
        return self._ends_cache

    @staticmethod
    def sorted_from(partitions: Iterable[tuple[str, int]]) -> OwnedPartitions:
        """``partitions`` sorted, one entry per topic (as Kafka's leader reads them)."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        return OwnedPartitions((t, sorted(by_topic[t])) for t in sorted(by_topic))

    @property
    def runs(self) -> Iterator[tuple[str, array[int]]]:
        """The entries: each topic and its partition numbers, in claim order."""
        at = 0
        for topic, end in zip(self.topics, self._ends):
            yield topic, self.numbers[at:end]
            at = end

    def ascending(self) -> bool:
        """Each topic in one entry, its numbers ascending (so none twice): how Kafka's
        ``serializeSubscription`` writes them; checked without sorting."""
        if len(set(self.topics)) < len(self.topics):
            return False
        numbers = np.frombuffer(self.numbers, dtype=np.intc)
        rising = numbers[1:] > numbers[:-1]
        starts = np.frombuffer(self._ends, dtype=np.int64)[:-1]
        rising[starts[(starts > 0) & (starts < len(numbers))] - 1] = True  # entry boundaries
        return bool(rising.all())

    def of_topics(
        self, topics: Container[str], seen: dict[object, bool] | None = None
    ) -> OwnedPartitions:
        """The claims on ``topics`` only, dropped entry by entry (the last answer kept: one
        group's metadata is asked for again and again). ``seen``: a caller's answers for the
        members' topic tuples, whether all are in ``topics`` (one dict per loop over a group)."""
        if self._within is not None and self._within[0] is topics:
            return self._within[1]
        within = self
        if not all_within(self.topics, topics, seen):
            within = OwnedPartitions(run for run in self.runs if run[0] in topics)
        self._within = (topics, within)
        return within

    def __len__(self) -> int:
        return len(self.numbers)

    def __iter__(self) -> Iterator[TopicPartition]:
        if self._objects is None:
            topic_of = chain.from_iterable(map(repeat, self.topics, self.counts))
            pairs = zip(topic_of, self.numbers)
            self._objects = tuple(map(tuple.__new__, repeat(TopicPartition), pairs))
        return iter(self._objects)

    @overload
    def __getitem__(self, index: int) -> TopicPartition: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TopicPartition, ...]: ...

    def __getitem__(self, index: int | slice) -> TopicPartition | tuple[TopicPartition, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        number = self.numbers[index]  # IndexError as a sequence raises it
        at = index + len(self) if index < 0 else index
        return TopicPartition(self.topics[bisect_right(self._ends, at)], number)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"OwnedPartitions({[(t, list(numbers)) for t, numbers in self.runs]!r})"
