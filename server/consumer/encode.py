"""``GroupAssignment`` -> ``ConsumerAssignResponse``: sorted, deterministic, with Kafka's bytes.

The same bytes for the same request but the report's two timings (``set_timings``,
``without_timings``, ``canonical_bytes``: ``kassign.server.timings``, shared with the Streams room).

Members come in member-id order (Java ``String`` order, as the library lists them), partitions
and revoked partitions sorted. Each member's ``assignment`` is the ConsumerProtocolAssignment a
Kafka 4.3.1 leader writes (``ConsumerProtocol.serializeAssignment``: version 3, no userData,
as Kafka's four assignors return none) for the member's sorted partitions. Kafka's assignors
hand the leader their lists in their own internal orders, which the consumer discards (it reads
them into a sorted set), so sorted is the one order that costs nothing and never varies.
"""

from __future__ import annotations

import operator

from kassign.assignor.consumer.api import KAFKA_ASSIGNORS
from kassign.assignor.consumer.common import partitions_per_topic, subscribed_topics
from kassign.assignor.consumer.result import GroupAssignment, RackStatus
from kassign.assignor.load.figures import Balance
from kassign.kafka.consumer_protocol import AssignmentEncoder
from kassign.server.consumer.compact_wire import compact_members_wire, topic_table
from kassign.server.consumer.decode import DecodedConsumerRequest
from kassign.server.consumer.group_bytes import (
    FlatPartitions,
    assignment_bytes,
    flat_columns,
    flat_partitions,
)
from kassign.server.consumer.members_wire import members_wire
from kassign.server.consumer.response_wire import ConsumerWireResponse
from kassign.server.load_figures import load_message
from kassign.server.timings import Timings, canonical_bytes, set_timings, without_timings
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "ConsumerWireResponse",
    "Timings",
    "canonical_bytes",
    "encode_response",
    "set_timings",
    "without_timings",
]

_RACK_STATUS = {
    RackStatus.OFF: common_pb2.RACK_OPTIMISATION_OFF,
    RackStatus.OPTIMAL: common_pb2.RACK_OPTIMISATION_OPTIMAL,
    RackStatus.FALLBACK: common_pb2.RACK_OPTIMISATION_FALLBACK,
}
"""The library's solver status as the contract's enum (OFF for Kafka's four: no solver runs)."""

_NOTED_TOPICS = 10


def encode_response(
    decoded: DecodedConsumerRequest, assignment: GroupAssignment
) -> ConsumerWireResponse:
    """The response, timings left at zero (``set_timings`` fills them in the head once the
    call is done).

    The members are written as wire bytes for the whole group (``members_wire``: a message
    per partition added one by one costs several times more) and sent as they are
    (``ConsumerWireResponse``)."""
    members = assignment.members
    columns = assignment.columns
    flat = (
        flat_columns(columns)
        if columns is not None
        else flat_partitions([m.partitions for m in members])
    )
    if decoded.compact_answer:
        return _compact(decoded, assignment, flat)
    kafka = assignment_bytes(flat)
    if kafka is None:  # lists not sorted (never ``group_assignment``'s): one by one
        lists = [sorted(m.partitions) for m in members]
        flat, encoder = flat_partitions(lists), AssignmentEncoder()
        kafka = [encoder.encode(partitions) for partitions in lists]
    revoked = [sorted(m.revoked) for m in members]
    head = cpb.ConsumerAssignResponse(report=_report(decoded, assignment, flat))
    wire = members_wire([m.member_id for m in members], flat, revoked, kafka)
    return ConsumerWireResponse(wire, head)


def _compact(
    decoded: DecodedConsumerRequest, assignment: GroupAssignment, flat: FlatPartitions
) -> ConsumerWireResponse:
    """The compact answer (``compact_wire``): runs by topic over a table of names, Kafka's
    bytes only when the request asks for them."""
    if not flat.sorted_lists():  # never ``group_assignment``'s
        flat = flat_partitions([sorted(m.partitions) for m in assignment.members])
    revoking = assignment.revoked_lists()  # none when nobody revokes: no lists to cut
    revoked = flat_partitions([sorted(r) for r in revoking])
    table = topic_table(flat, revoked)
    kafka = assignment_bytes(flat) if decoded.assignment_bytes else None
    head = cpb.ConsumerAssignResponse(report=_report(decoded, assignment, flat), topics=table)
    wire = compact_members_wire(assignment.member_ids(), flat, revoked, kafka, table)
    return ConsumerWireResponse(wire, head)


def _report(
    decoded: DecodedConsumerRequest,
    assignment: GroupAssignment,
    flat: FlatPartitions | None = None,
) -> cpb.ConsumerAssignmentReport:
    """The report; ``flat``, the members' lists when the caller has them, gives each member's
    count from its span (no call to each member's list)."""
    group, report = decoded.group, assignment.report
    counts = (
        [len(m.partitions) for m in assignment.members]
        if flat is None
        else list(map(operator.sub, flat.ends, flat.starts))
    )
    return cpb.ConsumerAssignmentReport(
        assignor=assignment.assignor,
        members=len(group.members),
        partitions=sum(partitions_per_topic(group).values()),
        moved_partitions=report.moved_partitions,
        revoked_partitions=sum(map(len, assignment.revoked_lists())),
        withheld_partitions=report.withheld_partitions,
        cross_rack_partitions_before=report.cross_rack_partitions_before,
        cross_rack_partitions_after=report.cross_rack_partitions,
        kafka_rack_aware=report.rack_aware,
        kafka_rack_reason=report.rack_reason.value,
        rack_status=_RACK_STATUS[report.rack_status],
        rack_reason=report.solver_reason,
        solver_fallback=report.solver_fallback,
        max_partitions_per_member=max(counts, default=0),
        min_partitions_per_member=min(counts, default=0),
        notes=[*_notes(decoded), *report.notes],
        load=load_message(report.load, decoded.load_source),
    )


def _notes(decoded: DecodedConsumerRequest) -> list[str]:
    """What the caller may not expect: options Kafka's assignors ignore, topics without
    metadata, where balance LOAD's loads came from when not from the request."""
    notes = []
    group = decoded.group
    missing = sorted(subscribed_topics(group.members).difference(group.topics))
    if missing:
        shown = ", ".join(missing[:_NOTED_TOPICS])
        more = f" and {len(missing) - _NOTED_TOPICS} more" if len(missing) > _NOTED_TOPICS else ""
        notes.append(f"subscribed topics without metadata, not assigned: {shown}{more}")
    by_load = decoded.options.balance is Balance.LOAD
    if decoded.assignor in KAFKA_ASSIGNORS and decoded.options_set and not by_load:
        notes.append(f"options ignored: {decoded.assignor} is Kafka's assignor, which has none")
    if decoded.loads_sent and not by_load:
        notes.append("partition loads and capacities ignored: balance is COUNT (options.balance)")
    notes.extend(decoded.load_notes)
    return notes
