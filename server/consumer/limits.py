"""A ``ConsumerAssignRequest`` against the server's ``RequestLimits``, before and after decoding.

``check_request`` runs before anything is decoded: members and the metadata's partitions from
the message's lengths, each member's subscribed topics and owned partitions from its structured
fields or from the arrays' lengths in its raw subscription (``kassign.kafka.counts``).
``check_answer`` refuses a group whose answer would not fit the server's largest message,
estimated from the decoded group before the assignor runs. Topic names need no check of ours:
Kafka's rule (at most 249 characters) is the model's.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Iterator, Sequence

from kassign.assignor.consumer.common import subscribed_topics
from kassign.assignor.consumer.model import ConsumerGroup
from kassign.kafka.counts import subscription_counts
from kassign.server.consumer.member_columns import MemberColumns
from kassign.server.limits import (
    LimitExceeded,
    RequestLimits,
    check_count,
    check_text,
    entry_bytes,
    varint_bytes,
)
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["answer_bytes", "check_answer", "check_racks", "check_request"]

_ASSIGNED_BYTES = 4
"""Each assigned partition's number in its member's ConsumerProtocolAssignment bytes."""


def _member_counts(
    member: pb.MemberSubscription,
    field: str,
    limits: RequestLimits,
    owned_stop: int,
    *,
    bounded: bool,
    list_sizes: Sequence[int] = (),
    structured_owned: int = 0,
) -> int:
    """The member's owned partitions, counted without decoding; its ids and topics checked.

    ``bounded``: the raw subscriptions' sizes alone keep the request within the limits, so a
    raw one is not walked and its size's bound is returned (``_size_bound``);
    ``structured_owned``: a structured member's owned partitions, as ``_bounded_by_size``
    counted them (not walked twice)."""
    who = member.member_id
    check_text(who, limits, field=f"{field}.member_id")
    check_text(member.group_instance_id, limits, field=f"{field}.group_instance_id", member=who)
    if member.WhichOneof("kind") == "raw_subscription":
        if bounded:
            return _size_bound(member.raw_subscription)
        counts = subscription_counts(
            member.raw_subscription, topics_stop=limits.partitions, owned_stop=owned_stop
        )
        topics, owned = counts.topics, max(counts.owned_partitions, counts.owned_entries)
    else:
        sub = member.subscription
        check_text(sub.rack_id, limits, field=f"{field}.subscription.rack_id", member=who)
        topics, owned = len(sub.topics), structured_owned
        if sub.HasField("topic_list") and 0 <= sub.topic_list < len(list_sizes):
            topics += list_sizes[sub.topic_list]  # out of range: the decoder names it
    check_count(topics, limits, "partitions", "subscribed topics", field=field, member=who)
    return owned


def check_request(
    request: cpb.ConsumerAssignRequest,
    limits: RequestLimits,
    columns: MemberColumns,
    by_topic: Sequence[int],
) -> None:
    """Counts and ids of ``request`` within ``limits``; ``LimitExceeded`` names the first past.
    ``columns``: its members' fields, read for the group (``member_columns``); ``by_topic``:
    per member the partitions of its ``owned_by_topic`` (``owned_wire``), which the decoder
    reads first, as numbers."""
    check_text(request.group_id, limits, field="group_id")
    check_text(request.assignor, limits, field="assignor")
    check_count(len(request.members), limits, "members", "members", field="members")
    partitions = 0
    for i, topic in enumerate(request.topics):
        partitions += len(topic.partitions) + max(
            topic.partition_count, len(topic.replica_rack_list)
        )
        if partitions > limits.partitions:
            check_count(partitions, limits, "partitions", "partitions", field=f"topics[{i}]")
    check_count(len(request.topic_lists), limits, "members", "topic lists", field="topic_lists")
    list_sizes = [len(topics.topics) for topics in request.topic_lists]
    for i, size in enumerate(list_sizes):
        check_count(size, limits, "partitions", "subscribed topics", field=f"topic_lists[{i}]")
    structured = list(map(operator.add, columns.owned_counts, by_topic))
    bounded = _bounded_by_size(columns.raw, structured, limits)
    if bounded and _fits_at_once(columns, max(list_sizes, default=0), limits):
        return
    owned = 0
    for i, (member, structured_owned) in enumerate(zip(request.members, structured, strict=True)):
        owned += _member_counts(
            member,
            f"members[{i}]",
            limits,
            limits.owned_partitions - owned,
            bounded=bounded,
            list_sizes=list_sizes,
            structured_owned=structured_owned,
        )
        check_count(
            owned,
            limits,
            "owned_partitions",
            "owned partitions",
            field=f"members[{i}]",
            member=member.member_id,
        )


def _fits_at_once(columns: MemberColumns, largest_list: int, limits: RequestLimits) -> bool:
    """Whether every member's ids and rack fit, and every structured member's topics with
    the largest shared list, so that no member needs checking one by one (a raw member's
    topics are bounded by its size, ``_bounded_by_size``). Read from the group's columns
    (C loops); when not, the walk names the first member past a limit."""
    longest = max(
        max(map(len, columns.ids), default=0),
        max(map(len, columns.instance_ids), default=0),
        max(map(len, columns.racks), default=0),
    )
    topics = max(columns.topic_counts, default=0) + largest_list
    return longest * 4 <= limits.string_bytes and topics <= limits.partitions


def _bounded_by_size(
    raw: Iterable[bytes], structured: Iterable[int], limits: RequestLimits
) -> bool:
    """Whether the raw subscriptions' sizes (``_size_bound``), with the structured members'
    owned partitions (``structured``, per member), keep the request's owned partitions and
    every member's topics within ``limits``, so that no raw subscription needs walking
    (a structured member's ``raw`` is empty)."""
    sizes = list(map(len, raw))
    raw_bound = sum(map(_size_bound_of_length, sizes)) if any(sizes) else 0  # none raw: 0
    owned = sum(structured) + raw_bound
    return owned <= limits.owned_partitions and max(sizes, default=0) // 2 <= limits.partitions


def _size_bound_of_length(size: int) -> int:
    return size // 4


def _size_bound(raw: bytes) -> int:
    """At most this many owned partitions (or entries), and half as many subscribed topics, fit
    in a raw subscription of this size: a partition takes 4 bytes, an entry 6, a topic 2. When
    the bounds are within the limits, walking the bytes (16 us for 50 topics) is not needed."""
    return _size_bound_of_length(len(raw))


def check_racks(racks: Iterable[str], limits: RequestLimits, *, field: str) -> None:
    """The distinct rack ids of the metadata's replicas."""
    check_text(max(racks, key=len, default=""), limits, field=field)


def answer_bytes(
    group: ConsumerGroup, *, compact: bool = False, assignment_bytes: bool = True
) -> int:
    """The answer's size, from what it must hold for every partition of a subscribed topic: in
    the v1 form a ``TopicPartition`` entry (in its member's partitions, or, withheld, in its
    owner's revoked ones) and its number in the member's ConsumerProtocolAssignment; in the
    compact form (``compact_answer``) its number, packed in its member's runs, and in the bytes
    only when they are asked for. Ids, topic names, reports and framing come on top."""
    subscribed = subscribed_topics(group.members)  # each shared topic list read once
    assigned = _ASSIGNED_BYTES if assignment_bytes else 0
    return sum(
        _numbers_bytes(topic.partitions) + assigned * topic.partitions
        if compact
        else _topic_bytes(name, topic.partitions)
        for name, topic in group.topics.items()
        if name in subscribed
    )


def _varint_runs(low: int, count: int) -> Iterator[tuple[int, int]]:
    """Partition numbers ``low`` to ``count - 1`` by varint size: (size, how many)."""
    while low < count:
        size = varint_bytes(low)
        high = min(count, 1 << (7 * size))
        yield size, high - low
        low = high


@functools.lru_cache(maxsize=1024)
def _numbers_bytes(count: int) -> int:
    """Partition numbers 0 to ``count - 1`` as packed varints (a cluster's topics have a few
    partition counts: each summed once per process)."""
    return sum(size * n for size, n in _varint_runs(0, count))


def _topic_bytes(name: str, count: int) -> int:
    """A topic's ``count`` partitions as ``TopicPartition`` entries plus their numbers in the
    assignment bytes, summed by runs of partition numbers of one varint size."""
    if count == 0:
        return 0
    length = len(name.encode("utf-8"))
    head = 1 + varint_bytes(length) + length
    first = entry_bytes(head) + _ASSIGNED_BYTES  # partition 0: proto3 leaves the number out
    return first + sum(
        n * (entry_bytes(head + 1 + size) + _ASSIGNED_BYTES) for size, n in _varint_runs(1, count)
    )


def check_answer(
    group: ConsumerGroup, limits: RequestLimits, *, compact: bool, assignment_bytes: bool
) -> None:
    """Refuse a group whose answer, in the form asked for, would be larger than the server may
    send."""
    estimate = answer_bytes(group, compact=compact, assignment_bytes=assignment_bytes)
    if estimate > limits.answer_bytes:
        partitions = sum(t.partitions for t in group.topics.values())
        raise LimitExceeded(
            f"the answer would take at least {estimate:,} bytes ({partitions:,} partitions, "
            f"{len(group.members):,} members), more than the largest message, "
            f"{limits.answer_bytes:,} bytes",
            limit="answer_bytes",
            field="topics",
        )
