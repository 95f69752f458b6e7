"""Bounds-checked big-endian reading and writing of Kafka's non-flexible message primitives.

Every read checks the bytes left first and raises ``WireError`` with the byte offset, so a
truncated or hostile payload ends in a clear error, never an ``IndexError`` or a huge allocation:
an array's element count is checked against the bytes left before anything is built.
"""

from __future__ import annotations

import functools
import struct
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice, repeat
from typing import Any, NamedTuple, TypeVar, cast
from uuid import UUID

__all__ = ["Reader", "TopicPartitionRuns", "WireError", "Writer", "int32_array"]

T = TypeVar("T")

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_INT16_MAX = 2**15 - 1
_COMPILED_ENTRIES = 2048
"""Arrays up to this many entries may be read by one compiled ``struct`` (kept, a few dozen)."""


class WireError(ValueError):
    """Bytes that are not a valid encoding; ``offset`` is where reading failed."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset
        self.reason = message


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

    topics: list[str]
    counts: list[int]
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


class Reader:
    """Reads primitives from ``data`` front to back; ``offset`` is the next byte to read.

    The hot reads (``int16``, ``int32``, ``string``, array counts) check their bounds inline and
    build an error's text only when they raise: a consumer group's subscriptions hold tens of
    thousands of topic names and owned partitions.
    """

    __slots__ = ("_data", "offset")

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)
        self.offset = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self.offset

    def _truncated(self, size: int, what: str) -> WireError:
        return WireError(
            f"truncated {what}: needs {size} bytes, {self.remaining} left", self.offset
        )

    def _take(self, size: int, what: str) -> bytes:
        if size > self.remaining:
            raise self._truncated(size, what)
        chunk = self._data[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def unpack(self, layout: struct.Struct, what: str) -> tuple[int, ...]:
        """Several fixed-size fields at once (one bounds check, one ``unpack_from``)."""
        if layout.size > self.remaining:
            raise self._truncated(layout.size, what)
        values: tuple[int, ...] = layout.unpack_from(self._data, self.offset)
        self.offset += layout.size
        return values

    def _fixed(self, layout: struct.Struct, what: str, suffix: str = "") -> int:
        """One field of ``layout``; ``what + suffix`` names it in the error only."""
        at = self.offset
        if at + layout.size > len(self._data):
            raise self._truncated(layout.size, what + suffix)
        self.offset = at + layout.size
        value: int = layout.unpack_from(self._data, at)[0]
        return value

    def int8(self, what: str = "int8") -> int:
        return self.unpack(_I8, what)[0]

    def int16(self, what: str = "int16") -> int:
        return self._fixed(_I16, what)

    def int32(self, what: str = "int32") -> int:
        return self._fixed(_I32, what)

    def int64(self, what: str = "int64") -> int:
        return self.unpack(_I64, what)[0]

    def uuid(self, what: str = "uuid") -> UUID:
        return UUID(bytes=self._take(16, what))

    def _length(self, raw: int, what: str, *, nullable: bool, start: int) -> int | None:
        if raw == -1 and nullable:
            return None
        if raw < 0:
            raise WireError(f"{what}: negative length {raw}", start)
        return raw

    def bytes_(self, what: str = "bytes", *, nullable: bool = False) -> bytes | None:
        """``int32`` length then raw bytes; -1 is null where ``nullable``."""
        start = self.offset
        size = self._length(
            self._fixed(_I32, what, " length"), what, nullable=nullable, start=start
        )
        return None if size is None else self._take(size, what)

    def string(
        self, what: str = "string", *, nullable: bool = False, lenient: bool = False
    ) -> str | None:
        """``int16`` length then UTF-8; malformed UTF-8 is an error, or with ``lenient`` replaced
        by U+FFFD as Java's decoder replaces it (where Kafka reads on, so must we)."""
        start = self.offset
        size = self._length(
            self._fixed(_I16, what, " length"), what, nullable=nullable, start=start
        )
        if size is None:
            return None
        raw = self._take(size, what)
        try:
            return raw.decode("utf-8", "replace" if lenient else "strict")
        except UnicodeDecodeError as exc:
            raise WireError(f"{what}: invalid UTF-8", start + 2 + exc.start) from exc

    def array(
        self, read: Callable[[Reader], T], what: str = "array", *, min_size: int = 1
    ) -> tuple[T, ...]:
        """``int32`` count then elements; the count is checked against the bytes left."""
        count = self._count(what, min_size)
        return tuple([read(self) for _ in range(count)])

    def strings(
        self, what: str, item: str, *, names: dict[bytes, str] | None = None
    ) -> tuple[str, ...]:
        """``array`` of non-null strict ``string``s (``item`` names one in errors).

        Read in one loop; where that loop stops short, the element-by-element read runs from
        the same offset and raises as it always does, so answers and errors are the same.
        ``names``: strings already decoded, by their bytes (as ``topic_partition_runs``).
        """
        read = self._strings_at(self.offset, {} if names is None else names)
        if read is None:
            return self.array(lambda r: r.string(item) or "", what, min_size=2)
        values, self.offset = read
        return values

    def topic_partitions(
        self,
        what: str,
        topic: str,
        *,
        lenient: bool = False,
        names: dict[bytes, str] | None = None,
    ) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """``array`` of {``string`` topic, ``int32s`` partitions}, the layout of Kafka's
        owned, assigned and sticky-userData partitions; one loop, as ``strings``."""
        return self.topic_partition_runs(what, topic, lenient=lenient, names=names).groups()

    def topic_partition_runs(
        self,
        what: str,
        topic: str,
        *,
        lenient: bool = False,
        names: dict[bytes, str] | None = None,
    ) -> TopicPartitionRuns:
        """``topic_partitions`` as runs, which give the partitions one by one without a
        Python step per partition.

        ``names`` (topic names by their bytes, valid UTF-8 only) may be shared by the reads of
        one group: its members name the same topics, each entry of their owned partitions
        once, so a name is decoded once per group rather than once per entry."""
        read = self._runs_at(self.offset, lenient, {} if names is None else names)
        if read is None:
            groups = self.array(
                lambda r: (r.string(topic, lenient=lenient) or "", r.int32s("partitions")),
                what,
                min_size=6,
            )
            return TopicPartitionRuns(
                [t for t, _ in groups],
                [len(ps) for _, ps in groups],
                array("i", [p for _, ps in groups for p in ps]),
            )
        runs, self.offset = read
        return runs

    def _count_at(self, at: int, min_size: int) -> int | None:
        if at + 4 > len(self._data):
            return None
        (count,) = _I32.unpack_from(self._data, at)
        return None if count < 0 or count * min_size > len(self._data) - at - 4 else count

    def _strings_at(self, at: int, names: dict[bytes, str]) -> tuple[tuple[str, ...], int] | None:
        """An array of strict strings in one loop, each distinct one decoded once; ``None``
        where any check fails (the caller then reads element by element)."""
        count = self._count_at(at, 2)
        if count is None:
            return None
        data, at = self._data, at + 4
        same = self._same_length_strings_at(at, count, names)
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
        self, at: int, count: int, names: dict[bytes, str]
    ) -> tuple[tuple[str, ...], int] | None:
        """The array read in one ``unpack_from`` when every string has the first's length (a
        group's topic names mostly do); ``None`` when they do not, or one is not UTF-8."""
        data = self._data
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
        self, at: int, count: int, lenient: bool, names: dict[bytes, str]
    ) -> tuple[TopicPartitionRuns, int] | None:
        """The array read in one ``unpack_from`` when every entry holds one partition and a
        name of the first's length (a member's share of a group whose topics have about as
        many partitions as it has members); ``None`` otherwise."""
        data = self._data
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

    def _runs_at(
        self, at: int, lenient: bool, names: dict[bytes, str]
    ) -> tuple[TopicPartitionRuns, int] | None:
        """An array of {string, int32s} in one loop without a call per element (a group's
        owned partitions hold an entry per topic for every member); each distinct topic name
        is decoded once (``names``: strictly valid names only, so the lenient and strict reads
        may share it). An entry of one partition whose name has the length of the entry before
        is read in one ``unpack_from``. ``None`` where any check fails, as ``_strings_at``."""
        count = self._count_at(at, 6)
        if count is None:
            return None
        data, end, at = self._data, len(self._data), at + 4
        uniform = self._single_partition_runs_at(at, count, lenient, names)
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

    def int32s(self, what: str = "array") -> tuple[int, ...]:
        """``array`` of ``int32`` read in one ``unpack_from``: the same checks and errors, and
        no call per element (owned partitions and sticky userData carry tens of thousands)."""
        count = self._count(what, 4)
        values: tuple[int, ...] = struct.unpack_from(f">{count}i", self._data, self.offset)
        self.offset += 4 * count
        return values

    def _count(self, what: str, min_size: int) -> int:
        start = self.offset
        count = self._fixed(_I32, what, " count")
        if count < 0:
            raise WireError(f"{what}: null or negative count {count}", start)
        if count * min_size > self.remaining:
            raise WireError(f"{what}: {count} elements cannot fit in {self.remaining} bytes", start)
        return count

    def expect_end(self, what: str) -> None:
        if self.remaining:
            raise WireError(f"{self.remaining} trailing bytes after {what}", self.offset)


