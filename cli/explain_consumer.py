"""A plain consumer group's answer told like a Streams group's: members for clients, partitions for
tasks, one replica each (``kassign explain --kind consumer``).

Why the same model: the stories, the diff and the page then serve both rooms unchanged. Everything
comes from the answer's ``explanation`` (``ConsumerAssignRequest.explain``): each member's rack,
each partition's previous owners, replica racks, member and reason. A partition moved when some
member owned it and another has it now; a cooperative rebalance withholds a moving partition for
a round (its owner revokes it first), so it has no replica and says why instead.
"""

from __future__ import annotations

from kassign.cli.explain_load import group_load
from kassign.cli.explain_model import (
    CONSUMER,
    ClientView,
    GroupView,
    Kind,
    ReplicaView,
    TaskView,
    rule_word,
)
from kassign.v1 import common_pb2 as common
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["ExplanationMissing", "consumer_view", "partition_name"]


class ExplanationMissing(ValueError):
    """The answer carries no explanation: a consumer group's story is told from it alone."""


def partition_name(tp: common.TopicPartition) -> str:
    """Kafka's spelling, ``orders-3``."""
    return f"{tp.topic}-{tp.partition}"


def _task(p: cpb.PartitionExplanation, racks: dict[str, str]) -> TaskView:
    name = partition_name(p.partition)
    replicas: tuple[ReplicaView, ...] = ()
    if p.member_id:
        rack = racks.get(p.member_id, "")
        replicas = (
            ReplicaView(
                kind=Kind.ACTIVE,
                process_id=p.member_id,
                moved=bool(p.previous_owners) and p.member_id not in p.previous_owners,
                cross_rack=int(bool(rack and p.replica_racks and rack not in p.replica_racks)),
                rule=rule_word(p.rule),
                reason=p.reason,
            ),
        )
    return TaskView(
        name=name,
        subtopology=p.partition.topic,
        stateful=False,
        end_offset_sum=0,
        previous_active=tuple(p.previous_owners),
        previous_standby=(),
        lags=(),
        replicas=replicas,
        partitions=((name, f"racks {' '.join(p.replica_racks) or 'unknown'}"),),
        withheld="" if p.member_id else (p.reason or "withheld this round"),
        load=p.load if p.HasField("load") else None,
    )


def _options(request: cpb.ConsumerAssignRequest) -> tuple[tuple[str, str], ...]:
    shown = [("assignor", request.assignor or "-")]
    shown += [(f.name, str(value)) for f, value in request.options.ListFields()]
    return tuple(shown)


def consumer_view(
    request: cpb.ConsumerAssignRequest, response: cpb.ConsumerAssignResponse
) -> GroupView:
    """The answer to ``request`` told; ``ExplanationMissing`` when it carries no explanation."""
    if not response.HasField("explanation"):
        raise ExplanationMissing(
            "the answer carries no explanation (a service from before ConsumerAssignRequest.explain)"
        )
    explanation = response.explanation
    racks = {m.member_id: m.rack_id for m in explanation.members}
    tasks = tuple(_task(p, racks) for p in explanation.partitions)
    owned: dict[str, list[str]] = {}
    for task in tasks:
        for owner in task.previous_active:
            owned.setdefault(owner, []).append(task.name)
    clients = tuple(
        ClientView(
            process_id=m.member_id,
            rack=m.rack_id,
            zone="",
            tags=(),
            threads=1,
            members=(m.member_id,),
            followup_ms=0,
            previous_active=tuple(owned.get(m.member_id, ())),
            previous_standby=(),
            load=m.load if m.HasField("load") else None,
            capacity=m.capacity if m.HasField("capacity") else None,
        )
        for m in explanation.members
    )
    return GroupView(
        group_id=request.group_id,
        now_ms=0,
        assignor=response.report.assignor,
        acceptable_recovery_lag=0,
        num_standby_replicas=0,
        explained=True,
        configs=_options(request),
        clients=clients,
        tasks=tasks,
        notes=tuple(response.report.notes),
        words=CONSUMER,
        load=group_load(response.report),
    )
