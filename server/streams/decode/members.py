"""One member's subscription, whichever way it arrived, as a ``DecodedMember``.

Three shapes reach us: a structured ``ConsumerSubscription`` with a structured
``SubscriptionInfo``; the same with ``info_bytes`` (Kafka Streams' userData); or the whole
``raw_subscription`` (Kafka's ConsumerProtocolSubscription). The byte shapes are decoded by
``kassign.kafka`` and turned into the structured messages first, so all three meet in one checked
path and a request gives the same answer however it was sent.
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Iterable
from uuid import UUID

import numpy as np
from kassign.assignor.claims import OwnedPartitions, TopicPartition
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import TaskId
from kassign.kafka.buffer import TopicPartitionRuns, WireError
from kassign.kafka.consumer_protocol import SubscriptionDecoder
from kassign.kafka.subscription_info import (
    LATEST_VERSION,
    decode_subscription_columns,
    decode_subscription_info,
    peek_versions,
)
from kassign.server.streams.decode.info import InfoReports, info_identity, info_report
from kassign.server.streams.decode.kafka_bytes import info_to_pb, subscription_to_pb
from kassign.server.streams.decode.offset_sums import ReportedSums, checked_columns
from kassign.server.streams.decode.topology import TaskIds
from kassign.v1 import assignment_pb2 as pb

__all__ = ["DecodedMember", "TopicPartition", "decode_member"]


@dataclasses.dataclass(frozen=True, slots=True)
class DecodedMember:
    """What one member told the leader, checked; offset sums as reported (v1-6: -2 / -3) of
    the topology's tasks, the others counted (``ignored_sums``) and the first few named.

    The request decoder builds the clients from these, and the response encoder and the CLI read
    them back (ids, ownership, rack, versions) for the per-member answer.
    """

    member_id: str
    group_instance_id: str | None
    process_id: UUID
    topics: tuple[str, ...]
    owned_partitions: OwnedPartitions  # sorted, one entry per topic
    generation_id: int | None
    rack_id: str | None
    version: int
    latest_supported_version: int
    user_end_point: str | None
    offset_sums: tuple[tuple[TaskId, int], ...]  # in task order, however the wire grouped them
    ignored_sums: int  # offset sums of tasks the topology lacks (every sum kept without one)
    ignored_first: tuple[TaskId, ...]  # the first ``offset_sums.LISTED`` of those, in task order
    client_tags: tuple[tuple[str, str], ...]  # sorted by key
    unique_field: int
    error_code: int
    # Where this member's fields sit in the request, for errors found later (per process); how
    # the member was sent is not part of what it said, so these take no part in equality.
    subscription_field: str = dataclasses.field(default="subscription", compare=False, repr=False)
    info_field: str = dataclasses.field(default="subscription.info", compare=False, repr=False)


def _owned(pairs: Iterable[tuple[str, int]], field: str, member: str) -> OwnedPartitions:
    """Checked one by one, in claim order: the first bad or repeated partition is named."""
    owned = set()
    for topic, partition in pairs:
        if not topic or partition < 0:
            raise InvalidRequest(
                f"bad owned partition {topic!r}-{partition}",
                field=f"{field}.owned_partitions",
                member=member,
            )
        key = TopicPartition(topic, partition)
        if key in owned:
            raise InvalidRequest(
                f"partition {topic}-{partition} owned twice",
                field=f"{field}.owned_partitions",
                member=member,
            )
        owned.add(key)
    return OwnedPartitions.sorted_from(owned)


def _compact_owned(runs: TopicPartitionRuns) -> OwnedPartitions | None:
    """A raw subscription's owned partitions sorted per topic without an object per partition
    (issue 16), or ``None`` if any is bad or repeated (``_owned`` then names the first)."""
    by_topic: dict[str, list[array[int]]] = {}
    for topic, numbers in runs.entries():
        if numbers:
            by_topic.setdefault(topic, []).append(numbers)
    if "" in by_topic:
        return None
    entries = []
    for topic in sorted(by_topic):
        values = np.sort(np.concatenate([np.frombuffer(r, dtype=np.intc) for r in by_topic[topic]]))
        if values[0] < 0 or np.any(values[1:] == values[:-1]):
            return None
        entries.append((topic, array("i", values.tobytes())))
    return OwnedPartitions(entries)


def _owned_of(
    sub: pb.ConsumerSubscription, runs: TopicPartitionRuns | None, field: str, member: str
) -> OwnedPartitions:
    if runs is None:
        if not sub.owned_partitions:  # none owned (a first join, say): 1-3 us a member less
            return OwnedPartitions()
        return _owned(((tp.topic, tp.partition) for tp in sub.owned_partitions), field, member)
    return _compact_owned(runs) or _owned(runs.pairs(), field, member)


def _generation(sub: pb.ConsumerSubscription, field: str, member: str) -> int | None:
    if not sub.HasField("generation_id") or sub.generation_id == -1:
        return None
    if sub.generation_id < 0:
        raise InvalidRequest(
            f"generation id {sub.generation_id} (only -1, unknown, may be negative)",
            field=f"{field}.generation_id",
            member=member,
        )
    return sub.generation_id


def _info_bytes(
    data: bytes, field: str, member: str, known: TaskIds | None
) -> tuple[pb.SubscriptionInfo, ReportedSums | None]:
    """Streams' userData decoded, its offset sums checked as columns where they can be (the
    message then carries none, issue 27); a newer version is named with its latest supported
    version."""
    try:
        read = decode_subscription_columns(data)
    except WireError:
        read = None  # the read below names the fault
    reported = checked_columns(read[1], known) if read is not None else None
    if read is not None and reported is not None:
        return info_to_pb(read[0]), reported
    try:
        return info_to_pb(decode_subscription_info(data)), None
    except WireError as exc:
        versions = peek_versions(data)
        if versions is not None and versions[0] > LATEST_VERSION:
            return pb.SubscriptionInfo(
                version=versions[0], latest_supported_version=versions[1]
            ), None
        raise InvalidRequest(str(exc), field=field, member=member) from exc


def _structured(
    member: pb.MemberSubscription,
) -> tuple[pb.ConsumerSubscription, str, TopicPartitionRuns | None]:
    """The member's ConsumerSubscription and the field path its userData sits at; a raw
    subscription's owned partitions apart, as read (never a message per partition)."""
    kind = member.WhichOneof("kind")
    if kind is None:
        raise InvalidRequest(
            "neither subscription nor raw_subscription is set",
            field="kind",
            member=member.member_id,
        )
    if kind == "subscription":
        given = member.subscription
        if given.HasField("topic_list") or given.owned_by_topic:  # issue 24's, consumer groups only
            name = "topic_list" if given.HasField("topic_list") else "owned_by_topic"
            raise InvalidRequest(
                f"{name} is ConsumerAssignmentService's; send topics and owned_partitions",
                field=f"subscription.{name}",
                member=member.member_id,
            )
        if given.HasField("capacity"):  # issue 25's, consumer groups only
            raise InvalidRequest(
                "capacity is ConsumerAssignmentService's; a client's capacity is its threads",
                field="subscription.capacity",
                member=member.member_id,
            )
        return given, "subscription", None
    try:
        sub, runs = SubscriptionDecoder().decode_runs(member.raw_subscription)
        return subscription_to_pb(sub), "raw_subscription", runs
    except WireError as exc:
        raise InvalidRequest(str(exc), field="raw_subscription", member=member.member_id) from exc


