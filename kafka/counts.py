"""How many entries Kafka's bytes would decode to, read from the arrays' lengths alone.

A server refuses a request past its limits before it builds anything (issue 16: a 15 MB raw
subscription with 4 million owned partitions used to take 2.7 GB to decode). These walks read
only lengths and counts, skipping every element's body, and stop as soon as the count passes
``stop``: a hostile array of millions of entries costs one step per entry up to the limit, never
more. Malformed bytes are not judged here: an array whose count cannot fit in the bytes left
(each element has a least size, as the decoder checks) counts as empty, and a walk that runs
out of bytes returns what it counted so far; the decoder then refuses the bytes with its own
error, as it would without the limits.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kassign.kafka.subscription_info import LATEST_VERSION

__all__ = ["Bytes", "SubscriptionCounts", "reported_tasks", "subscription_counts"]

Bytes = bytes | memoryview
"""Where the bytes may lie: a member's userData is read where it sits in its subscription."""
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class SubscriptionCounts(NamedTuple):
    """A ConsumerProtocolSubscription's subscribed topics, its owned partitions with the
    {topic, partitions} entries that hold them (an entry of no partitions still names a topic),
    and where its userData lies (``user_data``: start and end; empty when null or cut short)."""

    topics: int
    owned_entries: int
    owned_partitions: int
    user_data: tuple[int, int] = (0, 0)


def _count(data: Bytes, at: int, least: int) -> int | None:
    """The int32 count at ``at``, ``None`` if negative or if that many elements of ``least``
    bytes cannot fit in what follows (the decoder's ``Reader._count`` check)."""
    count = _int(_I32, data, at)
    if count is None or count < 0 or count * least > len(data) - at - 4:
        return None
    return count


def _int(layout: struct.Struct, data: Bytes, at: int) -> int | None:
    if at < 0 or at + layout.size > len(data):
        return None
    value: int = layout.unpack_from(data, at)[0]
    return value


def _after_string(data: Bytes, at: int) -> int:
    """The offset after the int16-length string at ``at``; past the end when it does not fit."""
    size = _int(_I16, data, at)
    return len(data) + 1 if size is None else at + 2 + max(size, 0)


def _after_strings(data: Bytes, at: int, count: int) -> int:
    """The offset after ``count`` int16-length strings from ``at``. Topic names of one length
    (``topic-0001``, ...) are checked at once: every length field, read by two strided slices,
    must say that length; otherwise the strings are walked one by one."""
    size = _int(_I16, data, at)
    if count > 1 and size is not None and size >= 0:
        stride, end = 2 + size, at + count * (2 + size)
        if end <= len(data):
            head = bytes(data[at:end:stride]), bytes(data[at + 1 : end : stride])
            if head == (bytes((size >> 8,)) * count, bytes((size & 0xFF,)) * count):
                return end
    for _ in range(count):
        if at > len(data):
            break
        at = _after_string(data, at)
    return at


def _uniform_entries(data: Bytes, at: int, entries: int) -> int | None:
    """The partitions of ``entries`` owned entries from ``at`` when all have the first one's
    shape (topic names of one length, one partition count: a member owning a partition or
    two of each topic), checked at once by strided slices of their length and count fields;
    ``None`` otherwise, or when they do not fit (then they are walked one by one)."""
    size, count = _int(_I16, data, at), None
    if entries < 2 or size is None or size < 0:
        return None
    count = _int(_I32, data, at + 2 + size)
    if count is None or count < 0:
        return None
    stride = 2 + size + 4 + 4 * count
    end = at + entries * stride
    if end > len(data):
        return None
    sizes, counts = _I16.pack(size), _I32.pack(count)
    for i, expected in enumerate(sizes):
        if bytes(data[at + i : end : stride]) != bytes((expected,)) * entries:
            return None
    for i, expected in enumerate(counts):
        if bytes(data[at + 2 + size + i : end : stride]) != bytes((expected,)) * entries:
            return None
    return entries * count


def subscription_counts(data: Bytes, *, topics_stop: int, owned_stop: int) -> SubscriptionCounts:
    """Counts of ``data`` (a ConsumerProtocolSubscription v0-3). Past ``topics_stop`` topics
    nothing else is counted; the owned entries are walked until they or their partitions pass
    ``owned_stop``."""
    version = _int(_I16, data, 0)
    topics = _count(data, 2, 2)
    if version is None or version < 0 or topics is None:
        return SubscriptionCounts(0, 0, 0)
    if topics > topics_stop:
        return SubscriptionCounts(topics, 0, 0)
    at = _after_strings(data, 6, topics)
    size = _int(_I32, data, at)
    if size is None:
        return SubscriptionCounts(topics, 0, 0)
    user_data = (at + 4, min(at + 4 + max(size, 0), len(data)))
    at += 4 + max(size, 0)
    entries = _count(data, at, 6) if version >= 1 else 0
    if entries is None:
        return SubscriptionCounts(topics, 0, 0, user_data)
    at += 4
    uniform = _uniform_entries(data, at, entries) if entries <= owned_stop else None
    if uniform is not None and uniform <= owned_stop:
        return SubscriptionCounts(topics, entries, uniform, user_data)
    partitions = 0
    for entry in range(entries):
        at = _after_string(data, at)
        count = _count(data, at, 4)
        if count is None or max(partitions, entry) > owned_stop:
            break
        partitions += count
        at += 4 + 4 * count
    return SubscriptionCounts(topics, entries, partitions, user_data)


_GROUP_HEAD = struct.Struct(">ii")  # v7-9: topicGroupId, then its partitions' count
_UUID_BYTES = 16


def reported_tasks(data: Bytes, stop: int) -> int:
    """Tasks a Streams SubscriptionInfo (v1-11) reports: v1-6 its previous and standby task
    lists, v7 on its offset sums; the v7-9 groups are walked only until they pass ``stop``."""
    version = _int(_I32, data, 0)
    if version is None or not 1 <= version <= LATEST_VERSION:
        return 0  # a future version is answered without reading it (``peek_versions``)
    at = (8 if version >= 3 else 4) + _UUID_BYTES
    if version <= 6:
        previous = _count(data, at, 8) or 0
        return previous + (_count(data, at + 4 + 8 * previous, 8) or 0)
    end_point = _int(_I32, data, at)
    if end_point is None or end_point < 0:
        return 0
    at += 4 + end_point
    groups = _count(data, at, 18 if version >= 10 else 8)
    if groups is None or version >= 10:
        return groups or 0
    at, tasks = at + 4, 0
    for group in range(groups):
        count = _count(data, at + 4, 12)
        if count is None or max(tasks, group) > stop:
            break
        tasks += count
        at += _GROUP_HEAD.size + 12 * count
    return tasks
