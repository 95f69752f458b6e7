"""A ``ConsumerAssignRequest`` as the consumer library's input: ``ConsumerGroup`` + ``AssignOptions``.

Members arrive as the Streams room's ``MemberSubscription``, structured or as the raw
ConsumerProtocolSubscription (v0-3) a leader received at JoinGroup. A structured subscription
is read as Kafka's leader would read it after the wire: topics sorted and owned partitions
sorted (``ConsumerProtocol.serializeSubscription`` sorts both), so a structured member and its
raw bytes give the same answer. Raw bytes are read in wire order, as Kafka reads them.

A member's user data (the assignor's own bytes: the eager sticky assignor's previous
assignment, the cooperative one's generation) is ``user_data_bytes``, or the raw
subscription's userData. A Streams member's ``info_bytes`` are user data too, passed through
untouched (a Streams leader's raw subscription carries the same bytes as its userData, so both
ways agree); the structured ``info`` is refused, since no consumer assignor reads it and writing
it back as bytes would mean choosing a version for the caller.

Checks are the library's (``consumer_group``); its ``InvalidRequest`` names the model's field,
which ``request_paths.located`` turns into the request's path (``subscription.owned_partitions``,
``raw_subscription``) for the member at fault.
"""

from __future__ import annotations

import functools
import operator
import struct
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    AssignOptions,
    ConsumerGroup,
    Member,
    OwnedPartitions,
    Topic,
    consumer_group,
)
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.interrupt import checkpoint
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_protocol import SubscriptionDecoder
from kassign.server.consumer import limits as checks
from kassign.server.consumer.options import decode_options
from kassign.server.consumer.owned_wire import owned_by_topic
from kassign.server.consumer.request_paths import compact_fields, located
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits, check_text
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["DecodedConsumerRequest", "decode_member", "decode_request"]

_PARTITION_TAG = b"\x12"  # ConsumerTopic.partitions: field 2, length-delimited
_COMPILED_PIECES = 2048
_FIRST = operator.itemgetter(0)
_RACK_ID = operator.attrgetter("rack_id")
_SUBSCRIPTION = operator.attrgetter("subscription")


@dataclass(frozen=True, slots=True)
class DecodedConsumerRequest:
    """The request, checked: the group, the assignor's name and options, and where each
    member's subscription sat in the request (for errors the assignor finds later)."""

    group_id: str
    assignor: str
    group: ConsumerGroup
    options: AssignOptions
    options_set: bool = False  # the request set some option (Kafka's assignors ignore them)
    compact_answer: bool = False  # partitions as runs by topic (issue 24)
    assignment_bytes: bool = True  # Kafka's bytes per member (a compact answer's are asked for)
    user_data_fields: Mapping[str, str] = field(default_factory=dict, compare=False)
    # members that sent topic_list or owned_by_topic: their errors name those fields
    compact_fields: Mapping[str, frozenset[str]] = field(default_factory=dict, compare=False)
    loads_sent: bool = False  # partition loads or capacities came, whatever the balance (issue 25)
    # balance LOAD: where the loads came from ("request", "prometheus"; "": counts stood in) and
    # what the report says of them (source_loads.py)
    load_source: str = ""
    load_notes: tuple[str, ...] = ()