def _user_data(
    sub: pb.ConsumerSubscription, field: str, member: str
) -> tuple[pb.SubscriptionInfo | bytes, str]:
    """The member's ``SubscriptionInfo``, structured or as Kafka's bytes, and its field path."""
    which = sub.WhichOneof("user_data")
    if which == "info":
        return sub.info, f"{field}.info"
    if which == "info_bytes":
        name = (
            "raw_subscription.user_data" if field == "raw_subscription" else f"{field}.info_bytes"
        )
        return sub.info_bytes, name
    name = "raw_subscription.user_data" if field == "raw_subscription" else f"{field}.info"
    raise InvalidRequest("no Kafka Streams userData (SubscriptionInfo)", field=name, member=member)


def _cache_key(user_data: pb.SubscriptionInfo | bytes, field: str) -> bytes:
    """``InfoReports``' key: the field path and the info (bytes by their digest: the cache
    must not hold a second copy of a userData of millions of offset sums)."""
    if isinstance(user_data, bytes):
        return field.encode() + b"\1" + hashlib.blake2b(user_data).digest()
    return field.encode() + b"\0" + user_data.SerializeToString()


def decode_member(
    member: pb.MemberSubscription,
    known: TaskIds | None = None,
    infos: InfoReports | None = None,
) -> DecodedMember:
    """A member, checked, or ``InvalidRequest`` naming the member and the field at fault.

    ``known`` (``Topology.interned``) shares task id objects across the request; ``infos``
    (one empty dict per request) lets the threads of one process share one checked userData.
    Checks run in one fixed order (info identity, owned partitions, generation, the rest of the
    info), so the error named does not depend on what was cached.
    """
    mid = member.member_id
    if not mid:
        raise InvalidRequest("member id is empty", field="member_id")
    sub, field, runs = _structured(member)
    user_data, info_field = _user_data(sub, field, mid)
    key = _cache_key(user_data, info_field) if infos is not None else b""
    checked = infos.get(key) if infos is not None else None
    if checked is None:
        info, reported = (
            _info_bytes(user_data, info_field, mid, known)
            if isinstance(user_data, bytes)
            else (user_data, None)
        )
        identity = info_identity(info, info_field, mid)
        owned, generation = _owned_of(sub, runs, field, mid), _generation(sub, field, mid)
        checked = info_report(info, identity, info_field, mid, known, reported)
        if infos is not None:
            infos[key] = checked
    else:
        owned, generation = _owned_of(sub, runs, field, mid), _generation(sub, field, mid)
    return DecodedMember(
        member_id=mid,
        group_instance_id=member.group_instance_id or None,
        process_id=checked.process_id,
        topics=tuple(sub.topics),
        owned_partitions=owned,
        generation_id=generation,
        rack_id=sub.rack_id or None,
        version=checked.version,
        latest_supported_version=checked.latest_supported_version,
        user_end_point=checked.user_end_point,
        offset_sums=checked.offset_sums.kept,
        ignored_sums=checked.offset_sums.ignored,
        ignored_first=checked.offset_sums.ignored_first,
        client_tags=checked.client_tags,
        unique_field=checked.unique_field,
        error_code=checked.error_code,
        subscription_field=field,
        info_field=info_field,
    )
