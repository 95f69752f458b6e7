"""Builders from plain Python values to ``kassign.v1`` messages, so callers never spell protobufs.

    build.request(
        members=build.client(pid, threads=2, previous_active=["0_1"], rack="eu-1a") + ...,
        tasks=[build.task(0, p, source=["orders"], changelog=["app-store-changelog"]) for p in range(6)],
        configs=build.configs(num_standby_replicas=1, rack_aware_strategy="min_traffic"),
    )

A task is named by ``"1_2"``, ``"topology__1_2"``, ``(1, 2)``, ``(1, 2, "topology")`` or a
``pb.TaskId``. ``encoding`` chooses how a member's subscription travels: ``"structured"``
(protobuf fields), ``"info_bytes"`` (Streams userData as Kafka encodes it) or ``"raw"`` (the whole
ConsumerProtocolSubscription as Kafka encodes it); all three give the same assignment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Literal, TypeAlias, TypedDict, Unpack
from uuid import UUID

from kassign.kafka.subscription_info import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, carries_task_lists
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "LATEST_OFFSET",
    "UNKNOWN_OFFSET_SUM",
    "ConfigValues",
    "Encoding",
    "TaskRef",
    "client",
    "configs",
    "member",
    "request",
    "subscription_info",
    "task",
    "task_id",
]

TaskRef: TypeAlias = str | tuple[int, int] | tuple[int, int, str] | pb.TaskId
Encoding: TypeAlias = Literal["structured", "info_bytes", "raw"]
PartitionRef: TypeAlias = str | tuple[str, int]


class ConfigValues(TypedDict, total=False):
    """The scalar ``AssignmentConfigs`` fields ``configs`` takes as keywords."""

    assignor: str
    acceptable_recovery_lag: int
    max_warmup_replicas: int
    num_standby_replicas: int
    probing_rebalance_interval_ms: int
    traffic_cost: int
    non_overlap_cost: int
    assignment_time_budget_ms: int
    standby_rack_spread: bool


_STRATEGIES = {
    "none": pb.RACK_AWARE_STRATEGY_NONE,
    "min_traffic": pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC,
    "balance_subtopology": pb.RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY,
}


def task_id(ref: TaskRef) -> pb.TaskId:
    """A ``pb.TaskId`` from ``"1_2"``, ``"topo__1_2"``, ``(1, 2)``, ``(1, 2, "topo")``."""
    if isinstance(ref, pb.TaskId):
        return ref
    if isinstance(ref, str):
        topology, _, base = ref.rpartition("__")
        sub, _, part = base.partition("_")
        return pb.TaskId(subtopology=int(sub), partition=int(part), named_topology=topology)
    named = str(ref[2]) if len(ref) == 3 else ""
    return pb.TaskId(subtopology=ref[0], partition=ref[1], named_topology=named)


def _partitions(refs: Iterable[PartitionRef], default_partition: int) -> list[tuple[str, int]]:
    return [(r, default_partition) if isinstance(r, str) else (r[0], r[1]) for r in refs]


def task(
    subtopology: int,
    partition: int,
    *,
    stateful: bool | None = None,
    source: Iterable[PartitionRef] = (),
    changelog: Iterable[PartitionRef] = (),
    racks: Sequence[str] | Mapping[str, Sequence[str]] = (),
    stores: Sequence[str] = (),
    end_offset_sum: int = 0,
    named_topology: str = "",
) -> pb.TaskInfo:
    """A task; a bare topic name in ``source``/``changelog`` means that topic's partition
    ``partition``. ``racks``: the replica racks of every partition, or per topic. ``stateful``
    defaults to "has a changelog or a store"."""
    sources = _partitions(source, partition)
    changelogs = _partitions(changelog, partition)
    topic_partitions = []
    for topic, p in sorted(set(sources) | set(changelogs)):
        replica_racks = racks.get(topic, ()) if isinstance(racks, Mapping) else racks
        topic_partitions.append(
            pb.TaskTopicPartition(
                topic=topic,
                partition=p,
                is_source=(topic, p) in sources,
                is_changelog=(topic, p) in changelogs,
                rack_ids=sorted(replica_racks),
            )
        )
    return pb.TaskInfo(
        id=pb.TaskId(subtopology=subtopology, partition=partition, named_topology=named_topology),
        stateful=bool(changelogs or stores) if stateful is None else stateful,
        state_store_names=list(stores),
        topic_partitions=topic_partitions,
        changelog_end_offset_sum=end_offset_sum,
    )


def subscription_info(
    process_id: UUID | str,
    *,
    previous_active: Iterable[TaskRef] = (),
    previous_standby: Iterable[TaskRef] = (),
    offset_sums: Mapping[str, int] | Iterable[tuple[TaskRef, int]] = (),
    end_point: str = "",
    tags: Mapping[str, str] | None = None,
    version: int = 11,
    latest_supported_version: int | None = None,
    unique_field: int = 0,
    error_code: int = 0,
) -> pb.SubscriptionInfo:
    """Streams' userData. From v7 on previous tasks travel as offset sums: an active as -2, a
    standby as its ``offset_sums`` entry (0 when not given); v1-6 list them as prev/standby tasks."""
    sums = offset_sums.items() if isinstance(offset_sums, Mapping) else offset_sums
    explicit = {_key(task_id(t)): (task_id(t), s) for t, s in sums}
    actives = [task_id(t) for t in previous_active]
    standbys = [task_id(t) for t in previous_standby]
    info = pb.SubscriptionInfo(
        version=version,
        latest_supported_version=(
            latest_supported_version
            if latest_supported_version is not None
            else (-1 if version < 3 else version)
        ),
        process_id=str(process_id),
        user_end_point=end_point if version >= 2 else "",
        unique_field=unique_field if version >= 8 else 0,
        error_code=error_code if version >= 9 else 0,
        client_tags=[pb.ClientTag(key=k, value=v) for k, v in sorted((tags or {}).items())]
        if version >= 11
        else [],
    )
    if carries_task_lists(version):
        info.prev_tasks.extend(actives)
        info.standby_tasks.extend(
            standbys + [t for t, _ in explicit.values() if t not in actives + standbys]
        )
        return info
    merged = (
        {_key(t): (t, 0) for t in standbys}
        | explicit
        | {_key(t): (t, LATEST_OFFSET) for t in actives}
    )
    info.task_offset_sums.extend(
        pb.TaskOffsetSum(task=t, offset_sum=s) for _, (t, s) in sorted(merged.items())
    )
    return info


def _key(t: pb.TaskId) -> tuple[str, int, int]:
    return (t.named_topology, t.subtopology, t.partition)


def member(
    member_id: str,
    process_id: UUID | str,
    *,
    topics: Sequence[str] = (),
    owned_partitions: Iterable[tuple[str, int]] = (),
    generation_id: int | None = None,
    rack: str = "",
    group_instance_id: str = "",
    encoding: Encoding = "structured",
    **info: object,
) -> pb.MemberSubscription:
    """One consumer's subscription; ``info`` goes to ``subscription_info``."""
    user_data = subscription_info(process_id, **info)  # type: ignore[arg-type]
    sub = pb.ConsumerSubscription(
        topics=list(topics),
        owned_partitions=[
            pb.TopicPartition(topic=t, partition=p) for t, p in sorted(owned_partitions)
        ],
        rack_id=rack,
    )
    if generation_id is not None:
        sub.generation_id = generation_id
    out = pb.MemberSubscription(member_id=member_id, group_instance_id=group_instance_id)
    if encoding == "structured":
        sub.info.CopyFrom(user_data)
        out.subscription.CopyFrom(sub)
    elif encoding == "info_bytes":
        sub.info_bytes = _wire().subscription_info_bytes(user_data)
        out.subscription.CopyFrom(sub)
    elif encoding == "raw":
        sub.info_bytes = _wire().subscription_info_bytes(user_data)
        out.raw_subscription = _wire().consumer_subscription_bytes(sub)
    else:
        raise ValueError(f"unknown encoding {encoding!r}")
    return out


