"""A request's members read field by field for the whole group, each field once (issue 24).

A protobuf accessor costs a fraction of a microsecond, but a Python step per member and field
costs several times that: reading a fresh 800-member group member by member, once for the
owned partitions, once for the limits and once for the model, was most of its call's decode.
Here each field is one C loop over the group (``map`` over an attribute getter) and the limits
(``limits``), the owned partitions' read (``owned_wire``), the capacities and the members
(``members``) share the columns.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from kassign.v1 import assignment_pb2 as pb

__all__ = ["MemberColumns", "member_columns"]

_MEMBER_ID = operator.attrgetter("member_id")
_INSTANCE_ID = operator.attrgetter("group_instance_id")
_KIND = operator.methodcaller("WhichOneof", "kind")
_SUBSCRIPTION = operator.attrgetter("subscription")
_RAW = operator.attrgetter("raw_subscription")
_USER_DATA = operator.methodcaller("WhichOneof", "user_data")
_HAS_LIST = operator.methodcaller("HasField", "topic_list")
_LIST = operator.attrgetter("topic_list")
_TOPICS = operator.attrgetter("topics")
_OWNED = operator.attrgetter("owned_partitions")
_BY_TOPIC = operator.attrgetter("owned_by_topic")
_RACK_ID = operator.attrgetter("rack_id")


@dataclass(frozen=True, slots=True)
class MemberColumns:
    """Per member (index = its place in the request) each field the decoder reads. A raw
    member's ``subscriptions`` entry is an empty subscription (protobuf reads an unset
    message so), whose columns are empty, zero or unset; a structured member's ``raw`` is
    empty."""

    members: Sequence[pb.MemberSubscription]
    ids: list[str]
    instance_ids: list[str]
    kinds: list[str | None]  # "subscription", "raw_subscription", or None: neither set
    subscriptions: list[pb.ConsumerSubscription]
    raw: list[bytes]
    user_data: list[str | None]  # which of the ``user_data`` oneof is set
    has_list: list[bool]  # ``topic_list`` set
    lists: list[int]  # ``topic_list``'s value (0 when unset)
    topic_counts: list[int]  # ``topics``' length
    owned_counts: list[int]  # ``owned_partitions``' length
    by_topic: list[int]  # ``owned_by_topic``'s entries
    racks: list[str]


def member_columns(members: Sequence[pb.MemberSubscription]) -> MemberColumns:
    """The columns of ``members``, each read by one C loop."""
    subs = list(map(_SUBSCRIPTION, members))
    return MemberColumns(
        members=members,
        ids=list(map(_MEMBER_ID, members)),
        instance_ids=list(map(_INSTANCE_ID, members)),
        kinds=list(map(_KIND, members)),
        subscriptions=subs,
        raw=list(map(_RAW, members)),
        user_data=list(map(_USER_DATA, subs)),
        has_list=list(map(_HAS_LIST, subs)),
        lists=list(map(_LIST, subs)),
        topic_counts=list(map(len, map(_TOPICS, subs))),
        owned_counts=list(map(len, map(_OWNED, subs))),
        by_topic=list(map(len, map(_BY_TOPIC, subs))),
        racks=list(map(_RACK_ID, subs)),
    )
