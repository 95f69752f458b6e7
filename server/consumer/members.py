"""A request's members as the library's ``Member``s, each field read for the whole group at once.

Read member by member, a structured member cost a dozen protobuf accessor reads and as many
Python calls (about 5 us: half of a fresh 800-member call's decode, issue 24). Here the fields
come as the group's columns, read from the request's bytes by the compiled core
(``member_columns``), the members at fault are found from those columns, and the ``Member``s
are made a field at a time (``members_of_fields``: no ``__init__`` call per member). The first
member at fault is named, with the fault a walk in member order would find first (``_fault``).
A raw member (``raw_subscription``) is read by Kafka's reader (``SubscriptionDecoder``), in its
place.

A structured subscription is read as Kafka's leader would read it after the wire: topics sorted
(or the shared, sorted list ``topic_list`` names) and owned partitions sorted
(``owned_by_topic``'s as the group's compiled read gave them, ``owned_wire``).
"""

from __future__ import annotations

from collections.abc import Sequence

from kassign.assignor.consumer.member_fields import members_of_fields
from kassign.assignor.consumer.model import DEFAULT_GENERATION, Member, OwnedPartitions
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_protocol import SubscriptionDecoder
from kassign.server.consumer.member_columns import MemberColumns
from kassign.server.consumer.owned_wire import OwnedByTopic
from kassign.server.consumer.request_paths import used_fields
from kassign.v1 import assignment_pb2 as pb

__all__ = ["DecodedMembers", "decode_members"]

DecodedMembers = tuple[list[Member], dict[str, str], dict[str, frozenset[str]]]
"""The members; per member id the request path of its user data (the first member with that
id); per member id that sent ``topic_list`` or ``owned_by_topic``, which (errors name them)."""

_PATHS = {
    None: "subscription.user_data_bytes",
    "user_data_bytes": "subscription.user_data_bytes",
    "info_bytes": "subscription.info_bytes",
    "info": "subscription.info",
}
_RAW_PATH = "raw_subscription.user_data"


def decode_members(
    columns: MemberColumns,
    topic_lists: Sequence[tuple[str, ...]],
    claims: OwnedByTopic,
    decoder: SubscriptionDecoder | None = None,
) -> DecodedMembers:
    """Every member, or ``InvalidRequest`` naming the first member at fault; ``columns`` the
    request's members read for the group (``member_columns``), ``topic_lists`` its shared
    subscriptions, sorted; ``claims`` each member's ``owned_by_topic`` as the group's read
    gave it (``owned_wire``); ``decoder`` reads raw subscriptions (one per request: members
    share their topic lists)."""
    if _plain_compact(columns, claims, len(topic_lists)):
        return _plain_members(columns, topic_lists)
    ids, kinds, which = columns.ids, columns.kinds, columns.user_data
    has_list, indexes, owned_counts = columns.has_list, columns.lists, columns.owned_counts
    lists = len(topic_lists)
    suspects = [
        i
        for i, (who, kind, data, listed, index, topics, owned, by_topic) in enumerate(
            zip(ids, kinds, which, has_list, indexes, columns.topic_counts, owned_counts, claims)
        )
        if not who
        or kind is None
        or data == "info"
        or (listed and (topics or not 0 <= index < lists))
        or (owned and by_topic is not None)
    ]
    first = suspects[0] if suspects else len(ids)
    raw = _raw_members(columns, first, decoder or SubscriptionDecoder())
    if suspects:
        _fault(columns.members[first], lists)
    nothing = OwnedPartitions()  # a fresh member's claims: one empty object for the group
    members = columns.members
    built = members_of_fields(  # a column per field (a raw member's are empty: replaced below)
        ids,
        topics=[
            topic_lists[index] if listed else tuple(sorted(topics))
            for listed, index, topics in zip(has_list, indexes, columns.topics)
        ],
        group_instance_id=[instance or None for instance in columns.instance_ids],
        rack_id=[rack or None for rack in columns.racks],
        owned_partitions=[
            by_topic
            if by_topic is not None
            else _owned_partitions(members[i])
            if owned
            else nothing
            for i, (owned, by_topic) in enumerate(zip(owned_counts, claims))
        ],
        generation=[DEFAULT_GENERATION if g is None else g for g in columns.generations],
        user_data=columns.user_data_bytes,
    )
    for i, member in raw.items():
        built[i] = member
    paths = [
        _PATHS[data] if kind == "subscription" else _RAW_PATH for kind, data in zip(kinds, which)
    ]
    user_data_fields = dict(zip(reversed(ids), reversed(paths)))  # the first of an id wins
    compact: dict[str, frozenset[str]] = {}
    for who, kind, listed, by_topic in zip(ids, kinds, has_list, claims):
        if kind == "subscription" and (listed or by_topic is not None):
            compact.setdefault(who, used_fields(listed, by_topic is not None))
    return built, user_data_fields, compact


