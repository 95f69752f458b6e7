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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from kassign.assignor.consumer.model import (
    AssignOptions,
    ConsumerGroup,
    Member,
    OwnedPartitions,
    RackSetIds,
    Topic,
    consumer_group,
)
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.consumer_protocol import SubscriptionDecoder
from kassign.server.consumer import limits as checks
from kassign.server.consumer.member_columns import MemberColumns, member_columns, request_bytes
from kassign.server.consumer.members import decode_members
from kassign.server.consumer.options import decode_options
from kassign.server.consumer.owned_wire import OwnedByTopic, owned_of
from kassign.server.consumer.request_paths import located
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits, check_text
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["DecodedConsumerRequest", "decode_member", "decode_request"]

_PARTITION_TAG = b"\x12"  # ConsumerTopic.partitions: field 2, length-delimited
_COMPILED_PIECES = 2048
_FIRST = operator.itemgetter(0)
_RACK_ID = operator.attrgetter("rack_id")


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
    request: cpb.ConsumerAssignRequest,
    limits: RequestLimits = DEFAULT_LIMITS,
    data: bytes | None = None,
) -> DecodedConsumerRequest:
    """The checked request, or ``InvalidRequest`` naming the field and the member at fault;
    ``limits`` are checked before decoding, and the answer's size before returning. ``data``:
    the bytes ``request`` was parsed from (the server's), whose members are read from them
    (``member_columns``); without them the members are serialised again to be read."""
    if not request.assignor:
        raise InvalidRequest("no assignor named", field="assignor")
    sent = request_bytes(request.members) if data is None else data
    columns = member_columns(sent, request.members)
    claims = owned_of(columns)
    checks.check_request(request, limits, columns, [0 if c is None else len(c) for c in claims])
    members, user_data_fields, compact_sent = decode_members(
        columns, _topic_lists(request.topic_lists), claims
    )
    rack_sets: dict[bytes, frozenset[str]] = {}
    shared = _rack_lists(request.replica_rack_lists)
    topics = [
        _compact_topic(i, t, shared)
        if t.partition_count or t.replica_rack_list
        else _topic(t, rack_sets)
        for i, t in enumerate(request.topics)
    ]
    racks = set().union(*rack_sets.values(), *shared.sets)
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
    capacities = _capacities(columns)
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


def _capacities(columns: MemberColumns) -> dict[str, float]:
    """The capacities members sent (issue 25); the library checks them, naming the member."""
    return {  # a raw member has none
        who: capacity
        for who, capacity in zip(columns.ids, columns.capacities)
        if capacity is not None
    }


def decode_member(
    sent: pb.MemberSubscription,
    decoder: SubscriptionDecoder | None = None,
    topic_lists: Sequence[tuple[str, ...]] = (),
    by_topic: OwnedPartitions | None = None,
) -> tuple[Member, str]:
    """One member, and the request path of its user data (``…user_data_bytes`` and the like),
    as a group of one (``decode_members``); ``decoder`` reads a raw subscription,
    ``topic_lists`` are the request's shared subscriptions, sorted (``_topic_lists``),
    ``by_topic`` its ``owned_by_topic`` as the group's read gave it (``owned_wire``)."""
    columns = member_columns(request_bytes([sent]), [sent])
    claims: OwnedByTopic = owned_of(columns) if by_topic is None else [by_topic]
    members, paths, _ = decode_members(columns, topic_lists, claims, decoder)
    return members[0], paths[members[0].member_id]


def _topic_lists(lists: Iterable[cpb.TopicList]) -> list[tuple[str, ...]]:
    """Each shared subscription sorted once; its members share the one tuple (the library
    checks and compares a list shared by members once)."""
    return [tuple(sorted(topics.topics)) for topics in lists]


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


@dataclass(frozen=True, slots=True)
class _RackLists:
    """The request's replica rack lists (``replica_rack_lists``) as sets: each distinct set
    once (``sets``, the empty one among them: a topic sent without lists), each list's set's
    index in ``sets`` (``of_list``), and the empty set's (``none``)."""

    sets: tuple[frozenset[str], ...]
    of_list: npt.NDArray[np.int64]
    none: int
    objects: npt.NDArray[np.object_]  # ``sets`` as an array: a topic's gathered in one step


def _rack_lists(lists: Iterable[cpb.PartitionReplicas]) -> _RackLists:
    """A replica on a broker without a rack ("") adds none (KIP-881); lists of one set (the
    same racks in another order, say) share its index."""
    index: dict[frozenset[str], int] = {}
    of_list = [
        index.setdefault(frozenset(r for r in racks.rack_ids if r), len(index)) for racks in lists
    ]
    none = index.setdefault(_NO_RACKS, len(index))
    objects = np.empty(len(index), dtype=object)
    objects[:] = list(index)
    return _RackLists(tuple(index), np.array(of_list, dtype=np.int64), none, objects)


def _compact_topic(index: int, topic: cpb.ConsumerTopic, shared: _RackLists) -> Topic:
    """A topic sent as a count and an index per partition into the request's distinct replica
    rack lists (issue 24): no message per partition to read. The library gets the partitions'
    rack sets as numbers too (``RackSetIds``), over the request's one ``sets``."""
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
        ids = np.full(count, shared.none, dtype=np.int64)
        return Topic(topic.name, (_NO_RACKS,) * count, RackSetIds(shared.sets, ids))
    if len(lists) != count:
        raise InvalidRequest(
            f"{len(lists)} replica rack lists for {count} partitions",
            field=f"{where}.replica_rack_list",
        )
    indexes = np.fromiter(lists, dtype=np.intc, count=count)  # one C loop
    sent = len(shared.of_list)
    if int(indexes.min()) < 0 or int(indexes.max()) >= sent:
        raise InvalidRequest(
            f"a replica rack list index out of range: the request has {sent} replica_rack_lists",
            field=f"{where}.replica_rack_list",
        )
    ids = shared.of_list[indexes]
    racks = tuple(shared.objects[ids].tolist())
    return Topic(topic.name, racks, RackSetIds(shared.sets, ids))


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
