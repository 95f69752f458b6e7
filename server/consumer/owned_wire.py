"""A compact request's owned partitions (``owned_by_topic``, issue 24), every member's at once.

Read entry by entry through protobuf's accessors, a rejoining group's claims cost a microsecond
or more an entry (40,000 entries for 800 members: most of a ``cooperative-sticky`` call). The
members' read (``member_columns``) hands each member's ``owned_by_topic`` fields over as they
came in the request's bytes, and the compiled core reads the whole group's entries from them
into columns (``kassign_native.owned_by_topic``, ``assignor/native/src/owned.rs``), the one
reader of ``owned_by_topic``. A member's claims come
back as ``OwnedPartitions`` sorted as Kafka's leader reads them: kept as sent when already
sorted (one entry per topic, numbers ascending, as Kafka's encoder writes them), sorted
otherwise, as ``owned_partitions`` is.
"""

from __future__ import annotations

from collections.abc import Sequence

import kassign_native
from kassign.assignor.claims import OwnedPartitions
from kassign.kafka.runs import runs_of_columns
from kassign.server.consumer.member_columns import MemberColumns, member_columns, request_bytes
from kassign.v1 import assignment_pb2 as pb

__all__ = ["OwnedByTopic", "claims_of", "owned_by_topic", "owned_of"]

OwnedByTopic = list[OwnedPartitions | None]
"""Per member its claims from ``owned_by_topic``; ``None`` where it sent none there."""


def owned_by_topic(members: Sequence[pb.MemberSubscription]) -> OwnedByTopic:
    """Each member's ``owned_by_topic`` as sorted claims (``None``: raw, or none sent)."""
    return owned_of(member_columns(request_bytes(members), members))


def owned_of(columns: MemberColumns) -> OwnedByTopic:
    """``owned_by_topic`` of the members whose columns these are (a raw member sent none)."""
    if not any(columns.by_topic):
        return [None] * len(columns.by_topic)
    return claims_of(columns.by_topic_bytes)


def claims_of(sent: list[bytes | None]) -> OwnedByTopic:
    """Each member's ``ConsumerSubscription`` bytes, or its ``owned_by_topic`` fields alone
    (``None``: none), read for its ``owned_by_topic``;
    ``ValueError`` where they are not protobuf (never bytes protobuf serialised)."""
    names, ascending, *columns = kassign_native.owned_by_topic(sent)
    owned = runs_of_columns(names, *columns, make=OwnedPartitions.of_entries)
    return [
        None if data is None else _sorted(claims, ok)
        for data, claims, ok in zip(sent, owned, ascending, strict=True)
    ]


def _sorted(owned: OwnedPartitions, ascending: bool) -> OwnedPartitions:
    return owned if ascending else OwnedPartitions.sorted_from(owned)
