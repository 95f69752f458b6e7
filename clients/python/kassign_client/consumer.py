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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["MemberEncoding", "member", "options", "request", "topic"]

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
) -> cpb.ConsumerAssignRequest:
    """The request; members in the order the leader received them."""
    out = cpb.ConsumerAssignRequest(
        group_id=group_id, assignor=assignor, members=list(members), topics=list(topics)
    )
    if options is not None:
        out.options.CopyFrom(options)
    return out
