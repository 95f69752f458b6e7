"""One-loop reads of Kafka's long arrays: strings, and {topic, partitions} entries as runs.

A consumer group's subscriptions hold tens of thousands of topic names and owned partitions, so
these read an array without a call per element, each distinct name decoded once. They check as
they go and give ``None`` where any check fails; ``Reader`` (``buffer.py``) then reads the array
element by element from the same offset and raises its usual ``WireError``, so answers and errors
are the same either way.
"""

from __future__ import annotations

import functools
import struct
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice, repeat
from typing import Any, NamedTuple, TypeVar, cast

__all__ = [
    "EntryColumns",
    "TopicPartitionRuns",
    "count_at",
    "int32_array",
    "runs_at",
    "runs_of_columns",
    "strings_at",
]

_Made = TypeVar("_Made")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_COMPILED_ENTRIES = 2048
"""Arrays up to this many entries may be read by one compiled ``struct`` (kept, a few dozen)."""


@functools.lru_cache(maxsize=128)
def _int32s_unpacker(n: int) -> Callable[[bytes, int], tuple[int, ...]]:
    """A compiled ``>{n}i`` reader: owned and userData entries hold short partition lists of
    a few lengths, read tens of thousands of times per group."""
    unpack: Callable[[bytes, int], tuple[int, ...]] = struct.Struct(f">{n}i").unpack_from
    return unpack


def _names(raws: Sequence[bytes], names: dict[bytes, str], lenient: bool) -> list[str] | None:
    """Each of ``raws`` decoded as ``_decoded_name`` does, known ones looked up at once."""
    found = list(map(names.get, raws))
    for i in [i for i, value in enumerate(found) if value is None]:
        if (value := _decoded_name(raws[i], names, lenient)) is None:
            return None
        found[i] = value
    return cast(list[str], found)


def _name_at(
    data: bytes, at: int, names: dict[bytes, str], lenient: bool
) -> tuple[str, int] | None:
    """The string at ``at`` (an int16 length, then UTF-8) and the offset after it, its name
    looked up in ``names`` first (``_decoded_name``); ``None`` where it does not fit."""
    if at + 2 > len(data):
        return None
    (size,) = _I16.unpack_from(data, at)
    at += 2
    if size < 0 or at + size > len(data):
        return None
    raw = data[at : at + size]
    name = names.get(raw)
    if name is None and (name := _decoded_name(raw, names, lenient)) is None:
        return None
    return name, at + size


def _decoded_name(raw: bytes, names: dict[bytes, str], lenient: bool) -> str | None:
    """``raw`` as UTF-8, kept in ``names`` when valid; invalid bytes are ``None``, or with
    ``lenient`` decoded with U+FFFD and not kept (a strict read sharing ``names`` must fail)."""
    try:
        topic = names[raw] = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace") if lenient else None
    return topic


@functools.lru_cache(maxsize=128)
def _single_entry_unpacker(size: int) -> Callable[[bytes, int], tuple[Any, ...]]:
    """A compiled reader of a {topic, partitions} entry whose name has ``size`` bytes and
    which holds one partition: name length, name, count, partition."""
    unpack: Callable[[bytes, int], tuple[Any, ...]] = struct.Struct(f">h{size}sii").unpack_from
    return unpack


@functools.lru_cache(maxsize=64)
def _same_length_unpacker(count: int, size: int) -> Callable[[bytes, int], tuple[Any, ...]]:
    """A compiled reader of ``count`` strings of ``size`` bytes each: length, bytes, ..."""
    unpack: Callable[[bytes, int], tuple[Any, ...]] = struct.Struct(
        ">" + f"h{size}s" * count
    ).unpack_from
    return unpack


@functools.lru_cache(maxsize=64)
def _single_partition_entries_unpacker(
    count: int, size: int
) -> Callable[[bytes, int], tuple[Any, ...]]:
    """A compiled reader of ``count`` {topic, partitions} entries, each a name of ``size``
    bytes and one partition: name length, name, count, partition, ..."""
    unpack: Callable[[bytes, int], tuple[Any, ...]] = struct.Struct(
        ">" + f"h{size}sii" * count
    ).unpack_from
    return unpack