def _plain_compact(columns: MemberColumns, claims: OwnedByTopic, lists: int) -> bool:
    """Whether every member is structured, names a shared topic list in range and sends no
    topics, no owned partitions (in either form), no Streams ``info``, and has an id: the
    plug-in's fresh group (issue 24), none at fault, read from the columns (C loops)."""
    ids, indexes = columns.ids, columns.lists
    return (
        bool(ids)
        and "" not in ids
        and columns.kinds.count("subscription") == len(ids)
        and "info" not in columns.user_data
        and columns.has_list.count(True) == len(ids)
        and not any(columns.topic_counts)
        and 0 <= min(indexes)
        and max(indexes) < lists
        and not any(columns.owned_counts)
        and claims.count(None) == len(ids)
    )


def _plain_members(
    columns: MemberColumns, topic_lists: Sequence[tuple[str, ...]]
) -> DecodedMembers:
    """``decode_members`` of a group ``_plain_compact`` found plain: each field's column made
    at once, the shared lists' tuples, one empty claims object, each missing value once."""
    ids, count = columns.ids, len(columns.ids)
    nothing = OwnedPartitions()  # a fresh member's claims: one empty object for the group
    generations = columns.generations
    built = members_of_fields(
        ids,
        topics=list(map(topic_lists.__getitem__, columns.lists)),
        group_instance_id=_or_none(columns.instance_ids),
        rack_id=_or_none(columns.racks),
        owned_partitions=[nothing] * count,
        generation=[DEFAULT_GENERATION] * count
        if generations.count(None) == count
        else [DEFAULT_GENERATION if g is None else g for g in generations],
        user_data=columns.user_data_bytes,
    )
    paths = list(map(_PATHS.__getitem__, columns.user_data))
    user_data_fields = dict(zip(reversed(ids), reversed(paths)))  # the first of an id wins
    return built, user_data_fields, dict.fromkeys(ids, used_fields(True, False))


def _or_none(texts: list[str]) -> list[str | None]:
    """Each text, ``None`` for an empty one (a field not set)."""
    return [None] * len(texts) if not any(texts) else [text or None for text in texts]


def _owned_partitions(sent: pb.MemberSubscription) -> OwnedPartitions:
    """A structured member's ``owned_partitions`` (the older form; the compact one sends
    ``owned_by_topic``), sorted."""
    return OwnedPartitions.sorted_from(
        (tp.topic, tp.partition) for tp in sent.subscription.owned_partitions
    )


def _raw_members(
    columns: MemberColumns, stop: int, decoder: SubscriptionDecoder
) -> dict[int, Member]:
    """The raw members before ``stop``, by index, read in member order (the first whose bytes
    are not a subscription is named)."""
    return {
        i: _raw(columns.ids[i], columns.instance_ids[i], columns.raw[i], decoder)
        for i, kind in enumerate(columns.kinds[:stop])
        if kind == "raw_subscription"
    }


def _raw(who: str, instance: str, data: bytes, decoder: SubscriptionDecoder) -> Member:
    try:
        sub, owned = decoder.decode_runs(data)
    except WireError as exc:
        raise InvalidRequest(str(exc), field="raw_subscription", member=who) from exc
    return Member(
        member_id=who,
        topics=sub.topics,
        group_instance_id=instance or None,
        rack_id=sub.rack_id or None,
        owned_partitions=OwnedPartitions.of_entries(owned.topics, owned.counts, owned.numbers),
        generation=sub.generation_id,
        user_data=sub.user_data,
    )


def _fault(sent: pb.MemberSubscription, lists: int) -> None:
    """Raise the first fault of a member the columns found at fault, in the order its fields
    are read: its id, which kind it is, its user data, its topics, its owned partitions."""
    who = sent.member_id
    if not who:
        raise InvalidRequest("member id is empty", field="member_id")
    if sent.WhichOneof("kind") is None:
        raise InvalidRequest(
            "neither subscription nor raw_subscription is set", field="kind", member=who
        )
    sub = sent.subscription
    if sub.WhichOneof("user_data") == "info":
        raise InvalidRequest(
            "structured Streams userData is not consumer user data; send the bytes "
            "(user_data_bytes)",
            field="subscription.info",
            member=who,
        )
    if sub.HasField("topic_list"):
        if sub.topics:
            raise InvalidRequest(
                "both topics and topic_list are set; send one",
                field="subscription.topic_list",
                member=who,
            )
        if not 0 <= sub.topic_list < lists:
            raise InvalidRequest(
                f"topic_list {sub.topic_list} is out of range: the request has {lists} topic_lists",
                field="subscription.topic_list",
                member=who,
            )
    if sub.owned_partitions and sub.owned_by_topic:
        raise InvalidRequest(
            "both owned_partitions and owned_by_topic are set; send one",
            field="subscription.owned_by_topic",
            member=who,
        )
    raise AssertionError("a member found at fault has none")  # pragma: no cover
