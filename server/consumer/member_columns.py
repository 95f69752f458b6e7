"""A request's members read field by field for the whole group, from the request's bytes (issue 24).

A protobuf accessor costs a fraction of a microsecond, but a Python step per member and field
costs several times that: read through the accessors, even one C loop (``map``) per field,
an 800-member group's fields took 1.7 ms of a fresh call's 6 ms decode, and a rejoining
group's ``owned_by_topic`` was serialised again per member to be read. The compiled core reads
every member's fields from the request's bytes in one pass instead
(``kassign_native.request_members``, ``assignor/native/src/members.rs``: protobuf's rules for
fields sent twice, oneofs and unknown fields), the one reader of them. The limits
(``limits``), the owned partitions' read (``owned_wire``), the capacities and the members
(``members``) share the columns; the messages (``members``) are read only on the paths that
name a member at fault, or for a structured member's ``owned_partitions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import kassign_native
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["MemberColumns", "member_columns", "request_bytes"]


@dataclass(frozen=True, slots=True)
class MemberColumns:
    """Per member (index = its place in the request) each field the decoder reads. A raw
    member's subscription columns are empty, zero or ``None`` (it sent none); a structured
    member's ``raw`` is empty."""

    members: Sequence[pb.MemberSubscription]  # the messages, for faults and the limits' walk
    ids: list[str]
    instance_ids: list[str]
    kinds: list[str | None]  # "subscription", "raw_subscription", or None: neither set
    raw: list[bytes]
    user_data: list[str | None]  # which of the ``user_data`` oneof is set
    user_data_bytes: list[bytes | None]  # its bytes (``info_bytes``, ``user_data_bytes``)
    has_list: list[bool]  # ``topic_list`` set
    lists: list[int]  # ``topic_list``'s value (0 when unset)
    topics: list[list[str]]  # ``topics``, as sent
    topic_counts: list[int]  # ``topics``' length
    owned_counts: list[int]  # ``owned_partitions``' length
    by_topic: list[int]  # ``owned_by_topic``'s entries
    by_topic_bytes: list[bytes | None]  # those entries as fields (``owned_wire`` reads them)
    racks: list[str]
    generations: list[int | None]  # ``generation_id``, ``None`` when unset
    capacities: list[float | None]  # ``capacity``, ``None`` when unset


def request_bytes(members: Sequence[pb.MemberSubscription]) -> bytes:
    """A request holding only ``members``, as bytes (for callers that have messages)."""
    return cpb.ConsumerAssignRequest(members=members).SerializeToString()


def member_columns(data: bytes, members: Sequence[pb.MemberSubscription]) -> MemberColumns:
    """The columns of a request's members: ``data`` the request's bytes (a
    ``ConsumerAssignRequest``'s, other fields skipped), ``members`` the same members parsed."""
    (
        ids,
        instance_ids,
        kinds,
        raw,
        user_data,
        user_data_bytes,
        lists,
        topics,
        owned_counts,
        by_topic,
        by_topic_bytes,
        racks,
        generations,
        capacities,
    ) = kassign_native.request_members(data)
    return MemberColumns(
        members=members,
        ids=ids,
        instance_ids=instance_ids,
        kinds=kinds,
        raw=raw,
        user_data=user_data,
        user_data_bytes=user_data_bytes,
        has_list=[index is not None for index in lists],
        lists=[index or 0 for index in lists],
        topics=topics,
        topic_counts=list(map(len, topics)),
        owned_counts=owned_counts,
        by_topic=by_topic,
        by_topic_bytes=by_topic_bytes,
        racks=racks,
        generations=generations,
        capacities=capacities,
    )
