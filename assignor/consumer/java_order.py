"""Java's orders, reproduced where Kafka's consumer assignors let them decide the answer.

Two kinds:

- **String order.** ``String.compareTo`` compares UTF-16 code units; Python compares code
  points. They differ once a string holds a character above U+FFFF next to one in
  U+E000..U+FFFF, so member and instance ids sort by ``java_key`` (UTF-16-BE bytes compare as
  Java compares the strings). Topic names need no key: Kafka allows only ``[a-zA-Z0-9._-]``.
- **Hash order.** ``java.util.HashMap`` and ``HashSet`` iterate bucket by bucket, and within a
  bucket in insertion order. Kafka's sticky assignors walk the group's members in that order
  (``GroupSubscription`` is a ``HashMap`` the leader fills in JoinGroup-response order) and pick
  "any" partition of a ``HashSet`` when undoing a move. ``HashTable`` replays a table's growth
  (its capacity decides the buckets) and each bucket's order, so that ``ordered()`` and
  ``first()`` return what Java's iterator would. Java turns a bucket of eight or nine keys in a
  table of 64 or more buckets into a red-black tree, whose iteration order we do not follow;
  ``treeified`` says it happened (it needs that many keys whose spread hashes share their low
  six or more bits).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np

__all__ = [
    "SIZED_BY_COUNT",
    "HashTable",
    "hash_order",
    "java_key",
    "java_keys",
    "java_sorted",
    "string_hash",
    "topic_partition_hash",
]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

_MASK = 0xFFFFFFFF
_POWERS = [1]  # 31**k reduced to 32 bits, grown as longer strings come: a cache, not state
_DEFAULT_CAPACITY = 16
_TREEIFY_BIN = 9  # a bin that reaches TREEIFY_THRESHOLD (8) + 1 nodes is treeified or resized
_MIN_TREEIFY_CAPACITY = 64
SIZED_BY_COUNT = _MIN_TREEIFY_CAPACITY * 3 // 4
"""Past this many distinct keys a default ``HashMap``'s final size follows from their count alone
(the early growth of crowded buckets stops at 64 buckets, which more keys outgrow anyway)."""


def java_key(text: str) -> bytes:
    """Sort key of ``text`` in Java ``String.compareTo`` order (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def _code_units_are_code_points(texts: Iterable[str]) -> bool:
    """Whether no text holds a character above U+FFFF: Python's order is then Java's (each
    code point is one UTF-16 code unit), so the strings themselves sort as ``java_key``s do."""
    joined = "".join(texts)
    return joined.isascii() or max(joined, default="") < "\U00010000"


def java_keys(texts: Sequence[str]) -> Sequence[str] | list[bytes]:
    """Sort keys of ``texts`` in Java order, one per text: the texts themselves when their code
    units are their code points, else ``java_key`` of each (issue 24: encoding a group's member
    ids took a sort's time)."""
    if _code_units_are_code_points(texts):
        return texts
    return [java_key(text) for text in texts]


def java_sorted(items: Iterable[T], text: Callable[[T], str]) -> list[T]:
    """``items`` sorted, stably, by ``text(item)`` in Java ``String`` order: by the strings
    themselves (one C sort with a C ``text`` such as ``attrgetter``: no key bytes made, no
    Python step per item; 0.45 ms of a fresh 800-member sticky call before) when their code
    units are their code points, else by ``java_key``."""
    listed = list(items)
    if _code_units_are_code_points(map(text, listed)):
        return sorted(listed, key=text)
    return sorted(listed, key=lambda item: java_key(text(item)))


@functools.lru_cache(maxsize=1 << 14)
def string_hash(text: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value: sum of code units times powers of 31.

    Summed as one dot product with the powers, highest first (an ASCII string's bytes are its
    code units): member ids are hashed by the thousand, twice per sticky assignment (kept:
    a pure function's answers)."""
    if text.isascii():
        units: list[int] | bytes = text.encode("ascii")
    else:
        raw = text.encode("utf-16-be", "surrogatepass")
        units = [high << 8 | low for high, low in zip(raw[::2], raw[1::2])]
    total: int = sum(map(operator.mul, units, _powers_of_31(len(units))))
    return total & _MASK


def _powers_of_31(n: int) -> list[int]:
    """``31**(n-1)``, ..., ``31**0``, each reduced to 32 bits (the sum is reduced once)."""
    while len(_POWERS) < n:
        _POWERS.append(_POWERS[-1] * 31 & _MASK)
    return _POWERS[n - 1 :: -1] if n else []


def topic_partition_hash(topic_hash: int, partition: int) -> int:
    """``TopicPartition.hashCode`` (unsigned 32-bit), given ``string_hash(topic)``."""
    return (31 * (31 + partition) + topic_hash) & _MASK


def _spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half, as the bucket index uses it."""
    return (h ^ (h >> 16)) & _MASK


class HashTable(Generic[K]):
    """The iteration order of a default-constructed ``HashMap``/``HashSet``, kept up to date.

    Scratch state for one assignment: keys are added and removed as Kafka adds and removes
    them. ``put`` appends a new key to its bucket and grows the table after the insertion that
    crosses the load factor (0.75); ``compute_if_absent`` (``HashMap.computeIfAbsent``) puts it
    at the head of its bucket and grows the table before the insertion that follows. A crowded
    bucket below 64 buckets grows the table too; growing keeps each bucket's relative order,
    and the table never shrinks.
    """

    __slots__ = ("_buckets", "_capacity", "_hash", "_size", "_spread", "treeified")

    def __init__(self, hash_of: Callable[[K], int]) -> None:
        self._hash = hash_of
        self._spread: dict[K, int] = {}  # each key's spread hash, computed once (growth rehashes)
        self._capacity = _DEFAULT_CAPACITY
        self._buckets: dict[int, list[K]] = {}
        self._size = 0
        self.treeified = False

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._buckets.get(self._index(key), ())  # type: ignore[arg-type]

    def _index(self, key: K) -> int:
        spread = self._spread.get(key)
        if spread is None:
            spread = self._spread[key] = _spread(self._hash(key))
        return spread & (self._capacity - 1)

    def _grow(self) -> None:
        old = [key for index in sorted(self._buckets) for key in self._buckets[index]]
        self._capacity *= 2
        self._buckets = {}
        for key in old:
            self._buckets.setdefault(self._index(key), []).append(key)

    def _crowded(self, bucket: list[K], limit: int) -> None:
        if len(bucket) >= limit:
            if self._capacity < _MIN_TREEIFY_CAPACITY:
                self._grow()
            else:
                self.treeified = True

    def put(self, key: K) -> None:
        """``HashMap.put`` / ``HashSet.add`` of a key (a present key keeps its place)."""
        bucket = self._buckets.setdefault(self._index(key), [])
        if key in bucket:
            return
        bucket.append(key)
        self._size += 1
        self._crowded(bucket, _TREEIFY_BIN)
        if self._size > self._capacity * 3 // 4:
            self._grow()

    def compute_if_absent(self, key: K) -> None:
        """``HashMap.computeIfAbsent`` of a key (a present key keeps its place)."""
        if self._size > self._capacity * 3 // 4:
            self._grow()
        bucket = self._buckets.setdefault(self._index(key), [])
        if key in bucket:
            return
        bucket.insert(0, key)
        self._size += 1
        self._crowded(bucket, _TREEIFY_BIN - 1)

    def remove(self, key: K) -> None:
        bucket = self._buckets.get(self._index(key))
        if bucket is not None and key in bucket:
            bucket.remove(key)
            self._size -= 1
            if not bucket:
                del self._buckets[self._index(key)]

    def ordered(self) -> list[K]:
        """Every key, in the order Java's iterator returns them."""
        return [key for index in sorted(self._buckets) for key in self._buckets[index]]

    def first(self) -> K:
        """``iterator().next()``; the table must not be empty."""
        return self._buckets[min(self._buckets)][0]


def hash_order(
    keys: Iterable[K], hash_of: Callable[[K], int], *, compute_if_absent: bool = False
) -> list[K]:
    """``keys`` as a default ``HashMap`` filled in this order (with ``put``, or
    ``computeIfAbsent``) iterates them.

    ``put``s are replayed only until the table has 64 buckets (past that a crowded bucket no
    longer grows it, only the size does): the final capacity follows from the count, and a
    table iterates bucket by bucket, each in insertion order (growing keeps it), so the order is
    one stable sort of the keys by their final bucket (issue 24: a group's members, twice per
    sticky assignment, took a Python step each through every growth)."""
    if compute_if_absent:
        table: HashTable[K] = HashTable(hash_of)
        for key in keys:
            table.compute_if_absent(key)
        return table.ordered()
    distinct = list(dict.fromkeys(keys))  # a present key keeps its place
    capacity = _final_capacity(distinct, hash_of)
    spreads = np.fromiter(map(hash_of, distinct), dtype=np.uint32, count=len(distinct))
    buckets = (spreads ^ (spreads >> 16)) & (capacity - 1)
    return list(map(distinct.__getitem__, np.argsort(buckets, kind="stable").tolist()))


def _final_capacity(distinct: list[K], hash_of: Callable[[K], int]) -> int:
    """The bucket count after ``put``s of ``distinct`` (no key twice): the first keys
    replayed while a crowded bucket may still grow the table, then the load factor alone."""
    if len(distinct) > SIZED_BY_COUNT:  # no Python put per key for a large group (issue 24)
        capacity = _MIN_TREEIFY_CAPACITY
    else:
        table: HashTable[K] = HashTable(hash_of)
        for key in distinct:
            if table._capacity >= _MIN_TREEIFY_CAPACITY:
                break
            table.put(key)
        capacity = table._capacity
    while len(distinct) > capacity * 3 // 4:
        capacity *= 2
    return capacity
