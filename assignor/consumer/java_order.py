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
  (its capacity decides the buckets) so that ``ordered()`` and ``first()`` return what Java's
  iterator would. Java turns a bucket of nine or more keys in a table of 64 or more buckets into
  a red-black tree, whose iteration order we do not follow; ``treeified`` says it happened
  (it needs nine keys whose spread hashes share their low six or more bits).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

__all__ = [
    "HashTable",
    "hash_order",
    "java_key",
    "string_hash",
    "topic_partition_hash",
]

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF
_DEFAULT_CAPACITY = 16
_TREEIFY_BIN = 9  # a bin that reaches TREEIFY_THRESHOLD (8) + 1 nodes is treeified or resized
_MIN_TREEIFY_CAPACITY = 64


def java_key(text: str) -> bytes:
    """Sort key of ``text`` in Java ``String.compareTo`` order (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def string_hash(text: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value: sum of code units times powers of 31."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK
    return h


def topic_partition_hash(topic_hash: int, partition: int) -> int:
    """``TopicPartition.hashCode`` (unsigned 32-bit), given ``string_hash(topic)``."""
    return (31 * (31 + partition) + topic_hash) & _MASK


def _spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half, as the bucket index uses it."""
    return (h ^ (h >> 16)) & _MASK


class HashTable(Generic[K]):
    """The iteration order of a default-constructed ``HashMap``/``HashSet``, kept up to date.

    Scratch state for one assignment: keys are added and removed as Kafka adds and removes
    them; the table grows as Java's does (load factor 0.75, or a crowded bin below 64 buckets)
    and never shrinks.
    """

    __slots__ = ("_capacity", "_hash", "_keys", "_next_seq", "treeified")

    def __init__(self, hash_of: Callable[[K], int]) -> None:
        self._hash = hash_of
        self._capacity = _DEFAULT_CAPACITY
        self._keys: dict[K, tuple[int, int]] = {}  # key -> (spread hash, insertion number)
        self._next_seq = 0
        self.treeified = False

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def add(self, key: K) -> None:
        """``put`` of a new key (a present key keeps its place, as in Java)."""
        if key in self._keys:
            return
        spread = _spread(self._hash(key))
        self._keys[key] = (spread, self._next_seq)
        self._next_seq += 1
        mask = self._capacity - 1
        in_bin = sum(1 for s, _ in self._keys.values() if s & mask == spread & mask)
        if in_bin >= _TREEIFY_BIN:
            if self._capacity < _MIN_TREEIFY_CAPACITY:
                self._capacity *= 2
            else:
                self.treeified = True
        if len(self._keys) > self._capacity * 3 // 4:
            self._capacity *= 2

    def remove(self, key: K) -> None:
        self._keys.pop(key, None)

    def _position(self, key: K) -> tuple[int, int]:
        spread, seq = self._keys[key]
        return (spread & (self._capacity - 1), seq)

    def ordered(self) -> list[K]:
        """Every key, in the order Java's iterator returns them."""
        return sorted(self._keys, key=self._position)

    def first(self) -> K:
        """``iterator().next()``; the table must not be empty."""
        return min(self._keys, key=self._position)


def hash_order(keys: Iterable[K], hash_of: Callable[[K], int]) -> list[K]:
    """``keys`` as a default ``HashMap`` filled in this order iterates them."""
    table: HashTable[K] = HashTable(hash_of)
    for key in keys:
        table.add(key)
    return table.ordered()
