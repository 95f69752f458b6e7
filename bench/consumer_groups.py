"""The groups ``consumer_bench.py`` times, in the three shapes it hands them over in.

A cluster of nine brokers (three per rack, or none with racks), topics of 1,000 partitions
(at least ten), replication 3 on random brokers; members in a random arrival order, spread over
the racks, subscribed to every topic or (``equal=False``) to all but one. ``next_round`` is the
following rebalance. The same group goes to kassign's library (``ConsumerGroup``), to its
service (``ConsumerAssignRequest`` with each member's ConsumerProtocolSubscription bytes, as a
leader forwards them) and to Kafka (the differential oracle's JSON line).
"""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kassign.assignor.claims import OwnedPartitions
from kassign.assignor.consumer import GroupAssignment, Member, Topic, TopicPartition
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    encode_consumer_subscription,
)
from kassign.kafka.consumer_user_data import encode_sticky_user_data
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

__all__ = [
    "Cluster",
    "extra_member",
    "kafka_line",
    "leave",
    "make_cluster",
    "make_members",
    "next_round",
    "request_for",
]

RACKS = ("rack-a", "rack-b", "rack-c")
BROKERS = 9
REPLICATION = 3
TOPIC_PARTITIONS = 1_000
REPLACED = 0.01  # share of members replaced by new ones in round 2


@dataclass(frozen=True, slots=True)
class Cluster:
    """Brokers (id, rack) and per topic each partition's replica broker ids, leader first."""

    brokers: tuple[tuple[int, str | None], ...]
    replicas: dict[str, tuple[tuple[int, ...], ...]]

    def topics(self) -> list[Topic]:
        rack_of = dict(self.brokers)
        return [
            Topic(t, tuple(frozenset(r for b in ps if (r := rack_of[b])) for ps in parts))
            for t, parts in self.replicas.items()
        ]