def client(
    process_id: UUID | str,
    *,
    threads: int | Sequence[str] = 1,
    owned_partitions: Mapping[str, Iterable[tuple[str, int]]] | None = None,
    **member_args: object,
) -> list[pb.MemberSubscription]:
    """Every consumer of one Kafka Streams client (one per stream thread), sharing its userData.

    ``threads``: a count (member ids ``<process>-StreamThread-<n>-consumer``) or the member ids.
    ``owned_partitions`` maps a member id to the partitions it owned.
    """
    ids = (
        [f"{process_id}-StreamThread-{n}-consumer" for n in range(1, threads + 1)]
        if isinstance(threads, int)
        else list(threads)
    )
    owned = owned_partitions or {}
    return [
        member(m, process_id, owned_partitions=owned.get(m, ()), **member_args)  # type: ignore[arg-type]
        for m in ids
    ]


def configs(
    *,
    rack_aware_strategy: str | None = None,
    rack_aware_assignment_tags: Sequence[str] = (),
    **values: Unpack[ConfigValues],
) -> pb.AssignmentConfigs:
    """``AssignmentConfigs``; unset fields keep Kafka's defaults. Strategy by name: "min_traffic"."""
    message = pb.AssignmentConfigs(
        rack_aware_assignment_tags=list(rack_aware_assignment_tags), **values
    )
    if rack_aware_strategy is not None:
        message.rack_aware_strategy = _STRATEGIES[rack_aware_strategy]
    return message


def request(
    members: Iterable[pb.MemberSubscription | Iterable[pb.MemberSubscription]],
    tasks: Iterable[pb.TaskInfo],
    *,
    configs: pb.AssignmentConfigs | None = None,
    group_id: str = "",
    now_ms: int = 0,
    explain: bool = False,
) -> pb.AssignRequest:
    """The request; ``members`` may mix single members and ``client(...)`` lists. ``explain``
    asks for the reasons of every placement in the answer (``AssignResponse.explanation``)."""
    flat: list[pb.MemberSubscription] = []
    for m in members:
        flat.extend([m] if isinstance(m, pb.MemberSubscription) else m)
    out = pb.AssignRequest(
        group_id=group_id, members=flat, tasks=list(tasks), now_ms=now_ms, explain=explain
    )
    if configs is not None:
        out.configs.CopyFrom(configs)
    return out


def _wire() -> ModuleType:
    """Kafka's byte formats (``kassign_client.kafka_bytes``), loaded only when bytes are asked for."""
    from kassign_client import kafka_bytes

    return kafka_bytes