def decode_request(
    request: cpb.ConsumerAssignRequest, limits: RequestLimits = DEFAULT_LIMITS
) -> DecodedConsumerRequest:
    """The checked request, or ``InvalidRequest`` naming the field and the member at fault;
    ``limits`` are checked before decoding, and the answer's size before returning."""
    if not request.assignor:
        raise InvalidRequest("no assignor named", field="assignor")
    claims = owned_by_topic(request.members)
    checks.check_request(request, limits, [0 if c is None else len(c) for c in claims])
    members: list[Member] = []
    user_data_fields: dict[str, str] = {}
    compact_sent: dict[str, frozenset[str]] = {}
    decoder = SubscriptionDecoder()  # one per request: members share their topic lists
    lists = _topic_lists(request.topic_lists)
    for sent, owned in zip(request.members, claims, strict=True):
        checkpoint()
        member, user_data_field = decode_member(sent, decoder, lists, owned)
        members.append(member)
        user_data_fields.setdefault(member.member_id, user_data_field)
        used = compact_fields(sent)
        if used:
            compact_sent.setdefault(member.member_id, used)
    rack_sets: dict[bytes, frozenset[str]] = {}
    shared = [frozenset(r for r in racks.rack_ids if r) for racks in request.replica_rack_lists]
    topics = [
        _compact_topic(i, t, shared)
        if t.partition_count or t.replica_rack_list
        else _topic(t, rack_sets)
        for i, t in enumerate(request.topics)
    ]
    racks = set().union(*rack_sets.values(), *shared)
    checks.check_racks(racks, limits, field="topics")
    if max(map(len, filter(None, map(_RACK_ID, members))), default=0) * 4 > limits.string_bytes:
        for member in members:  # a rack may be too long: the first such member named
            where = user_data_fields[member.member_id].partition(".")[0]
            rack = member.rack_id or ""
            check_text(rack, limits, field=f"{where}.rack_id", member=member.member_id)
    with located(user_data_fields, compact_sent):
        group = consumer_group(members, topics)
    with_bytes = request.assignment_bytes or not request.compact_answer
    checks.check_answer(group, limits, compact=request.compact_answer, assignment_bytes=with_bytes)
    loads = {t.name: t.partition_loads for t in request.topics if t.partition_loads}
    capacities = _capacities(request.members)
    options = decode_options(request.options, request.assignor, loads=loads, capacities=capacities)
    return DecodedConsumerRequest(
        group_id=request.group_id,
        assignor=request.assignor,
        group=group,
        options=options,
        loads_sent=bool(loads or capacities),
        load_source="request" if options.loads else "",
        options_set=request.options.ByteSize() > 0,
        compact_answer=request.compact_answer,
        assignment_bytes=with_bytes,
        user_data_fields=user_data_fields,
        compact_fields=compact_sent,
    )


def _capacities(members: Iterable[pb.MemberSubscription]) -> dict[str, float]:
    """The capacities members sent (issue 25); the library checks them, naming the member."""
    return {  # a raw member's ``subscription`` reads as an empty one, without a capacity
        m.member_id: sub.capacity
        for m, sub in zip(members, map(_SUBSCRIPTION, members))
        if sub.HasField("capacity")
    }


def decode_member(
    sent: pb.MemberSubscription,
    decoder: SubscriptionDecoder | None = None,
    topic_lists: Sequence[tuple[str, ...]] = (),
    by_topic: OwnedPartitions | None = None,
) -> tuple[Member, str]:
    """One member, and the request path of its user data (``…user_data_bytes`` and the like);
    ``decoder`` reads raw subscriptions (one shared by a request's members), ``topic_lists``
    are the request's shared subscriptions, sorted (``_topic_lists``); ``by_topic`` its
    ``owned_by_topic`` as the group's read gave it (``owned_wire``), else read here."""
    who = sent.member_id
    if not who:
        raise InvalidRequest("member id is empty", field="member_id")
    instance = sent.group_instance_id or None
    kind = sent.WhichOneof("kind")
    if kind == "subscription":
        if by_topic is None and sent.subscription.owned_by_topic:
            (by_topic,) = owned_by_topic([sent])
        return _structured(who, instance, sent.subscription, topic_lists, by_topic)
    if kind == "raw_subscription":
        return _raw(who, instance, sent.raw_subscription, decoder or SubscriptionDecoder())
    raise InvalidRequest(
        "neither subscription nor raw_subscription is set", field="kind", member=who
    )


def _topic_lists(lists: Iterable[cpb.TopicList]) -> list[tuple[str, ...]]:
    """Each shared subscription sorted once; its members share the one tuple (the library
    checks and compares a list shared by members once)."""
    return [tuple(sorted(topics.topics)) for topics in lists]