class Writer:
    """Builds an encoding; the inverse of ``Reader`` (range errors raise ``ValueError``)."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int8(self, value: int) -> None:
        self._parts.append(_I8.pack(value))

    def int16(self, value: int) -> None:
        self._parts.append(_I16.pack(value))

    def int32(self, value: int) -> None:
        self._parts.append(_I32.pack(value))

    def int64(self, value: int) -> None:
        self._parts.append(_I64.pack(value))

    def uuid(self, value: UUID) -> None:
        self._parts.append(value.bytes)

    def bytes_(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
            return
        self.int32(len(value))
        self._parts.append(bytes(value))

    def string(self, value: str | None) -> None:
        if value is None:
            self.int16(-1)
            return
        raw = value.encode("utf-8")
        if len(raw) > _INT16_MAX:
            raise ValueError(f"string of {len(raw)} bytes is longer than an int16 length allows")
        self.int16(len(raw))
        self._parts.append(raw)

    def int32s(self, values: tuple[int, ...] | list[int]) -> None:
        """``array`` of ``int32`` in one ``pack``: the inverse of ``Reader.int32s``."""
        self._parts.append(struct.pack(f">i{len(values)}i", len(values), *values))

    def array(self, items: tuple[T, ...] | list[T], write: Callable[[Writer, T], None]) -> None:
        self.int32(len(items))
        for item in items:
            write(self, item)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)
