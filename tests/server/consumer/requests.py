"""Consumer requests the service tests share, built with the Python client's ``consumer`` builders."""

from __future__ import annotations

from dataclasses import dataclass

from kassign.assignor.consumer import rack_optimal
from kassign.assignor.consumer.api import KAFKA_ASSIGNORS
from kassign.assignor.consumer.model import (
    DEFAULT_GENERATION,
    ConsumerGroup,
    Member,
    Topic,
    TopicPartition,
    consumer_group,
)
from kassign.kafka.consumer_user_data import encode_sticky_user_data
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer
from kassign_client.consumer import MemberEncoding

ALL_ASSIGNORS = (*KAFKA_ASSIGNORS, rack_optimal.NAME)
RACKS = ("r0", "r1", "r2")


@dataclass(frozen=True)
class Spec:
    """One member as plain values, for the request and for the library alike."""

    member_id: str
    topics: tuple[str, ...]
    owned: tuple[tuple[str, int], ...]
    generation: int | None
    rack: str
    user_data: bytes | None


def racked_topics() -> dict[str, list[list[str]]]:
    """Per topic, per partition, replica racks, leader first: two replicas on racks p and p+1
    (mod 3), a third on a broker without a rack ("")."""
    sizes = {"orders": 12, "payments": 12, "audit": 5}
    return {
        name: [[RACKS[p % 3], RACKS[(p + 1) % 3], ""] for p in range(n)]
        for name, n in sizes.items()
    }


def racked_specs() -> list[Spec]:
    """Seven members (m6 without a rack) on two equal topics and one only some read; a previous
    generation: m0-m4 owned what round-robin dealt them, with sticky userData to match; m5 and
    m6 are new."""
    topics = racked_topics()
    every = [(t, p) for t in ("orders", "payments") for p in range(len(topics[t]))]
    specs = []
    for n in range(7):
        owned = tuple(every[n::5]) if n < 5 else ()
        by_topic: dict[str, list[int]] = {}
        for t, p in owned:
            by_topic.setdefault(t, []).append(p)
        specs.append(
            Spec(
                member_id=f"m{n}",
                topics=("orders", "payments") + (("audit",) if n % 2 else ()),
                owned=owned,
                generation=7 if owned else None,
                rack=RACKS[n % 3] if n < 6 else "",
                user_data=encode_sticky_user_data(list(by_topic.items()), 7) if owned else None,
            )
        )
    return specs


def racked_group(
    assignor: str, *, encoding: MemberEncoding = "structured", version: int = 3
) -> cpb.ConsumerAssignRequest:
    """``racked_specs`` on ``racked_topics`` as a request."""
    members = [
        consumer.member(
            s.member_id,
            s.topics,
            owned=s.owned,
            generation=s.generation,
            rack=s.rack,
            user_data=s.user_data,
            encoding=encoding,
            version=version,
        )
        for s in racked_specs()
    ]
    topics = [consumer.topic(name, racks) for name, racks in racked_topics().items()]
    return consumer.request(members, topics, assignor=assignor, group_id="orders-app")


def racked_library_group() -> ConsumerGroup:
    """The same group built for the library directly, without the service's decoder."""
    members = [
        Member(
            member_id=s.member_id,
            topics=s.topics,
            rack_id=s.rack or None,
            owned_partitions=tuple(TopicPartition(t, p) for t, p in s.owned),
            generation=DEFAULT_GENERATION if s.generation is None else s.generation,
            user_data=s.user_data,
        )
        for s in racked_specs()
    ]
    topics = [
        Topic(name, tuple(frozenset(r for r in rs if r) for rs in racks))
        for name, racks in racked_topics().items()
    ]
    return consumer_group(members, topics)


def null_pointer_group() -> cpb.ConsumerAssignRequest:
    """docs/consumer-assignors.md's group on which Kafka's cooperative-sticky throws an NPE: ``x``
    (generation 1) once owned t0-0 and now reads only t1; ``a`` owns all of t0."""
    members = [
        consumer.member("a", ["t0"], owned=[("t0", p) for p in range(4)], generation=2),
        consumer.member("b", ["t0"], generation=2),
        consumer.member("x", ["t1"], owned=[("t0", 0)], generation=1),
    ]
    topics = [consumer.topic("t0", 4), consumer.topic("t1", 1)]
    return consumer.request(members, topics, assignor="cooperative-sticky", group_id="npe")


def member_index(request: cpb.ConsumerAssignRequest, member_id: str) -> int:
    return next(i for i, m in enumerate(request.members) if m.member_id == member_id)


def structured(request: cpb.ConsumerAssignRequest, member_id: str) -> pb.ConsumerSubscription:
    """The member's structured subscription, to change in place."""
    sub: pb.ConsumerSubscription = request.members[member_index(request, member_id)].subscription
    return sub
