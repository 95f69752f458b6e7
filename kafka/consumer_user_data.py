"""The userData of Kafka's sticky consumer assignors, decoded and encoded byte for byte.

- ``StickyAssignor`` (eager) writes the member's current assignment and generation, so that
  the next leader can keep partitions where they were: v1 is an array of {topic (string),
  partitions (array of int32)} then the generation (int32); v0, from clients before 2.3, has
  no generation. Kafka reads v1 and falls back to v0; bytes after the struct are ignored.
- ``CooperativeStickyAssignor`` writes only its generation (int32), read when the subscription
  itself carries none (ConsumerProtocolSubscription v0-1).

Eager userData is read by the compiled core (``decode_sticky_user_data_group``: a group's at
once), the one reader of those bytes; it is written here. These are the formats only; what an assignor does with bytes that fit neither (Kafka treats
them as "no previous assignment, generation -1") is the assignor's business.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kassign.kafka.buffer import Reader, TopicPartitionRuns, WireError, Writer
from kassign.kafka.runs import EntryColumns, runs_of_columns

__all__ = [
    "StickyClaims",
    "StickyUserData",
    "decode_cooperative_generation",
    "decode_sticky_user_data",
    "decode_sticky_user_data_group",
    "encode_cooperative_generation",
    "encode_sticky_user_data",
    "read_sticky_user_data_group",
]

_Made = TypeVar("_Made")


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """A ``StickyAssignor`` member's previous assignment, partitions in wire order.

    ``generation`` is ``None`` for v0 bytes, which have none.
    """

    partitions: tuple[tuple[str, int], ...]
    generation: int | None


@dataclass(frozen=True, slots=True)
class StickyClaims:
    """One member's userData as read: its partitions, entry by entry (a member's previous
    assignment may hold tens of thousands: no tuple per partition), its generation (v1) or
    ``None`` (v0; none; bytes that fit neither), and for those ``failure``."""

    runs: TopicPartitionRuns
    generation: int | None
    failure: WireError | None


def decode_sticky_user_data_group(user_data: Sequence[bytes | None]) -> list[StickyClaims]:
    """Each member's bytes (``None``: nothing, no generation) as ``StickyAssignor`` reads
    them: v1, else v0 (empty bytes fit neither); bytes after the struct ignored; malformed
    UTF-8 in names replaced by U+FFFD as Java's decoder replaces it.

    The reading is the compiled core's (``kassign_native.sticky_user_data``,
    ``assignor/native/src/user_data.rs``), the whole group's bytes at once without the GIL (a
    rejoining group of 2,000 members sends a million entries; issue 24), so it needs the
    server's install, where ``kassign_native`` is built."""
    runs, generations, failures, _ = read_sticky_user_data_group(user_data, TopicPartitionRuns)
    return list(map(StickyClaims, runs, generations, failures))


def read_sticky_user_data_group(
    user_data: Sequence[bytes | None],
    make: Callable[[tuple[str, ...], array[int], array[int]], _Made],
) -> tuple[list[_Made], list[int | None], list[WireError | None], EntryColumns]:
    """``decode_sticky_user_data_group`` as columns: each member's partitions made by ``make``
    of (topics, counts, numbers) (``runs_of_columns``: the assignor's claims made at once, no
    object per member in between), its generation, its failure; and the reader's columns
    whole (a member whose bytes fit neither has no entries there), for a caller that checks
    or numbers the group's claims at once."""
    import kassign_native  # the server's compiled core; the client never decodes these

    names, generations, failures, *columns = kassign_native.sticky_user_data(list(user_data))
    read = EntryColumns(names, *columns)
    made = runs_of_columns(*read, make=make)
    errors: list[WireError | None] = [None] * len(failures)  # unless some bytes fit neither
    if any(failures):
        errors = [None if f is None else WireError(*f) for f in failures]
    return made, generations, errors, read


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """v1, else v0, as ``StickyAssignor`` tries them; ``WireError`` when neither fits."""
    (claims,) = decode_sticky_user_data_group([data])
    if claims.failure is not None:
        raise claims.failure
    return StickyUserData(tuple(claims.runs.pairs()), claims.generation)


def _write_topic_assignment(w: Writer, group: tuple[str, Sequence[int]]) -> None:
    w.string(group[0])
    w.array(list(group[1]), Writer.int32)


def encode_sticky_user_data(
    topics: Sequence[tuple[str, Sequence[int]]], generation: int | None
) -> bytes:
    """v1 bytes (v0 when ``generation`` is ``None``), topics in the order given.

    Kafka groups the partitions by topic in a ``HashMap``: to write its exact bytes, pass the
    topics in that map's order.
    """
    w = Writer()
    w.array(list(topics), _write_topic_assignment)
    if generation is not None:
        w.int32(generation)
    return w.getvalue()


def decode_cooperative_generation(data: bytes) -> int:
    """The generation ``CooperativeStickyAssignor`` wrote; ``WireError`` under four bytes."""
    return Reader(data).int32("generation")


def encode_cooperative_generation(generation: int) -> bytes:
    w = Writer()
    w.int32(generation)
    return w.getvalue()
