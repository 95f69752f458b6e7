"""A group's partitions as numbers: an id per partition, member lists as arrays of ids.

At a million partitions an object per partition costs more than Kafka's whole ``assign``
(issue 24: building the ``TopicPartition``s alone took most of a fresh sticky assignment), so
the assignors that can work on numbers do: every partition of the topics being assigned gets
an id, its topic's offset (topics by name) plus its number. Ids ascend in (topic, partition)
order, Kafka's ``TopicPartitionComparator``, so sorting ids sorts partitions.

``PartitionList`` is a member's partitions kept as ids: a ``Sequence[TopicPartition]`` whose
objects are made only when someone reads them (a test, an explanation); the service's encoder
reads the ids (``AssignedColumns``) and never makes them.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import overload

import kassign_native
import numpy as np
import numpy.typing as npt
from kassign.assignor.claims import (
    OwnedPartitions,
    TopicPartition,
    claim_columns,
    per_entry,
    per_number,
)
from kassign.assignor.consumer.group_claims import GroupClaims
from kassign.assignor.consumer.model import RackSetIds, Topic

__all__ = [
    "AssignedColumns",
    "Ids",
    "PartitionList",
    "PartitionSpace",
    "concatenated",
    "replica_rack_sets",
]

Ids = npt.NDArray[np.int64]
RackSets = tuple[tuple[frozenset[str], ...], Ids]
_TOPIC, _PARTITION = operator.itemgetter(0), operator.itemgetter(1)
_NO_IDS: Ids = np.zeros(0, dtype=np.int64)
_CLAIM, _FOUND = _TOPIC, _PARTITION  # a read claim's entry: (the claim, its ids)
_UNREAD: tuple[object, Ids] = (None, _NO_IDS)


@dataclass(frozen=True, slots=True, eq=False)
class PartitionSpace:
    """The ids of the partitions being assigned: ``names`` sorted, topic ``i``'s partitions
    are ids ``offsets[i]`` to ``offsets[i + 1]`` (exclusive)."""

    names: tuple[str, ...]
    offsets: Ids
    index: Mapping[str, int]
    _claimed: dict[int, tuple[object, Ids]] = field(default_factory=dict, repr=False)
    _entries: dict[tuple[str, ...], Ids] = field(default_factory=dict, repr=False)
    _columns: dict[bool, tuple[list[object], Ids, list[int]]] = field(
        default_factory=dict, repr=False
    )
    _rack_sets: dict[int, tuple[object, RackSets]] = field(default_factory=dict, repr=False)

    @staticmethod
    def of(counts: Mapping[str, int]) -> PartitionSpace:
        """The space of ``counts`` (topic -> partitions), whatever their order."""
        names = tuple(sorted(counts))
        sizes = np.fromiter((counts[t] for t in names), dtype=np.int64, count=len(names))
        offsets = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return PartitionSpace(names, offsets, dict(zip(names, range(len(names)), strict=True)))

    @property
    def total(self) -> int:
        return int(self.offsets[-1])

    def topic_of(self, ids: Ids) -> Ids:
        """Each id's topic index."""
        topics: Ids = np.searchsorted(self.offsets, ids, side="right") - 1
        return topics

    def id_of(self, tp: TopicPartition) -> int:
        return int(self.offsets[self.index[tp.topic]]) + tp.partition

    def ids(self, partitions: Sequence[TopicPartition]) -> Ids:
        """The ids of ``partitions``, all of topics in the space (``claimed`` drops others)."""
        return self.claimed(partitions, within=False)

    def claimed(self, partitions: Sequence[TopicPartition], *, within: bool = True) -> Ids:
        """The ids of those of ``partitions`` on the space's topics, in their order; compact
        claims (``OwnedPartitions``) and ``PartitionList``s are read as numbers. A member's
        claims are read several times in one assignment: kept by object, for the space's
        life (one call)."""
        if isinstance(partitions, PartitionList) and partitions.space is self:
            return partitions.ids
        if self._read(partitions):
            return self._claimed[id(partitions)][1]
        if isinstance(partitions, OwnedPartitions):
            found = self._owned_ids(partitions)
        else:
            listed = partitions
            if within and not set(map(_TOPIC, partitions)).issubset(self.index):
                listed = [tp for tp in partitions if tp.topic in self.index]
            n = len(listed)
            topics = np.fromiter(
                map(self.index.__getitem__, map(_TOPIC, listed)), dtype=np.int64, count=n
            )
            numbers = np.fromiter(map(_PARTITION, listed), dtype=np.int64, count=n)
            found = self.offsets[topics] + numbers
        self._claimed[id(partitions)] = (partitions, found)
        return found

    def claimed_all(
        self, claims: Sequence[Sequence[TopicPartition]], *, within: bool = True
    ) -> list[Ids]:
        """``claimed`` of each of ``claims``, compact ones not yet read taken as one batch:
        a few numpy steps for the whole group rather than a few per member (issue 24: a
        rejoining group of 2,000 members spent more on those steps than on assigning); a group
        read before (the assignors read it two or three times) is looked up at once."""
        known = [self._claimed.get(id(c), _UNREAD) for c in claims]
        if all(map(operator.is_, map(_CLAIM, known), claims)):
            return list(map(_FOUND, known))
        compact = [c for c in claims if isinstance(c, OwnedPartitions) and not self._read(c)]
        if len(compact) > 1:
            for owned, found in zip(compact, self._owned_ids_of(compact), strict=True):
                self._claimed[id(owned)] = (owned, found)
        return [self.claimed(c, within=within) for c in claims]

    def claimed_column(
        self, claims: Sequence[Sequence[TopicPartition]], *, within: bool = True
    ) -> tuple[Ids, list[int]]:
        """``claimed_all`` of ``claims`` end to end, and each one's size: a group of compact
        claims none read yet is read as one column (no ``claimed`` step per member); the last
        group's column is kept (the assignors read one group two or three times a call)."""
        last = self._columns.get(within)
        if (
            last is not None
            and len(last[0]) == len(claims)
            and all(map(operator.is_, last[0], claims))
        ):
            return last[1], last[2]
        fresh = not any(map(self._claimed.__contains__, map(id, claims)))
        found = None if fresh and not self._columns else self._reordered(claims, within)
        if found is not None:
            column, sizes = found
        elif fresh and len(claims) > 1 and all(isinstance(c, OwnedPartitions) for c in claims):
            column, sizes = self._owned_column(claims)  # type: ignore[arg-type]
            ends = np.cumsum(sizes).tolist()  # each claim's slice kept, as claimed_all keeps it
            cut = [column[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
            self._claimed.update(zip(map(id, claims), zip(claims, cut, strict=True)))
        else:
            lists = self.claimed_all(claims, within=within)
            column, sizes = concatenated(lists), list(map(len, lists))
        column.flags.writeable = False  # shared by the call's readers
        self._columns[within] = (list(claims), column, sizes)
        return column, sizes

    def adopt(self, group: GroupClaims) -> None:
        """``group``'s claims as read, their ids taken from the reader's columns in one pass
        (``claimed_column`` then gathers them in any order, or a part of them, from there)."""
        column, sizes = self._column_of(
            self._topic_indexes(group.names)[group.topic], group.numbers, group.sizes
        )
        column.flags.writeable = False
        self._columns[True] = (list(group.claims), column, sizes)

    def _reordered(
        self, claims: Sequence[Sequence[TopicPartition]], within: bool
    ) -> tuple[Ids, list[int]] | None:
        """``claims``' column gathered from a kept one holding each of them (the same group
        in another order: step 1 reads it in hash order, the answer's counts in the group's),
        with no ``claimed`` step per member; ``None`` when no kept column does. Compact claims
        read the same either ``within``; others only from a column read alike."""
        compact = all(isinstance(c, OwnedPartitions) for c in claims)
        for read, (kept, column, sizes) in self._columns.items():
            if read != within and not compact:
                continue
            place = {id(c): i for i, c in enumerate(kept)}  # kept holds them: ids stay theirs
            order = [place.get(id(c), -1) for c in claims]
            if -1 in order:
                continue
            picked = np.asarray(order, dtype=np.int64)
            had = np.asarray(sizes, dtype=np.int64)
            starts = np.cumsum(had) - had
            size = had[picked]
            shift = starts[picked] - (np.cumsum(size) - size)
            found: Ids = column[np.repeat(shift, size) + np.arange(int(size.sum()))]
            return found, size.tolist()
        return None

    def _read(self, partitions: Sequence[TopicPartition]) -> bool:
        known = self._claimed.get(id(partitions))
        return known is not None and known[0] is partitions

    def _owned_ids_of(self, claims: Sequence[OwnedPartitions]) -> list[Ids]:
        """``_owned_ids`` of each of ``claims``, read end to end at once."""
        found, sizes = self._owned_column(claims)
        ends = np.cumsum(sizes).tolist()  # slices, not np.split's Python steps per piece
        return [found[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]

    def _owned_column(self, claims: Sequence[OwnedPartitions]) -> tuple[Ids, list[int]]:
        """``_owned_ids`` of ``claims`` end to end, and each one's size."""
        topics = per_entry(claims, self._topic_indexes) if claims else _NO_IDS
        counts, numbers = claim_columns(claims)
        return self._column_of(per_number(topics, counts, len(numbers)), numbers, map(len, claims))

    def _column_of(
        self, topics: Ids, numbers: npt.NDArray[np.intc], sizes: Iterable[int]
    ) -> tuple[Ids, list[int]]:
        """The ids of ``numbers`` (each of the space's topic ``topics[k]``; -1: another
        topic's, dropped), claim by claim (``sizes``), and each claim's count of ids."""
        found: Ids = self.offsets[topics] + numbers
        if topics.min(initial=0) >= 0:
            return found, list(sizes)
        held = np.fromiter(sizes, np.int64)
        kept = topics >= 0
        owner = np.repeat(np.arange(len(held), dtype=np.int64), held)
        return found[kept], np.bincount(owner[kept], minlength=len(held)).tolist()

    def _topic_indexes(self, topics: tuple[str, ...]) -> Ids:
        """Each of ``topics``' index in the space, -1 for others (kept per tuple)."""
        found = self._entries.get(topics)
        if found is None:
            found = self._entries[topics] = np.fromiter(
                map(self.index.get, topics, repeat(-1)), dtype=np.int64, count=len(topics)
            )
        return found

    def _owned_ids(self, owned: OwnedPartitions) -> Ids:
        """Compact claims as ids, entries of other topics dropped."""
        return self._owned_ids_of([owned])[0]

    def objects(self, ids: Ids) -> list[TopicPartition]:
        """``TopicPartition``s of ``ids``, one each."""
        topics = self.topic_of(ids)
        numbers = (ids - self.offsets[topics]).tolist()
        named = map(self.names.__getitem__, topics.tolist())
        return list(map(tuple.__new__, repeat(TopicPartition), zip(named, numbers, strict=True)))

    def partitions(self, ids: Ids) -> PartitionList:
        return PartitionList(self, ids)


class PartitionList(Sequence[TopicPartition]):
    """A member's partitions as ids of a ``PartitionSpace``, in the order given; equal to any
    sequence of the same partitions in the same order. Objects are made once, when read."""

    __slots__ = ("_objects", "ids", "space")

    def __init__(self, space: PartitionSpace, ids: Ids) -> None:
        self.space = space
        self.ids = ids
        self._objects: list[TopicPartition] | None = None

    def _listed(self) -> list[TopicPartition]:
        if self._objects is None:
            self._objects = self.space.objects(self.ids)
        return self._objects

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[TopicPartition]:
        return iter(self._listed())

    def __contains__(self, item: object) -> bool:
        return item in self._listed()

    @overload
    def __getitem__(self, index: int) -> TopicPartition: ...

    @overload
    def __getitem__(self, index: slice) -> list[TopicPartition]: ...

    def __getitem__(self, index: int | slice) -> TopicPartition | list[TopicPartition]:
        return self._listed()[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        if isinstance(other, PartitionList) and other.space is self.space:
            return bool(np.array_equal(self.ids, other.ids))
        return len(self) == len(other) and all(map(operator.eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PartitionList({self._listed()!r})"


@dataclass(frozen=True, slots=True, eq=False)
class AssignedColumns:
    """Every member's sorted partitions end to end, members in the answer's order: member
    ``i``'s are ``ids[ends[i - 1]:ends[i]]`` (from 0 for the first)."""

    space: PartitionSpace
    ids: Ids
    ends: Ids

    @staticmethod
    def of(space: PartitionSpace, lists: Sequence[Ids]) -> AssignedColumns:
        sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        every = np.concatenate([_NO_IDS, *lists])
        return AssignedColumns(space, every, np.cumsum(sizes))

    def owner(self) -> Ids:
        """Each id's place in the member list."""
        sizes = np.diff(self.ends, prepend=0)
        owners: Ids = np.repeat(np.arange(len(self.ends), dtype=np.int64), sizes)
        return owners

    def member(self, i: int) -> Ids:
        start = int(self.ends[i - 1]) if i else 0
        return self.ids[start : int(self.ends[i])]


def concatenated(chunks: Sequence[Ids | Sequence[int]]) -> Ids:
    """Chunks of ids (arrays, or lists of single ids) as one array, in order."""
    if not chunks:
        return _NO_IDS
    joined = np.concatenate(chunks)  # arrays of ids mostly: no step per chunk
    if joined.dtype == np.int64:
        return joined
    return np.concatenate([np.asarray(c, dtype=np.int64) for c in chunks])


def replica_rack_sets(topics: Mapping[str, Topic], space: PartitionSpace) -> RackSets:
    """The distinct replica rack sets of the space's partitions (a few serve them all), and
    each id's index among them, in order of first appearance; from the topics' numbers when
    each has them (``RackSetIds``, over one ``sets``), else from their ``frozenset``s. Kept
    by the space for ``topics`` (one call: rack mode and the report's counts both read it)."""
    known = space._rack_sets.get(id(topics))
    if known is not None and known[0] is topics:
        return known[1]
    found = _numbered_rack_sets([topics[t].rack_set_ids for t in space.names])
    if found is None:
        found = _first_seen_rack_sets([topics[t].partition_racks for t in space.names])
    space._rack_sets[id(topics)] = (topics, found)
    return found


def _first_seen_rack_sets(layouts: list[tuple[frozenset[str], ...]]) -> RackSets:
    """``replica_rack_sets`` from each topic's ``partition_racks``, numbered by the compiled
    core (``kassign_native.first_seen``: a dict's hash and equality per partition, without a
    Python step each; 75 ns a partition as a ``dict.setdefault`` map)."""
    sets, numbers = kassign_native.first_seen(layouts)
    found: Ids = np.frombuffer(numbers, dtype=np.int64)
    return tuple(sets), found


def _numbered_rack_sets(given: Sequence[RackSetIds | None]) -> RackSets | None:
    """``replica_rack_sets`` from the topics' ``RackSetIds`` (``None`` unless every topic has
    them, over one ``sets``): the sets renumbered in order of first appearance, with no step
    per partition."""
    head = given[0] if given else None
    if head is None:
        return None
    sets = head.sets
    if any(g is None or g.sets is not sets for g in given):
        return None
    ids = np.concatenate([g.ids for g in given if g is not None])
    first = np.full(len(sets), len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=np.int64))
    used = np.flatnonzero(first < len(ids))
    order = used[np.argsort(first[used], kind="stable")]
    row = np.zeros(len(sets), dtype=np.int64)
    row[order] = np.arange(len(order), dtype=np.int64)
    found: Ids = row[ids]
    return tuple(sets[i] for i in order.tolist()), found
