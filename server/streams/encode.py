"""The assignor's answer as an ``AssignResponse``: sorted, complete, the same bytes every time.

Clients come in Java UUID order, members by member id, tasks and partitions sorted. The only
fields that vary between two runs of one request are the report's ``assign_seconds`` and
``total_seconds``; ``without_timings`` / ``canonical_bytes`` (``kassign.server.timings``, shared
with the consumer room) compare responses without them.

Partitions follow Kafka's ``StreamsPartitionAssignor``: a member gets the source partitions of
its active tasks, and for each standby task the same source partitions (Kafka's AssignmentInfo
maps a standby task to its source partitions; the standby restores from the changelogs the
topology names, which the member knows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeAlias, cast

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.explain import Explanation
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import (
    KafkaStreamsAssignment,
    MemberAssignment,
    RackStatus,
    TaskAssignment,
)
from kassign.server.streams.explain import add_explanation
from kassign.server.timings import Timings, canonical_bytes, set_timings, without_timings
from kassign.v1 import assignment_pb2 as pb

if TYPE_CHECKING:
    from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
    from kassign.server.streams.decode.request import DecodedRequest

    RepeatedClients: TypeAlias = RepeatedCompositeFieldContainer[pb.ClientAssignment]
    RepeatedMembers: TypeAlias = RepeatedCompositeFieldContainer[pb.MemberAssignment]

__all__ = [
    "Timings",
    "canonical_bytes",
    "encode_response",
    "error_value",
    "set_timings",
    "without_timings",
]

_RACK_STATUS = {
    RackStatus.OFF: pb.RACK_OPTIMISATION_OFF,
    RackStatus.DISABLED: pb.RACK_OPTIMISATION_DISABLED,
    RackStatus.OPTIMAL: pb.RACK_OPTIMISATION_OPTIMAL,
    RackStatus.FALLBACK: pb.RACK_OPTIMISATION_FALLBACK,
}
"""The model's rack status as the contract's enum (one entry each; a test checks it is total)."""
_NO_TIMINGS = Timings(0.0, 0.0)


def encode_response(
    decoded: DecodedRequest,
    assignment: TaskAssignment,
    members: Sequence[MemberAssignment],
    *,
    error: object = None,
    timings: Timings = _NO_TIMINGS,
    explanation: Explanation | None = None,
) -> pb.AssignResponse:
    """The response for ``assignment`` of ``decoded``'s group, members already distributed;
    with ``explanation`` (asked for), its message and the report's moves split too."""
    state = decoded.state
    table = _TaskTable(state)
    response = pb.AssignResponse(error=error_value(error), report=_report(decoded, assignment))
    for client in sorted(assignment.assignments, key=lambda a: process_key(a.process_id)):
        _add_client(response.clients, state, table, client)
    for member in sorted(members, key=lambda m: m.member_id):
        _add_member(response.members, table, member)
    if explanation is not None:
        add_explanation(response, explanation)
    set_timings(response, timings)
    return response


def error_value(error: object) -> pb.AssignmentError:
    """The proto ``AssignmentError`` for a validation result (an enum with KIP-924 names)."""
    name = getattr(error, "name", None) or "NONE"
    # types-protobuf types EnumTypeWrapper.Value as a bare int; the number is an AssignmentError.
    return cast("pb.AssignmentError", pb.AssignmentError.Value(f"ASSIGNMENT_ERROR_{name}"))


def _task(task: TaskId) -> pb.TaskId:
    return pb.TaskId(
        subtopology=task.subtopology,
        partition=task.partition,
        named_topology=task.named_topology or "",
    )


_Entry = tuple[pb.TaskId, tuple[tuple[str, int], ...]]


class _TaskTable:
    """Per-task (message, source partitions) and per-partition messages, built once per response.

    Large groups list each task several times (client, member, partitions); one lookup per
    listing keeps encoding linear, and messages are built once and copied where listed (adding
    to a repeated field copies anyway). A task the topology does not know (only in a rejected
    assignment) still encodes, sorted after the known ones.
    """

    def __init__(self, state: ApplicationState) -> None:
        self._entries: dict[TaskId, _Entry] = {
            t: (
                _task(t),
                tuple((p.topic, p.partition) for p in info.topic_partitions if p.is_source),
            )
            for t, info in state.tasks.items()
        }
        self._partitions: dict[tuple[str, int], pb.TopicPartition] = {}

    def entries(self, tasks: Iterable[TaskId]) -> list[_Entry]:
        """Known tasks in task order, then unknown ones in task order."""
        ordered = sorted(tasks)
        found = [self._entries[t] for t in ordered if t in self._entries]
        if len(found) < len(ordered):
            found += [(_task(t), ()) for t in ordered if t not in self._entries]
        return found

    def sources(self, entries: list[_Entry]) -> list[pb.TopicPartition]:
        """The source partitions of ``entries``, sorted, each once."""
        found = sorted({tp for e in entries for tp in e[1]})
        return [self._partition(topic, partition) for topic, partition in found]

    def _partition(self, topic: str, partition: int) -> pb.TopicPartition:
        message = self._partitions.get((topic, partition))
        if message is None:
            message = self._partitions[(topic, partition)] = pb.TopicPartition(
                topic=topic, partition=partition
            )
        return message


def _messages(entries: list[_Entry]) -> list[pb.TaskId]:
    return [e[0] for e in entries]


def _add_client(
    clients: RepeatedClients,
    state: ApplicationState,
    table: _TaskTable,
    client: KafkaStreamsAssignment,
) -> None:
    """Append the client's entry (built in place: appending a built message would copy it)."""
    known = state.clients.get(client.process_id)
    clients.add(
        process_id=str(client.process_id),
        active_tasks=_messages(table.entries(client.active)),
        standby_tasks=_messages(table.entries(client.standby)),
        followup_rebalance_deadline_ms=client.followup_rebalance_deadline_ms or 0,
        rack_id=(known.rack_id or "") if known else "",
        member_ids=sorted(known.consumer_ids) if known else [],
        user_end_point=(known.host_info or "") if known else "",
    )


def _add_member(members: RepeatedMembers, table: _TaskTable, member: MemberAssignment) -> None:
    active, standby = table.entries(member.active), table.entries(member.standby)
    members.add(
        member_id=member.member_id,
        process_id=str(member.process_id),
        active_tasks=_messages(active),
        standby_tasks=_messages(standby),
        active_partitions=table.sources(active),
        standby_partitions=table.sources(standby),
    )


def _report(decoded: DecodedRequest, assignment: TaskAssignment) -> pb.AssignmentReport:
    state = decoded.state
    diagnostics = assignment.diagnostics
    active_moved, standby_moved = moved_counts(state, assignment)
    return pb.AssignmentReport(
        assignor=state.configs.assignor,
        tasks=len(state.tasks),
        clients=len(state.clients),
        active_tasks_moved=active_moved,
        standby_tasks_moved=standby_moved,
        warmups=diagnostics.warmups,
        followup_scheduled=assignment.followup_scheduled,
        rack_aware_strategy=state.configs.rack_aware_strategy.value,
        rack_optimisation=diagnostics.rack_optimisation,
        rack_status=_RACK_STATUS[diagnostics.rack_status],
        rack_reason=diagnostics.rack_reason,
        cross_rack_cost_before=diagnostics.cross_rack_cost_before,
        cross_rack_cost_after=diagnostics.cross_rack_cost_after,
        solver_fallback=diagnostics.solver_fallback,
        notes=list(decoded.notes) + list(diagnostics.notes),
    )
