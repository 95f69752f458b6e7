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

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.explain import Explanation
from kassign.assignor.streams.model import ApplicationState, TaskTable
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
    table_lists,
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
    head = pb.AssignResponse(error=error_value(error), report=_report(decoded, assignment))
    if explanation is not None:
        add_explanation(head, explanation)
    clients = sorted(assignment.assignments, key=lambda a: process_key(a.process_id))
    names = {c.process_id: str(c.process_id) for c in clients}  # a UUID's str takes 1-2 us
    lists = table_lists(
        _table(state),
        [_client(state, client, names[client.process_id]) for client in clients],
        [
            MemberEntry(
                m.member_id, names.get(m.process_id) or str(m.process_id), m.active, m.standby
            )
            for m in sorted(members, key=lambda m: m.member_id)
        ],
    )
    followups = [c.followup_rebalance_deadline_ms or 0 for c in clients]
    return WireResponse(head, lists, len(members), min((f for f in followups if f), default=0))


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


def _table(state: ApplicationState) -> TaskTable:
    """The state's tasks as a table (a library caller may hold them as a plain mapping)."""
    tasks = state.tasks
    return tasks if isinstance(tasks, TaskTable) else TaskTable.of(tasks.values())


def _client(
    state: ApplicationState, client: KafkaStreamsAssignment, process_id: str
) -> ClientEntry:
    known = state.clients.get(client.process_id)  # None only in a rejected assignment
    return ClientEntry(
        process_id,
        client.active,
        client.standby,
        client.followup_rebalance_deadline_ms or 0,
        (known.rack_id or "") if known else "",
        sorted(known.consumer_ids) if known else [],
        (known.host_info or "") if known else "",
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
