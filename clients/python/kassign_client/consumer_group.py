"""A plain consumer group's rebalance as a ``ConsumerAssignRequest``, and the answer checked.

Library-neutral: a Kafka client's assignor adapter (``kassign_client.kafka_python``) turns what
its library decoded at JoinGroup into ``Subscription`` values and its cluster metadata into
replica racks, and gets back each member's partitions, checked as Kafka's Java plug-in checks
them (``io.kassign.consumer.ResponseToGroup``): every member once, no partition twice, only
partitions of subscribed topics in the metadata, and under the cooperative protocol no partition
handed to a new owner while another member still claims it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2 as common
from kassign.v1 import consumer_pb2 as cpb

from kassign_client import consumer

__all__ = [
    "InvalidAnswer",
    "Subscription",
    "TopicPartition",
    "assignments",
    "request",
]

TopicPartition = tuple[str, int]


class InvalidAnswer(Exception):
    """The service answered with something the group must not get (the adapter falls back)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription:
    """One member's ConsumerProtocolSubscription as its leader decoded it."""

    member_id: str
    topics: tuple[str, ...]
    group_instance_id: str = ""
    rack_id: str = ""  # empty: no rack
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int | None = None  # None: unknown (v0-1, or -1 on the wire)
    user_data: bytes | None = None


def request(
    group_id: str,
    assignor: str,
    members: Sequence[Subscription],
    racks: Mapping[str, Sequence[Sequence[str]]],
    *,
    cooperative: bool,
    time_budget_ms: int | None = None,
    co_partitioned: Sequence[Sequence[str]] = (),
    compact: bool = True,
) -> cpb.ConsumerAssignRequest:
    """The request: members in the leader's order, each subscribed topic known to the metadata
    with its partitions' replica racks (``racks[topic][p]``, leader first, "" for no rack);
    ``compact``: issue 24's compact form (shared topic lists, runs in the answer, no Kafka
    bytes: the adapter builds the assignment from the partitions), which needs a server that
    knows it."""
    options = cpb.ConsumerAssignOptions(
        protocol=cpb.REBALANCE_PROTOCOL_COOPERATIVE
        if cooperative
        else cpb.REBALANCE_PROTOCOL_EAGER,
        co_partitioned=[cpb.CoPartitionedTopics(topics=list(s)) for s in co_partitioned],
    )
    if time_budget_ms is not None:
        options.solver_time_budget_ms = time_budget_ms
    subscribed = sorted({t for m in members for t in m.topics})
    out = cpb.ConsumerAssignRequest(
        group_id=group_id,
        assignor=assignor,
        members=[_member(m) for m in members],
        topics=[
            cpb.ConsumerTopic(
                name=topic,
                partitions=[cpb.PartitionReplicas(rack_ids=list(r)) for r in racks[topic]],
            )
            for topic in subscribed
            if topic in racks
        ],
        options=options,
    )
    return consumer.compact(out) if compact else out


def _member(m: Subscription) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(
        topics=list(m.topics),
        rack_id=m.rack_id,
        owned_partitions=[
            common.TopicPartition(topic=t, partition=p) for t, p in m.owned_partitions
        ],
    )
    if m.generation_id is not None and m.generation_id >= 0:
        sub.generation_id = m.generation_id
    if m.user_data is not None:
        sub.user_data_bytes = m.user_data
    return pb.MemberSubscription(
        member_id=m.member_id, group_instance_id=m.group_instance_id, subscription=sub
    )


def assignments(
    response: cpb.ConsumerAssignResponse,
    members: Sequence[Subscription],
    partition_counts: Mapping[str, int],
    *,
    cooperative: bool,
    compact: bool,
) -> dict[str, consumer.MemberAnswer]:
    """Each member's answer by member id (either form, ``consumer.answers``; ``compact``: the
    request's ``compact_answer``, which a server too old to read it leaves unanswered), or
    ``InvalidAnswer`` saying what is wrong."""
    by_id = {m.member_id: m for m in members}
    result: dict[str, consumer.MemberAnswer] = {}
    owner: dict[TopicPartition, str] = {}
    try:
        answered = consumer.answers(response, compact=compact)
    except ValueError as exc:
        raise InvalidAnswer(f"the service's runs do not read: {exc}") from exc
    for answer in answered:
        who = answer.member_id
        member = by_id.get(who)
        if member is None:
            raise InvalidAnswer(f"the service assigned partitions to unknown member {who}")
        if who in result:
            raise InvalidAnswer(f"the service listed member {who} twice")
        result[who] = answer
        for key in answer.partitions:
            topic, partition = key
            if topic not in member.topics or not 0 <= partition < partition_counts.get(topic, 0):
                raise InvalidAnswer(
                    f"the service gave member {who} partition {topic}-{partition}, "
                    "not of a topic it subscribed to in the metadata"
                )
            if key in owner:
                raise InvalidAnswer(
                    f"the service gave partition {topic}-{partition} to both {owner[key]} and {who}"
                )
            owner[key] = who
    missing = sorted(by_id.keys() - result.keys())
    if missing:
        raise InvalidAnswer(f"the service left out member {missing[0]}")
    if cooperative:
        _check_cooperative(members, owner)
    return result


def _check_cooperative(
    members: Sequence[Subscription], owner: Mapping[TopicPartition, str]
) -> None:
    """Kafka's ConsumerCoordinator.validateCooperativeAssignment: a partition revoked from one
    claimant may not be added to another member in the same round."""
    revoked = {tp for m in members for tp in m.owned_partitions if owner.get(tp) != m.member_id}
    owned = {m.member_id: set(m.owned_partitions) for m in members}
    added = {tp for tp, who in owner.items() if tp not in owned[who]}
    handed_over = sorted(added & revoked)
    if handed_over:
        raise InvalidAnswer(
            "under COOPERATIVE, partitions still owned by another member were handed over: "
            + ", ".join(f"{t}-{p}" for t, p in handed_over)
        )
