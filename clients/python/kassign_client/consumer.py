"""Builders of ``ConsumerAssignRequest`` (plain consumer groups) from plain Python values.

    from kassign_client import KassignClient, consumer

    request = consumer.request(
        [
            consumer.member("c-1", ["orders"], rack="eu-1a"),
            consumer.member("c-2", ["orders"], rack="eu-1b", owned=[("orders", 0)], generation=4),
        ],
        [consumer.topic("orders", [["eu-1a", "eu-1b"], ["eu-1b", "eu-1c"], ["eu-1c", "eu-1a"]])],
        assignor="cooperative-sticky",
    )
    with KassignClient("localhost:50051") as client:
        response = client.consumer_assign(request, timeout=10)

A member travels ``"structured"`` (protobuf fields) or ``"raw"`` (the ConsumerProtocolSubscription
bytes a leader received, at ``version`` 0-3, as Kafka's ``serializeSubscription`` writes them):
both give the same assignment, but for the fields the version lacks.

``compact`` (or ``request(..., compact=True)``) rewrites a request into issue 24's compact form:
each distinct topic list sent once, owned partitions packed by topic, and the answer asked for
as runs by topic without Kafka's bytes (unless ``assignment_bytes``). ``answers`` reads either
form of answer into plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal, TypeAlias

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "MemberAnswer",
    "MemberEncoding",
    "answers",
    "compact",
    "member",
    "options",
    "request",
    "topic",
]

MemberEncoding: TypeAlias = Literal["structured", "raw"]

_PROTOCOLS = {
    None: cpb.REBALANCE_PROTOCOL_UNSPECIFIED,
    "eager": cpb.REBALANCE_PROTOCOL_EAGER,
    "cooperative": cpb.REBALANCE_PROTOCOL_COOPERATIVE,
}


def member(
    member_id: str,
    topics: Sequence[str],
    *,
    owned: Iterable[tuple[str, int]] = (),
    generation: int | None = None,
    rack: str = "",
    user_data: bytes | None = None,
    group_instance_id: str = "",
    encoding: MemberEncoding = "structured",
    version: int = 3,
) -> pb.MemberSubscription:
    """One consumer's subscription: ``owned`` partitions, ``generation`` (None: unknown), its
    ``client.rack``, and the assignor's ``user_data`` bytes (the sticky assignors' own)."""
    sub = pb.ConsumerSubscription(
        topics=list(topics),
        owned_partitions=[pb.TopicPartition(topic=t, partition=p) for t, p in owned],
        rack_id=rack,
    )
    if generation is not None:
        sub.generation_id = generation
    if user_data is not None:
        sub.user_data_bytes = user_data
    out = pb.MemberSubscription(member_id=member_id, group_instance_id=group_instance_id)
    if encoding == "structured":
        out.subscription.CopyFrom(sub)
    elif encoding == "raw":
        from kassign_client.kafka_bytes import consumer_subscription_bytes

        out.raw_subscription = consumer_subscription_bytes(sub, version)
    else:
        raise ValueError(f"unknown encoding {encoding!r}")
    return out


def topic(name: str, partitions: int | Sequence[Sequence[str]]) -> cpb.ConsumerTopic:
    """A topic: a partition count (brokers without racks), or per partition its replicas' racks,
    leader first ("" for a broker without ``broker.rack``)."""
    racks: Sequence[Sequence[str]] = (
        [[] for _ in range(partitions)] if isinstance(partitions, int) else partitions
    )
    return cpb.ConsumerTopic(
        name=name, partitions=[cpb.PartitionReplicas(rack_ids=list(r)) for r in racks]
    )


def options(
    *,
    protocol: Literal["eager", "cooperative"] | None = None,
    co_partitioned: Iterable[Iterable[str]] = (),
    stickiness_cost: float | None = None,
    solver_time_budget_ms: int | None = None,
) -> cpb.ConsumerAssignOptions:
    """Options of kassign's own assignor (Kafka's four ignore them); unset: the defaults."""
    out = cpb.ConsumerAssignOptions(
        protocol=_PROTOCOLS[protocol],
        co_partitioned=[cpb.CoPartitionedTopics(topics=list(ts)) for ts in co_partitioned],
    )
    if stickiness_cost is not None:
        out.stickiness_cost = stickiness_cost
    if solver_time_budget_ms is not None:
        out.solver_time_budget_ms = solver_time_budget_ms
    return out


def request(
    members: Iterable[pb.MemberSubscription],
    topics: Iterable[cpb.ConsumerTopic],
    *,
    assignor: str = "range",
    group_id: str = "",
    options: cpb.ConsumerAssignOptions | None = None,
    compact: bool = False,
) -> cpb.ConsumerAssignRequest:
    """The request; members in the order the leader received them; ``compact``: in the compact
    form (``compact()``, without Kafka's bytes in the answer)."""
    out = cpb.ConsumerAssignRequest(
        group_id=group_id, assignor=assignor, members=list(members), topics=list(topics)
    )
    if options is not None:
        out.options.CopyFrom(options)
    return _compact(out, assignment_bytes=False) if compact else out


def compact(
    request: cpb.ConsumerAssignRequest, *, assignment_bytes: bool = False
) -> cpb.ConsumerAssignRequest:
    """``request`` in the compact form (issue 24): structured members' topic lists in
    ``topic_lists``, each distinct list once; their owned partitions in ``owned_by_topic``;
    each topic's partitions as a count and indexes into ``replica_rack_lists`` (none when no
    replica has a rack); the answer as runs by topic, with Kafka's bytes only if
    ``assignment_bytes``. Raw members stay as they are. The same assignment as ``request``'s."""
    return _compact(request, assignment_bytes=assignment_bytes)


def _compact(
    request: cpb.ConsumerAssignRequest, *, assignment_bytes: bool
) -> cpb.ConsumerAssignRequest:
    out = cpb.ConsumerAssignRequest()
    out.CopyFrom(request)
    lists: dict[tuple[str, ...], int] = {}
    for sent in out.members:
        if sent.WhichOneof("kind") != "subscription":
            continue
        sub = sent.subscription
        if not sub.HasField("topic_list"):
            topics = tuple(sub.topics)
            sub.topic_list = lists.setdefault(topics, len(lists))
            del sub.topics[:]
        if sub.owned_partitions:
            by_topic: dict[str, list[int]] = {}
            for tp in sub.owned_partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            del sub.owned_partitions[:]
            sub.owned_by_topic.extend(
                pb.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()
            )
    out.topic_lists.extend(cpb.TopicList(topics=list(t)) for t in lists)
    racks: dict[tuple[str, ...], int] = {}
    for sent_topic in out.topics:
        if sent_topic.partitions:
            sent_topic.partition_count = len(sent_topic.partitions)
            if any(r for p in sent_topic.partitions for r in p.rack_ids):  # else: no racks
                sent_topic.replica_rack_list.extend(
                    racks.setdefault(tuple(p.rack_ids), len(racks)) for p in sent_topic.partitions
                )
            del sent_topic.partitions[:]
    out.replica_rack_lists.extend(cpb.PartitionReplicas(rack_ids=list(r)) for r in racks)
    out.compact_answer = True
    out.assignment_bytes = assignment_bytes
    return out


@dataclass(frozen=True, slots=True)
class MemberAnswer:
    """One member's answer, however the service wrote it: partitions and revoked ones sorted,
    and Kafka's assignment bytes (empty when a compact answer was not asked for them)."""

    member_id: str
    partitions: tuple[tuple[str, int], ...]
    revoked: tuple[tuple[str, int], ...]
    assignment: bytes


def answers(response: cpb.ConsumerAssignResponse, *, compact: bool = False) -> list[MemberAnswer]:
    """Each member's answer, from the v1 lists or the compact runs (``compact_answer``).

    ``compact``: the request asked for runs, so a member without them is ``ValueError``: a service
    older than the compact form reads its members as subscribed to nothing and answers them, validly
    for it, with nothing."""
    if compact:
        bare = next((m.member_id for m in response.members if not m.HasField("assigned")), None)
        if bare is not None:
            raise ValueError(
                f"the service answered member {bare} without partition runs: it predates the "
                "compact wire this client sends (issue 24) and read its members as subscribed "
                "to nothing; upgrade the service or build the request with compact=False"
            )
    return [
        MemberAnswer(
            member_id=m.member_id,
            partitions=_read(m.partitions, m.assigned, response.topics),
            revoked=_read(m.revoked, m.revoked_runs, response.topics),
            assignment=m.assignment,
        )
        for m in response.members
    ]


def _read(
    listed: Iterable[pb.TopicPartition], runs: cpb.PartitionRuns, names: Sequence[str]
) -> tuple[tuple[str, int], ...]:
    """``ValueError`` for runs that do not add up (counts against numbers, a topic index out of
    the table)."""
    out = [(tp.topic, tp.partition) for tp in listed]
    ends = list(accumulate(runs.counts))
    if (ends[-1] if ends else 0) != len(runs.partitions) or any(c < 0 for c in runs.counts):
        raise ValueError("the runs' counts do not add up to their partitions")
    if any(not 0 <= t < len(names) for t in runs.topics):
        raise ValueError("a run names a topic index out of the answer's topics")
    for topic, end, count in zip(runs.topics, ends, runs.counts, strict=True):
        out.extend((names[topic], p) for p in runs.partitions[end - count : end])
    return tuple(out)
