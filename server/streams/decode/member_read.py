"""A Streams request's members read by the compiled core, every member at once (issue 24).

``members.decode_member`` walks a member through protobuf's accessors and checks its
``SubscriptionInfo`` field by field, one Python step each: half of a 10,000-task,
2,000-member call's decode. The compiled read (``kassign_native.streams_members``,
``assignor/native/src/streams_members.rs``) takes every member's fields from the request's
bytes at once and checks them as that walk does; here they become the same ``DecodedMember``s,
one ``InfoReport`` per distinct userData. It takes only the common shape (a structured
subscription, a v7-11 userData without task lists or named topologies) and only a request the
walk would not refuse: where any member is otherwise, or a string or count comes near the
server's limits, ``read_members`` (or ``decoded_members``) says ``None`` and the walk reads the
whole request, so every error is still the walk's, worded and ordered as before.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

import kassign_native  # the server's compiled core
from kassign.assignor.claims import OwnedPartitions
from kassign.assignor.interrupt import checkpoint
from kassign.kafka.offset_sum_columns import sum_columns
from kassign.server.limits import RequestLimits
from kassign.server.streams.decode.info import InfoReport
from kassign.server.streams.decode.members import DecodedMember
from kassign.server.streams.decode.offset_sums import ReportedSums, checked_columns
from kassign.server.streams.decode.topology import TaskIds

if TYPE_CHECKING:
    from kassign_native import StreamsInfo

__all__ = ["MemberRead", "decoded_members", "read_members"]

_NO_SUMS = ReportedSums(())
"""A userData without offset sums (a fresh group's): one, not a check of empty columns each."""

_FIELDS = {5: "subscription.info", 6: "subscription.info_bytes"}
"""The userData's field path by its field number, as the walk names it."""


Owned = tuple[tuple[str, ...], bytes, bytes] | None
"""A member's owned partitions as read: ``None``, or topics, int64 counts, int32 numbers."""


@dataclass(frozen=True, slots=True)
class MemberRead:
    """The compiled read's columns (``kassign_native.streams_members``), one entry a member
    in request order, and the distinct userData the members index."""

    ids: list[str]
    instance_ids: list[str]
    topics: list[tuple[str, ...]]
    racks: list[str]
    generations: list[int | None]
    owned: list[Owned]
    info_of: list[int]
    infos: list[StreamsInfo]


def read_members(data: bytes, limits: RequestLimits) -> MemberRead | None:
    """The request's members as the compiled core read them, or ``None`` where the walk must
    read them: a member of another shape, a fault, or a string or count past ``limits`` (the
    walk's checks then name it)."""
    read = kassign_native.streams_members(data)
    if read is None or not read[0]:  # none: the walk refuses the group
        return None
    ids, instances, topics, racks, generations, owned, info_of, infos, *sizes = read
    longest, owned_count, reported = sizes
    if longest > limits.string_bytes or owned_count > limits.owned_partitions:
        return None
    if reported > limits.reported_tasks:
        return None
    return MemberRead(ids, instances, topics, racks, generations, owned, info_of, infos)


def _owned(entries: Owned) -> OwnedPartitions:
    if entries is None:
        return OwnedPartitions()
    counts, numbers = array("q"), array("i")
    counts.frombytes(entries[1])
    numbers.frombytes(entries[2])
    return OwnedPartitions.of_entries(entries[0], counts, numbers)


def _reports(infos: list[StreamsInfo], known: TaskIds) -> list[InfoReport] | None:
    """One report per distinct userData; ``None`` where its offset sums hold a fault."""
    reports = []
    for _, version, latest, process, end_point, unique, error, tags, sums in infos:
        offset_sums = checked_columns(sum_columns(sums), known) if sums else _NO_SUMS
        if offset_sums is None:
            return None
        reports.append(
            InfoReport(
                process_id=UUID(int=process),
                version=version,
                latest_supported_version=latest,
                user_end_point=end_point or None,
                offset_sums=offset_sums,
                client_tags=tags,
                unique_field=unique,
                error_code=error,
            )
        )
    return reports


def decoded_members(read: MemberRead, known: TaskIds) -> tuple[DecodedMember, ...] | None:
    """The members as ``members.decode_member`` makes them, sorted by member id; ``None``
    where the walk must read them (a member id twice, a fault in some offset sums)."""
    if len(set(read.ids)) != len(read.ids):
        return None
    reports = _reports(read.infos, known)
    if reports is None:
        return None
    fields = [_FIELDS[info[0]] for info in read.infos]
    out = []
    columns = zip(
        read.ids,
        read.instance_ids,
        read.topics,
        read.racks,
        read.generations,
        read.owned,
        read.info_of,
        strict=True,
    )
    for i, (mid, instance, topics, rack, generation, owned, info) in enumerate(columns):
        if not i % 256:
            checkpoint()
        checked = reports[info]
        sums = checked.offset_sums
        out.append(
            DecodedMember(
                member_id=mid,
                group_instance_id=instance or None,
                process_id=checked.process_id,
                topics=topics,
                owned_partitions=_owned(owned),
                generation_id=generation,
                rack_id=rack or None,
                version=checked.version,
                latest_supported_version=checked.latest_supported_version,
                user_end_point=checked.user_end_point,
                offset_sums=sums.kept,
                ignored_sums=sums.ignored,
                ignored_first=sums.ignored_first,
                client_tags=checked.client_tags,
                unique_field=checked.unique_field,
                error_code=checked.error_code,
                subscription_field="subscription",
                info_field=fields[info],
            )
        )
    return tuple(sorted(out, key=lambda r: r.member_id))
