"""Bounds-checked big-endian reading and writing of Kafka's non-flexible message primitives.

Every read checks the bytes left first and raises ``WireError`` with the byte offset, so a
truncated or hostile payload ends in a clear error, never an ``IndexError`` or a huge allocation:
an array's element count is checked against the bytes left before anything is built. Long
arrays of strings and {topic, partitions} are read in one loop by ``runs.py``.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable
from typing import TypeVar
from uuid import UUID

from kassign.kafka.runs import TopicPartitionRuns, int32_array, runs_at, strings_at

__all__ = ["Reader", "TopicPartitionRuns", "WireError", "Writer", "int32_array"]

T = TypeVar("T")

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_INT16_MAX = 2**15 - 1


class WireError(ValueError):
    """Bytes that are not a valid encoding; ``offset`` is where reading failed."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset
        self.reason = message


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
        read = strings_at(self._data, self.offset, {} if names is None else names)
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
        read = runs_at(self._data, self.offset, lenient, {} if names is None else names)
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

    def int32s(self, what: str = "array") -> tuple[int, ...]:
        """``array`` of ``int32`` read in one ``unpack_from``: the same checks and errors, and
        no call per element (owned partitions and sticky userData carry tens of thousands)."""
        count = self._count(what, 4)
        values: tuple[int, ...] = struct.unpack_from(f">{count}i", self._data, self.offset)
        self.offset += 4 * count
        return values

    def count(self, what: str = "array", *, min_size: int = 1) -> int:
        """An array's ``int32`` count, checked against the bytes left (the caller reads the
        elements: ``offset_sum_columns`` reads them a chunk at a time)."""
        return self._count(what, min_size)

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