def make_cluster(partitions: int, *, racks: bool, seed: int, topics: int | None = None) -> Cluster:
    """``partitions`` over ``topics`` topics (by default one per 1,000 partitions, at least
    ten), replication 3 on random brokers."""
    rng = random.Random(seed)
    brokers = tuple((b, RACKS[b % len(RACKS)] if racks else None) for b in range(BROKERS))
    n_topics = topics or max(10, partitions // TOPIC_PARTITIONS)
    replicas = {
        f"topic-{t:03d}": tuple(
            tuple(rng.sample(range(BROKERS), REPLICATION)) for _ in range(partitions // n_topics)
        )
        for t in range(n_topics)
    }
    return Cluster(brokers, replicas)


def make_members(
    cluster: Cluster, consumers: int, *, racks: bool, equal: bool, seed: int
) -> list[Member]:
    """Fresh members (nothing owned) in a random arrival order, ids like Kafka's; unless
    ``equal``, each leaves out one topic."""
    rng = random.Random(seed)
    topics = tuple(cluster.replicas)
    members = [
        Member(
            member_id=f"consumer-{j}-{rng.getrandbits(128):032x}",
            topics=topics if equal else tuple(t for t in topics if t != rng.choice(topics)),
            rack_id=RACKS[j % len(RACKS)] if racks else None,
        )
        for j in range(consumers)
    ]
    rng.shuffle(members)
    return members


def next_round(
    members: list[Member],
    result: GroupAssignment,
    assignor: str,
    seed: int,
    *,
    replaced: float = REPLACED,
) -> list[Member]:
    """The rebalance after ``result``: members own what it gave them (generation 1; ``sticky``
    through its userData), except a share of them (1%, at least one, unless ``replaced`` is
    0), replaced by new members that own nothing."""
    rng = random.Random(seed)
    owned = result.partitions()
    count = max(1, int(len(members) * replaced)) if replaced else 0
    gone = set(rng.sample(range(len(members)), count))
    after = []
    for i, m in enumerate(members):
        if i in gone:
            after.append(replace(m, member_id=f"{m.member_id[:-8]}{rng.getrandbits(32):08x}"))
        elif assignor == "sticky":
            after.append(replace(m, generation=1, user_data=_sticky_user_data(owned[m.member_id])))
        else:
            # as the service's decoder hands them over: compact, by topic
            claims = OwnedPartitions.sorted_from(owned[m.member_id])
            after.append(replace(m, generation=1, owned_partitions=claims))
    return after


def leave(members: list[Member], result: GroupAssignment, assignor: str) -> list[Member]:
    """The rebalance after ``result`` when one member (the first to have joined) leaves:
    the others own what it gave them (Kafka's large tests remove one consumer)."""
    return next_round(members[1:], result, assignor, 0, replaced=0)


def extra_member(
    cluster: Cluster, members: list[Member], *, racks: bool, seed: int
) -> list[Member]:
    """A fresh group with one more member, subscribed to the first topic only: subscriptions
    no longer equal (franz-go's large imbalanced benchmark, Kafka's unequal large test)."""
    rng = random.Random(seed)
    first = next(iter(cluster.replicas))
    extra = Member(
        member_id=f"consumer-extra-{rng.getrandbits(128):032x}",
        topics=(first,),
        rack_id=RACKS[0] if racks else None,
    )
    return [*members, extra]


def _by_topic(partitions: Sequence[TopicPartition]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return sorted(by_topic.items())


def _sticky_user_data(partitions: Sequence[TopicPartition]) -> bytes:
    return encode_sticky_user_data(_by_topic(partitions), 1)


def request_for(
    cluster: Cluster, members: list[Member], assignor: str, *, compact: bool = False
) -> cpb.ConsumerAssignRequest:
    """The service's request: raw ConsumerProtocolSubscription v3 per member, replica racks;
    ``compact``: issue 24's form instead (structured members naming shared topic lists, owned
    partitions by topic, partitions as counts and rack list indexes, the answer as runs
    without Kafka's bytes)."""
    rack_of = dict(cluster.brokers)
    lists: dict[tuple[str, ...], int] = {}
    request = cpb.ConsumerAssignRequest(
        group_id="bench",
        assignor=assignor,
        members=[
            _compact_member(m, lists)
            if compact
            else pb.MemberSubscription(member_id=m.member_id, raw_subscription=_subscription(m))
            for m in members
        ],
        topic_lists=[cpb.TopicList(topics=t) for t in lists],
        compact_answer=compact,
        topics=[
            cpb.ConsumerTopic(
                name=t,
                partitions=[
                    cpb.PartitionReplicas(rack_ids=[rack_of[b] or "" for b in ps]) for ps in parts
                ],
            )
            for t, parts in cluster.replicas.items()
        ],
    )
    return consumer.compact(request) if compact else request  # the topics' partitions too


def _compact_member(m: Member, lists: dict[tuple[str, ...], int]) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(
        topic_list=lists.setdefault(tuple(m.topics), len(lists)),
        owned_by_topic=[
            pb.TopicPartitions(topic=t, partitions=ps) for t, ps in _by_topic(m.owned_partitions)
        ],
        rack_id=m.rack_id or "",
    )
    if m.generation >= 0:
        sub.generation_id = m.generation
    if m.user_data is not None:
        sub.user_data_bytes = m.user_data
    return pb.MemberSubscription(member_id=m.member_id, subscription=sub)


def _subscription(m: Member) -> bytes:
    return encode_consumer_subscription(
        ConsumerProtocolSubscription(
            version=3,
            topics=m.topics,
            user_data=m.user_data,
            owned_partitions=tuple(
                OwnedTopicPartitions(t, tuple(ps)) for t, ps in _by_topic(m.owned_partitions)
            ),
            generation_id=m.generation,
            rack_id=m.rack_id,
        )
    )


def kafka_line(cluster: Cluster, members: list[Member], assignor: str) -> dict[str, Any]:
    """The group in the differential oracle's JSON format (``KafkaConsumerAssignors.java``)."""
    return {
        "assignor": assignor,
        "nodes": [{"id": b, "rack": r} for b, r in cluster.brokers],
        "topics": [
            {"name": t, "replicas": [list(p) for p in ps]} for t, ps in cluster.replicas.items()
        ],
        "members": [
            {
                "memberId": m.member_id,
                "topics": list(m.topics),
                "ownedPartitions": [list(tp) for tp in m.owned_partitions],
                "generation": m.generation,
                "rackId": m.rack_id,
                "userData": base64.b64encode(m.user_data).decode() if m.user_data else None,
            }
            for m in members
        ],
    }
