"""The userData of Kafka's sticky consumer assignors, decoded and encoded byte for byte.

- ``StickyAssignor`` (eager) writes the member's current assignment and generation, so that
  the next leader can keep partitions where they were: v1 is an array of {topic (string),
  partitions (array of int32)} then the generation (int32); v0, from clients before 2.3, has
  no generation. Kafka reads v1 and falls back to v0; bytes after the struct are ignored.
- ``CooperativeStickyAssignor`` writes only its generation (int32), read when the subscription
  itself carries none (ConsumerProtocolSubscription v0-1).

These are the formats only; what an assignor does with bytes that fit neither (Kafka treats
them as "no previous assignment, generation -1") is the assignor's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kassign.kafka.buffer import Reader, TopicPartitionRuns, WireError, Writer

__all__ = [
    "StickyUserData",
    "decode_cooperative_generation",
    "decode_sticky_user_data",
    "decode_sticky_user_data_runs",
    "encode_cooperative_generation",
    "encode_sticky_user_data",
]


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """A ``StickyAssignor`` member's previous assignment, partitions in wire order.

    ``generation`` is ``None`` for v0 bytes, which have none.
    """

    partitions: tuple[tuple[str, int], ...]
    generation: int | None


def _read_partitions(r: Reader, names: dict[bytes, str] | None) -> TopicPartitionRuns:
    return r.topic_partition_runs("previous_assignment", "topic", lenient=True, names=names)


def decode_sticky_user_data(data: bytes, names: dict[bytes, str] | None = None) -> StickyUserData:
    """v1, else v0, as ``StickyAssignor`` tries them; ``WireError`` when neither fits.
    ``names``: topic names already decoded, shared by a group's members
    (``Reader.topic_partitions``)."""
    runs, generation = decode_sticky_user_data_runs(data, names)
    return StickyUserData(tuple(runs.pairs()), generation)


def decode_sticky_user_data_runs(
    data: bytes, names: dict[bytes, str] | None = None
) -> tuple[TopicPartitionRuns, int | None]:
    """``decode_sticky_user_data`` with the partitions as read, entry by entry (a member's
    previous assignment may hold tens of thousands: no tuple per partition)."""
    try:
        r = Reader(data)
        runs = _read_partitions(r, names)
        return runs, r.int32("generation")
    except WireError:
        return _read_partitions(Reader(data), names), None


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
