"""A simulated Kafka Streams group: what its clients hold on disk, as they would report it.

Why: simulate evolves a group between rebalances (warm-ups catch up, clients join or fail) and
the benchmark needs requests of a chosen shape. Both start from this one picture, which turns
into the wire ``AssignRequest`` a group leader would send (``to_request``), and through the
server's own decoder into the assignor's ``ApplicationState`` (``to_state``), so simulated
states are built by exactly the code that builds production ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from uuid import UUID

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    AssignmentConfigs,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
)
from kassign.v1 import assignment_pb2 as pb

__all__ = ["Group", "SimClient", "member_ids", "to_request", "to_state"]

_STRATEGY_TO_PB = {
    RackAwareStrategy.NONE: pb.RACK_AWARE_STRATEGY_NONE,
    RackAwareStrategy.MIN_TRAFFIC: pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC,
    RackAwareStrategy.BALANCE_SUBTOPOLOGY: pb.RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SimClient:
    """One Kafka Streams client: its threads, rack, tags and the offset sums of its local state.

    ``offset_sums`` holds ``LATEST_OFFSET`` (-2) for each task it runs as an active (stateless
    ones included, as Kafka's subscription does) and the changelog offset sum of every other
    task it has state for.
    """

    process_id: UUID
    threads: int
    rack: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    offset_sums: Mapping[TaskId, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """A group's topology, live clients and clients of a failed rack that may come back."""

    group_id: str
    tasks: tuple[TaskInfo, ...]
    clients: tuple[SimClient, ...]
    configs: AssignmentConfigs = field(default_factory=AssignmentConfigs)
    racks: tuple[str, ...] = ()
    offline: tuple[SimClient, ...] = ()
    now_ms: int = 1_000_000


def member_ids(client: SimClient) -> tuple[str, ...]:
    """The consumer member ids of a client's threads (sorted: zero-padded)."""
    return tuple(f"{client.process_id}-{i:03d}" for i in range(client.threads))


def _spread(tasks: list[TaskId], threads: int) -> list[list[TaskId]]:
    """Round-robin of a client's sorted tasks over its threads: what each consumer owned."""
    return [tasks[i::threads] for i in range(threads)]


def to_state(group: Group) -> ApplicationState:
    """The assignor's input for the group's next rebalance, decoded exactly as the server would."""
    from kassign.server.streams.decode.request import (
        decode_request,  # late: keeps generation importable alone
    )

    return decode_request(to_request(group), now_ms=group.now_ms).state


def _pb_task(task: TaskId) -> pb.TaskId:
    return pb.TaskId(
        subtopology=task.subtopology,
        partition=task.partition,
        named_topology=task.named_topology or "",
    )


def _pb_configs(configs: AssignmentConfigs) -> pb.AssignmentConfigs:
    message = pb.AssignmentConfigs(
        assignor=configs.assignor,
        acceptable_recovery_lag=configs.acceptable_recovery_lag,
        max_warmup_replicas=configs.max_warmup_replicas,
        num_standby_replicas=configs.num_standby_replicas,
        probing_rebalance_interval_ms=configs.probing_rebalance_interval_ms,
        rack_aware_assignment_tags=list(configs.rack_aware_assignment_tags),
        rack_aware_strategy=_STRATEGY_TO_PB[configs.rack_aware_strategy],
    )
    if configs.traffic_cost is not None:
        message.traffic_cost = configs.traffic_cost
    if configs.non_overlap_cost is not None:
        message.non_overlap_cost = configs.non_overlap_cost
    if configs.assignment_time_budget_ms is not None:
        message.assignment_time_budget_ms = configs.assignment_time_budget_ms
    return message


def _pb_task_info(info: TaskInfo) -> pb.TaskInfo:
    return pb.TaskInfo(
        id=_pb_task(info.id),
        stateful=info.stateful,
        state_store_names=list(info.state_store_names),
        changelog_end_offset_sum=info.changelog_end_offset_sum,
        topic_partitions=[
            pb.TaskTopicPartition(
                topic=tp.topic,
                partition=tp.partition,
                is_source=tp.is_source,
                is_changelog=tp.is_changelog,
                rack_ids=sorted(tp.rack_ids),
            )
            for tp in info.topic_partitions
        ],
    )


def _members(
    client: SimClient, sources: Mapping[TaskId, list[pb.TopicPartition]], topics: list[str]
) -> list[pb.MemberSubscription]:
    info = pb.SubscriptionInfo(
        version=11,
        latest_supported_version=11,
        process_id=str(client.process_id),
        task_offset_sums=[
            pb.TaskOffsetSum(task=_pb_task(t), offset_sum=s)
            for t, s in sorted(client.offset_sums.items(), key=lambda kv: kv[0].sort_key)
        ],
        client_tags=[pb.ClientTag(key=k, value=v) for k, v in sorted(client.tags.items())],
    )
    active = sorted(
        (t for t, s in client.offset_sums.items() if s == LATEST_OFFSET), key=lambda t: t.sort_key
    )
    members = []
    for member_id, owned in zip(member_ids(client), _spread(active, client.threads), strict=True):
        subscription = pb.ConsumerSubscription(
            topics=topics,
            rack_id=client.rack or "",
            info=info,
            owned_partitions=[tp for t in owned for tp in sources.get(t, [])],
        )
        members.append(pb.MemberSubscription(member_id=member_id, subscription=subscription))
    return members


def to_request(group: Group) -> pb.AssignRequest:
    """The ``AssignRequest`` the group's leader would send for its next rebalance."""
    sources = {
        t.id: [
            pb.TopicPartition(topic=tp.topic, partition=tp.partition)
            for tp in t.topic_partitions
            if tp.is_source
        ]
        for t in group.tasks
    }
    topics = sorted({tp.topic for t in group.tasks for tp in t.topic_partitions if tp.is_source})
    clients = sorted(group.clients, key=lambda c: process_key(c.process_id))
    return pb.AssignRequest(
        group_id=group.group_id,
        members=[m for c in clients for m in _members(c, sources, topics)],
        tasks=[_pb_task_info(t) for t in group.tasks],
        configs=_pb_configs(group.configs),
        now_ms=group.now_ms,
    )
