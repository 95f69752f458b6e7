"""An ``explain.Explanation`` as the contract's messages (``AssignResponse.explanation`` and
``AssignmentReport.moves``): only when the request asked, so a default answer keeps its bytes."""

from __future__ import annotations

from kassign.assignor.streams.explain import (
    ClientStory,
    Explanation,
    Placement,
    ReplicaKind,
    TaskStory,
)
from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.moves import MoveCounts
from kassign.server.placement import RULES
from kassign.v1 import assignment_pb2 as pb

__all__ = ["add_explanation", "move_counts_message"]

_KINDS = {
    ReplicaKind.ACTIVE: pb.REPLICA_KIND_ACTIVE,
    ReplicaKind.STANDBY: pb.REPLICA_KIND_STANDBY,
    ReplicaKind.WARM_UP: pb.REPLICA_KIND_WARM_UP,
}


def add_explanation(response: pb.AssignResponse, explanation: Explanation) -> None:
    """Fill ``response.explanation`` and ``response.report.moves`` from ``explanation``."""
    response.report.moves.CopyFrom(move_counts_message(explanation.moves))
    message = response.explanation
    message.acceptable_recovery_lag = explanation.acceptable_recovery_lag
    for client in explanation.clients:
        _add_client(message, client)
    for task in explanation.tasks:
        _add_task(message, task)


def move_counts_message(moves: MoveCounts) -> pb.MoveCounts:
    return pb.MoveCounts(
        stateful_actives=moves.stateful_actives,
        stateless_actives=moves.stateless_actives,
        standbys=moves.standbys,
        warmups=moves.warmups,
    )


def _add_client(message: pb.Explanation, client: ClientStory) -> None:
    entry = message.clients.add(
        process_id=str(client.process_id),
        rack_id=client.rack_id or "",
        tags=[pb.ClientTag(key=k, value=v) for k, v in client.tags],
        threads=client.threads,
    )
    if client.load is not None:  # balance LOAD only: a COUNT explanation keeps its bytes
        entry.load = client.load
        entry.capacity = float(client.threads)


def _task_id(task: TaskId) -> pb.TaskId:
    return pb.TaskId(
        subtopology=task.subtopology,
        partition=task.partition,
        named_topology=task.named_topology or "",
    )


def _add_task(message: pb.Explanation, story: TaskStory) -> None:
    entry = message.tasks.add(
        task=_task_id(story.task),
        stateful=story.stateful,
        previous_active=[str(p) for p in story.previous_active],
        previous_standby=[str(p) for p in story.previous_standby],
        changelog_end_offset_sum=story.end_offset_sum,
    )
    for lag in story.lags:
        entry.lags.add(process_id=str(lag.process_id), lag=lag.lag, caught_up=lag.caught_up)
    for placement in story.placements:
        _add_placement(entry, placement)


def _add_placement(entry: pb.TaskExplanation, placement: Placement) -> None:
    entry.placements.add(
        kind=_KINDS[placement.kind],
        process_id=str(placement.process_id),
        rule=RULES[placement.rule],
        reason=placement.reason,
        moved=placement.moved,
    )