def _topics(
    who: str, sub: pb.ConsumerSubscription, topic_lists: Sequence[tuple[str, ...]]
) -> tuple[str, ...]:
    """The member's topics, sorted: its own, or the shared list it names (issue 24)."""
    if not sub.HasField("topic_list"):
        return tuple(sorted(sub.topics))
    index = sub.topic_list
    if sub.topics:
        raise InvalidRequest(
            "both topics and topic_list are set; send one",
            field="subscription.topic_list",
            member=who,
        )
    if not 0 <= index < len(topic_lists):
        raise InvalidRequest(
            f"topic_list {index} is out of range: the request has {len(topic_lists)} topic_lists",
            field="subscription.topic_list",
            member=who,
        )
    return topic_lists[index]


def _owned(
    who: str, sub: pb.ConsumerSubscription, by_topic: OwnedPartitions | None
) -> OwnedPartitions:
    """The claims sorted, from ``owned_partitions`` or, packed, ``owned_by_topic`` (issue 24,
    ``by_topic``: read for the whole group at once, ``owned_wire``)."""
    if by_topic is None:
        if not sub.owned_partitions:  # a fresh member: nothing to sort
            return OwnedPartitions()
        return OwnedPartitions.sorted_from((tp.topic, tp.partition) for tp in sub.owned_partitions)
    if sub.owned_partitions:
        raise InvalidRequest(
            "both owned_partitions and owned_by_topic are set; send one",
            field="subscription.owned_by_topic",
            member=who,
        )
    return by_topic


def _structured(
    who: str,
    instance: str | None,
    sub: pb.ConsumerSubscription,
    topic_lists: Sequence[tuple[str, ...]] = (),
    by_topic: OwnedPartitions | None = None,
) -> tuple[Member, str]:
    which = sub.WhichOneof("user_data")
    user_data: bytes | None = None
    if which == "info":
        raise InvalidRequest(
            "structured Streams userData is not consumer user data; send the bytes "
            "(user_data_bytes)",
            field="subscription.info",
            member=who,
        )
    if which == "user_data_bytes":
        user_data = sub.user_data_bytes
    elif which == "info_bytes":
        user_data = sub.info_bytes
    member = Member(
        member_id=who,
        topics=_topics(who, sub, topic_lists),
        group_instance_id=instance,
        rack_id=sub.rack_id or None,
        owned_partitions=_owned(who, sub, by_topic),
        generation=sub.generation_id if sub.HasField("generation_id") else DEFAULT_GENERATION,
        user_data=user_data,
    )
    return member, f"subscription.{which or 'user_data_bytes'}"


def _raw(
    who: str, instance: str | None, data: bytes, decoder: SubscriptionDecoder
) -> tuple[Member, str]:
    try:
        sub, owned = decoder.decode_runs(data)
    except WireError as exc:
        raise InvalidRequest(str(exc), field="raw_subscription", member=who) from exc
    member = Member(
        member_id=who,
        topics=sub.topics,
        group_instance_id=instance,
        rack_id=sub.rack_id or None,
        owned_partitions=OwnedPartitions.of_entries(owned.topics, owned.counts, owned.numbers),
        generation=sub.generation_id,
        user_data=sub.user_data,
    )
    return member, "raw_subscription.user_data"


def _topic(topic: cpb.ConsumerTopic, rack_sets: dict[bytes, frozenset[str]]) -> Topic:
    """Racks per partition; a replica on a broker without a rack ("") adds none (KIP-881).

    A cluster has few distinct replica rack lists and a topic may have many thousand
    partitions, so each partition is read as its serialised ``PartitionReplicas`` and only the
    distinct ones are decoded; ``rack_sets`` (one per request, by those bytes) shares their sets.
    """
    pieces, distinct = _partition_records(topic) or _records_one_by_one(topic)
    table = {}
    for piece, record in distinct.items():
        found = rack_sets.get(record)
        if found is None:
            replicas = cpb.PartitionReplicas.FromString(record)
            found = rack_sets[record] = frozenset(r for r in replicas.rack_ids if r)
        table[piece] = found
    return Topic(topic.name, tuple(map(table.__getitem__, pieces)))