def int32_array(data: bytes, at: int, count: int) -> array[int]:
    """``count`` big-endian int32s at ``at`` as an ``array('i')``: 4 bytes a number, no object
    per number (a member may own millions of partitions)."""
    numbers = array("i", data[at : at + 4 * count])
    if sys.byteorder == "little":
        numbers.byteswap()
    return numbers


class TopicPartitionRuns(NamedTuple):
    """An array of {topic, partitions} as read: per entry its topic and its partition count,
    and all entries' partitions end to end, 4 bytes each (``array('i')``)."""

    topics: Sequence[str]
    counts: Sequence[int]
    numbers: array[int]

    def entries(self) -> Iterator[tuple[str, array[int]]]:
        """The entries: (topic, its partitions as a slice of ``numbers``)."""
        at = 0
        for topic, count in zip(self.topics, self.counts):
            yield topic, self.numbers[at : at + count]
            at += count

    def groups(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The entries: (topic, partitions)."""
        it = iter(self.numbers)
        return tuple(zip(self.topics, [tuple(islice(it, n)) for n in self.counts]))

    def pairs(self) -> Iterator[tuple[str, int]]:
        """(topic, partition) for each partition in order, without a Python step per one."""
        if self.counts.count(1) == len(self.counts):  # an entry per partition
            return zip(self.topics, self.numbers)
        return zip(chain.from_iterable(map(repeat, self.topics, self.counts)), self.numbers)


def _column(raw: bytes, code: str) -> array[int]:
    """A native-endian column (the compiled core's) as an ``array``: no object per number."""
    column = array(code)
    column.frombytes(raw)
    return column


class EntryColumns(NamedTuple):
    """A group's entries as the compiled core reads them: per member the end of its entries and
    of its numbers; per entry its name's index in ``names`` and its count (int64); the numbers
    (int32); native order. Kept whole for callers that work on the group at once."""

    names: Sequence[str]
    entry_ends: bytes
    number_ends: bytes
    topic_raw: bytes
    counts_raw: bytes
    numbers_raw: bytes


def runs_of_columns(
    names: Sequence[str],
    entry_ends: bytes,
    number_ends: bytes,
    topic_raw: bytes,
    counts_raw: bytes,
    numbers_raw: bytes,
    *,
    make: Callable[[tuple[str, ...], array[int], array[int]], _Made],
) -> list[_Made]:
    """A group's entries read into columns by the compiled core (per member the end of its
    entries and of its numbers; per entry its name's index and count, int64; the numbers,
    int32; native order) cut back into each member's runs. Members mostly name one topic list,
    so equal lists share one tuple (the library then checks and compares it once). ``make``
    builds each member's value of (topics, counts, numbers): ``TopicPartitionRuns``, or the
    caller's own object at once (no runs in between: issue 24)."""
    topic_of = _column(topic_raw, "q")
    counts, numbers = _column(counts_raw, "q"), _column(numbers_raw, "i")
    shared: dict[bytes, tuple[str, ...]] = {}
    out: list[_Made] = []
    entry = number = 0
    for end, number_end in zip(_column(entry_ends, "q"), _column(number_ends, "q"), strict=True):
        key = topic_raw[8 * entry : 8 * end]
        topics = shared.get(key)
        if topics is None:
            topics = shared[key] = tuple(map(names.__getitem__, topic_of[entry:end]))
        out.append(make(topics, counts[entry:end], numbers[number:number_end]))
        entry, number = end, number_end
    return out


def count_at(data: bytes, at: int, min_size: int) -> int | None:
    """An array's count at ``at``, or ``None`` where it is null, negative or cannot fit."""
    if at + 4 > len(data):
        return None
    (count,) = _I32.unpack_from(data, at)
    return None if count < 0 or count * min_size > len(data) - at - 4 else count


def strings_at(data: bytes, at: int, names: dict[bytes, str]) -> tuple[tuple[str, ...], int] | None:
    """An array of strict strings in one loop, each distinct one decoded once; ``None``
    where any check fails (the caller then reads element by element)."""
    count = count_at(data, at, 2)
    if count is None:
        return None
    at += 4
    same = _same_length_strings_at(data, at, count, names)
    if same is not None:
        return same
    values = []
    for _ in range(count):
        read = _name_at(data, at, names, False)
        if read is None:
            return None
        value, at = read
        values.append(value)
    return tuple(values), at


def _same_length_strings_at(
    data: bytes, at: int, count: int, names: dict[bytes, str]
) -> tuple[tuple[str, ...], int] | None:
    """The array read in one ``unpack_from`` when every string has the first's length (a
    group's topic names mostly do); ``None`` when they do not, or one is not UTF-8."""
    if not 0 < count <= _COMPILED_ENTRIES or at + 2 > len(data):
        return None
    (size,) = _I16.unpack_from(data, at)
    if size < 0 or at + count * (2 + size) > len(data):
        return None
    read = _same_length_unpacker(count, size)(data, at)
    if read[::2].count(size) != count:  # every length the first's
        return None
    values = _names(read[1::2], names, False)
    return None if values is None else (tuple(values), at + count * (2 + size))


def _single_partition_runs_at(
    data: bytes, at: int, count: int, lenient: bool, names: dict[bytes, str]
) -> tuple[TopicPartitionRuns, int] | None:
    """The array read in one ``unpack_from`` when every entry holds one partition and a
    name of the first's length (a member's share of a group whose topics have about as
    many partitions as it has members); ``None`` otherwise."""
    if not 0 < count <= _COMPILED_ENTRIES or at + 2 > len(data):
        return None
    (size,) = _I16.unpack_from(data, at)
    if size < 0 or at + count * (10 + size) > len(data):
        return None
    read = _single_partition_entries_unpacker(count, size)(data, at)
    if read[::4].count(size) != count or read[2::4].count(1) != count:
        return None
    topics = _names(read[1::4], names, lenient)
    if topics is None:
        return None
    runs = TopicPartitionRuns(topics, [1] * count, array("i", read[3::4]))
    return runs, at + count * (10 + size)


def runs_at(
    data: bytes, at: int, lenient: bool, names: dict[bytes, str]
) -> tuple[TopicPartitionRuns, int] | None:
    """An array of {string, int32s} in one loop without a call per element (a group's
    owned partitions hold an entry per topic for every member); each distinct topic name
    is decoded once (``names``: strictly valid names only, so the lenient and strict reads
    may share it). An entry of one partition whose name has the length of the entry before
    is read in one ``unpack_from``. ``None`` where any check fails, as ``strings_at``."""
    count = count_at(data, at, 6)
    if count is None:
        return None
    end, at = len(data), at + 4
    uniform = _single_partition_runs_at(data, at, count, lenient, names)
    if uniform is not None:
        return uniform
    topics: list[str] = []
    counts: list[int] = []
    numbers: array[int] = array("i")
    guess, single = -1, _single_entry_unpacker(0)
    for _ in range(count):
        if 0 <= guess and at + 10 + guess <= end:
            size, raw, n, first = single(data, at)
            if size == guess and n == 1:
                topic = names.get(raw)
                if topic is None and (topic := _decoded_name(raw, names, lenient)) is None:
                    return None
                topics.append(topic)
                counts.append(1)
                numbers.append(first)
                at += 10 + size
                continue
        read = _name_at(data, at, names, lenient)
        if read is None:
            return None
        topic, after = read
        size, at = after - at - 2, after
        if at + 4 > end:
            return None
        (n,) = _I32.unpack_from(data, at)
        if n < 0 or n * 4 > end - at - 4:
            return None
        topics.append(topic)
        counts.append(n)
        if n > _COMPILED_ENTRIES:
            numbers.extend(int32_array(data, at + 4, n))
        else:
            numbers.extend(_int32s_unpacker(n)(data, at + 4))
        at += 4 + 4 * n
        if size != guess:
            guess, single = size, _single_entry_unpacker(size)
    return TopicPartitionRuns(topics, counts, numbers), at
