"""A Streams request's members read by the compiled core, every member at once (issue 24).

``members.decode_member`` walks a member through protobuf's accessors and checks its
``SubscriptionInfo`` field by field, one Python step each: half of a 10,000-task,
2,000-member call's decode. The compiled read (``kassign_native.streams_members``,
``assignor/native/src/streams_members.rs``) takes every member's fields from the request's
bytes at once and checks them as that walk does; here they become the same ``DecodedMember``s,
made a field at a time (``slotted.made_by_field``), a userData's fields once per distinct
userData, every one's offset sums checked at once. It takes only the common shape (a structured
subscription, a v7-11 userData without task lists or named topologies) and only a request the
walk would not refuse: where any member is otherwise, or a string or count comes near the
server's limits, ``read_members`` (or ``decoded_members``) says ``None`` and the walk reads the
whole request, so every error is still the walk's, worded and ordered as before.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING
from uuid import UUID

import kassign_native  # the server's compiled core
from kassign.assignor.claims import OwnedPartitions
from kassign.assignor.slotted import made_by_field
from kassign.server.limits import RequestLimits
from kassign.server.streams.decode.members import DecodedMember
from kassign.server.streams.decode.offset_sums import CheckedGroups, checked_groups, joined_columns
from kassign.server.streams.decode.topology import TaskIds

if TYPE_CHECKING:
    from kassign_native import StreamsInfo

__all__ = ["MemberRead", "decoded_group", "decoded_members", "read_members"]

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
    counts, numbers = array("q"), array("i")
    assert entries is not None
    counts.frombytes(entries[1])
    numbers.frombytes(entries[2])
    return OwnedPartitions.of_entries(entries[0], counts, numbers)


def _checked_sums(infos: list[StreamsInfo], known: TaskIds) -> CheckedGroups | None:
    """Every userData's offset sums checked and cut to the topology, one report each, as
    one set of columns; ``None`` where some hold a fault."""
    sub, part, sums, sizes = joined_columns([info[8] for info in infos])
    return checked_groups(sub, part, sums, sizes, known)


def decoded_group(
    read: MemberRead, known: TaskIds
) -> tuple[tuple[DecodedMember, ...], CheckedGroups] | None:
    """``decoded_members``, and every distinct userData's checked offset sums as columns
    (each member's ``offset_sums`` is its userData's ``CheckedGroups.kept`` entry, itself)."""
    if len(set(read.ids)) != len(read.ids):
        return None
    sums = _checked_sums(read.infos, known)
    if sums is None:
        return None
    fields, versions, latests, processes, end_points, uniques, errors, tags, _ = (
        zip(*read.infos) if read.infos else ((),) * 9
    )

    def per_member(values: Sequence[object]) -> list[object]:
        return list(map(values.__getitem__, read.info_of))

    empty = OwnedPartitions()  # one for the members owning nothing
    count = len(read.ids)
    columns: dict[str, Sequence[object]] = {
        "member_id": read.ids,
        "group_instance_id": [i or None for i in read.instance_ids],
        "process_id": per_member([UUID(int=p) for p in processes]),
        "topics": read.topics,
        "owned_partitions": [empty if o is None else _owned(o) for o in read.owned],
        "generation_id": read.generations,
        "rack_id": [r or None for r in read.racks],
        "version": per_member(versions),
        "latest_supported_version": per_member(latests),
        "user_end_point": per_member([e or None for e in end_points]),
        "offset_sums": per_member(sums.kept),
        "ignored_sums": per_member(sums.ignored),
        "ignored_first": per_member(sums.ignored_first),
        "client_tags": per_member(tags),
        "unique_field": per_member(uniques),
        "error_code": per_member(errors),
        "subscription_field": ["subscription"] * count,
        "info_field": per_member([_FIELDS[f] for f in fields]),
    }
    members = made_by_field(DecodedMember, columns, count)
    members.sort(key=attrgetter("member_id"))
    return tuple(members), sums


def decoded_members(read: MemberRead, known: TaskIds) -> tuple[DecodedMember, ...] | None:
    """The members as ``members.decode_member`` makes them, sorted by member id; ``None``
    where the walk must read them (a member id twice, a fault in some offset sums). Each
    field is a column: the userData's, one value per distinct userData, indexed by member."""
    group = decoded_group(read, known)
    return None if group is None else group[0]
