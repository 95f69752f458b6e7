"""Kafka's ``ConsumerProtocolSubscription`` v0-v3: an int16 version header, then the struct.

Layout: topics (array of string), userData (nullable bytes), ownedPartitions (v1+, array of
{topic, partitions}), generationId (v2+, -1 unknown), rackId (v3+, nullable string). As Kafka's
``ConsumerProtocol`` does, a header version above 3 is read as v3 and bytes after the struct are
ignored (newer versions only ever append fields); the header is kept as sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from kassign.kafka.buffer import Reader, WireError, Writer

__all__ = [
    "LATEST_VERSION",
    "ConsumerProtocolSubscription",
    "OwnedTopicPartitions",
    "decode_consumer_subscription",
    "encode_consumer_subscription",
]

LATEST_VERSION = 3


@dataclass(frozen=True, slots=True)
class OwnedTopicPartitions:
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


def _read_topic(r: Reader) -> str:
    return r.string("topic") or ""


def _read_owned(r: Reader) -> OwnedTopicPartitions:
    topic = r.string("ownedPartitions topic") or ""
    return OwnedTopicPartitions(topic, r.int32s("partitions"))


def decode_consumer_subscription(data: bytes) -> ConsumerProtocolSubscription:
    """Decode as Kafka does; ``WireError`` (with the byte offset) when the bytes run short."""
    r = Reader(data)
    version = r.int16("version")
    if version < 0:
        raise WireError(f"unsupported ConsumerProtocolSubscription version {version}", 0)
    body = min(version, LATEST_VERSION)
    topics = r.array(_read_topic, "topics", min_size=2)
    user_data = r.bytes_("userData", nullable=True)
    owned = r.array(_read_owned, "ownedPartitions", min_size=6) if body >= 1 else ()
    generation = r.int32("generationId") if body >= 2 else -1
    rack = r.string("rackId", nullable=True) if body >= 3 else None
    return ConsumerProtocolSubscription(
        version=version,
        topics=topics,
        user_data=user_data,
        owned_partitions=owned,
        generation_id=generation,
        rack_id=rack,
    )


def _write_owned(w: Writer, owned: OwnedTopicPartitions) -> None:
    w.string(owned.topic)
    w.array(owned.partitions, Writer.int32)


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
