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
from typing import TYPE_CHECKING, cast

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.explain import Explanation
from kassign.assignor.streams.model import ApplicationState, TaskId, TaskTable
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import (
    KafkaStreamsAssignment,
    MemberAssignment,
    RackStatus,
    TaskAssignment,
)
from kassign.server.load_figures import load_message
from kassign.server.streams.explain import add_explanation
from kassign.server.streams.response_wire import (
    ClientEntry,
    MemberEntry,
    WireResponse,
    client_entry,
    member_entry,
)
from kassign.server.timings import Timings, canonical_bytes, set_timings, without_timings
from kassign.v1 import assignment_pb2 as pb

if TYPE_CHECKING:
    from kassign.server.streams.decode.request import DecodedRequest

__all__ = [
    "Timings",
    "canonical_bytes",
    "encode_response",
    "encode_wire",
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


def encode_wire(
    decoded: DecodedRequest,
    assignment: TaskAssignment,
    members: Sequence[MemberAssignment],
    *,
    error: object = None,
    explanation: Explanation | None = None,
) -> WireResponse:
    """The response for ``assignment`` of ``decoded``'s group, members already distributed,
    its lists as wire bytes (``response_wire.py``); with ``explanation`` (asked for), its
    message and the report's moves split too. Timings are the caller's to set, on ``head``."""
    state = decoded.state
    table = _TaskTable(state)
    head = pb.AssignResponse(error=error_value(error), report=_report(decoded, assignment))
    if explanation is not None:
        add_explanation(head, explanation)
    clients = sorted(assignment.assignments, key=lambda a: process_key(a.process_id))
    lists = [client_entry(_client(state, table, client)) for client in clients]
    lists += [member_entry(_member(table, m)) for m in sorted(members, key=lambda m: m.member_id)]
    followups = [c.followup_rebalance_deadline_ms or 0 for c in clients]
    return WireResponse(
        head, b"".join(lists), len(members), min((f for f in followups if f), default=0)
    )


def encode_response(
    decoded: DecodedRequest,
    assignment: TaskAssignment,
    members: Sequence[MemberAssignment],
    *,
    error: object = None,
    timings: Timings = _NO_TIMINGS,
    explanation: Explanation | None = None,
) -> pb.AssignResponse:
    """``encode_wire``'s response as one message, with ``timings`` set."""
    wire = encode_wire(decoded, assignment, members, error=error, explanation=explanation)
    set_timings(wire.head, timings)
    return wire.message()


def error_value(error: object) -> pb.AssignmentError:
    """The proto ``AssignmentError`` for a validation result (an enum with KIP-924 names)."""
    name = getattr(error, "name", None) or "NONE"
    # types-protobuf types EnumTypeWrapper.Value as a bare int; the number is an AssignmentError.
    return cast("pb.AssignmentError", pb.AssignmentError.Value(f"ASSIGNMENT_ERROR_{name}"))


class _TaskTable:
    """Tasks in the order the response lists them, and their source partitions.

    A task the topology does not know (only in a rejected assignment) still encodes, sorted
    after the known ones, with no partitions.
    """

    def __init__(self, state: ApplicationState) -> None:
        self._tasks = state.tasks
        self._ids = state.tasks.keys()

    def ordered(self, tasks: Iterable[TaskId]) -> list[TaskId]:
        """Known tasks in task order, then unknown ones in task order."""
        ordered, ids = sorted(tasks), self._ids
        known = [t for t in ordered if t in ids]
        if len(known) < len(ordered):
            known += [t for t in ordered if t not in ids]
        return known

    def sources(self, tasks: Iterable[TaskId]) -> list[tuple[str, int]]:
        """The source partitions of ``tasks``, sorted, each once."""
        infos = self._tasks
        if isinstance(infos, TaskTable):  # from its columns, building no TaskInfo
            return sorted({tp for t in tasks for tp in infos.source_partitions(t)})
        return sorted(
            {
                (p.topic, p.partition)
                for t in tasks
                if t in infos
                for p in infos[t].topic_partitions
                if p.is_source
            }
        )


def _client(
    state: ApplicationState, table: _TaskTable, client: KafkaStreamsAssignment
) -> ClientEntry:
    known = state.clients.get(client.process_id)
    return ClientEntry(
        process_id=str(client.process_id),
        active=table.ordered(client.active),
        standby=table.ordered(client.standby),
        followup_rebalance_deadline_ms=client.followup_rebalance_deadline_ms or 0,
        rack_id=(known.rack_id or "") if known else "",
        member_ids=sorted(known.consumer_ids) if known else [],
        user_end_point=(known.host_info or "") if known else "",
    )


def _member(table: _TaskTable, member: MemberAssignment) -> MemberEntry:
    active, standby = table.ordered(member.active), table.ordered(member.standby)
    return MemberEntry(
        member_id=member.member_id,
        process_id=str(member.process_id),
        active=active,
        standby=standby,
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
        notes=[*decoded.notes, *decoded.load_notes, *diagnostics.notes],
        load=load_message(diagnostics.load, decoded.load_source),
    )