def _compact_topic(index: int, topic: cpb.ConsumerTopic, shared: Sequence[frozenset[str]]) -> Topic:
    """A topic sent as a count and an index per partition into the request's distinct replica
    rack lists (issue 24): no message per partition to read."""
    where = f"topics[{index}]"
    count, lists = topic.partition_count, topic.replica_rack_list
    if topic.partitions:
        raise InvalidRequest(
            "both partitions and partition_count are set; send one",
            field=f"{where}.partition_count",
        )
    if count < 0:
        raise InvalidRequest(
            f"partition_count {count} is negative", field=f"{where}.partition_count"
        )
    if not lists:
        return Topic(topic.name, (_NO_RACKS,) * count)
    if len(lists) != count:
        raise InvalidRequest(
            f"{len(lists)} replica rack lists for {count} partitions",
            field=f"{where}.replica_rack_list",
        )
    indexes = np.frombuffer(array("i", lists), dtype=np.intc)
    if int(indexes.min()) < 0 or int(indexes.max()) >= len(shared):
        raise InvalidRequest(
            f"a replica rack list index out of range: the request has {len(shared)} "
            "replica_rack_lists",
            field=f"{where}.replica_rack_list",
        )
    return Topic(topic.name, tuple(map(shared.__getitem__, indexes.tolist())))


_NO_RACKS: frozenset[str] = frozenset()

_Records = tuple[list[bytes], dict[bytes, bytes]]
"""Per partition a piece of bytes, and each distinct piece's ``PartitionReplicas`` bytes."""


def _records_one_by_one(topic: cpb.ConsumerTopic) -> _Records:
    records = [p.SerializeToString() for p in topic.partitions]
    return records, {r: r for r in set(records)}


def _partition_records(topic: cpb.ConsumerTopic) -> _Records | None:
    """The partitions' records cut from the topic's own bytes when every record has the size
    of the first (same replication factor, rack names of one length: the common case), else
    ``None``.

    The topic serialises as its name, then one record per partition: tag, length, message.
    Cutting at the first record's size is that parse exactly when every piece begins with the
    first's tag and length (each piece is then one whole record), which is checked on the
    distinct pieces; any other layout (unknown fields, say) is ``None``.
    """
    data = topic.SerializeToString()
    name = cpb.ConsumerTopic(name=topic.name).SerializeToString()
    start = len(name)
    if not data.startswith(name) or not data.startswith(_PARTITION_TAG, start):
        return None
    size, at = 0, start + 1
    for shift in range(0, 35, 7):  # the record's length, a varint
        if at == len(data):
            return None
        size |= (data[at] & 0x7F) << shift
        at += 1
        if not data[at - 1] & 0x80:
            break
    else:
        return None
    header, stride = data[start:at], at - start + size
    if (len(data) - start) % stride:
        return None
    count = (len(data) - start) // stride
    if count <= _COMPILED_PIECES:
        pieces = list(_pieces(count, stride)(data, start))
    else:
        pieces = list(map(_FIRST, struct.Struct(f"{stride}s").iter_unpack(data[start:])))
    distinct = {piece: piece[len(header) :] for piece in set(pieces)}
    if not all(piece.startswith(header) for piece in distinct):
        return None
    return pieces, distinct


@functools.lru_cache(maxsize=64)
def _pieces(count: int, stride: int) -> Callable[[bytes, int], tuple[bytes, ...]]:
    """A compiled reader of ``count`` pieces of ``stride`` bytes (a topic's partition records:
    topics of a cluster mostly have a few partition counts; up to ``_COMPILED_PIECES``)."""
    unpack: Callable[[bytes, int], tuple[bytes, ...]] = struct.Struct(
        f"{stride}s" * count
    ).unpack_from
    return unpack
