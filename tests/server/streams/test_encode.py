"""The response encoder: Java UUID order, sorted members/tasks, Kafka's partitions, the report."""

from __future__ import annotations

from uuid import UUID

import pytest
from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    MemberAssignment,
    RackStatus,
    task_assignment,
)
from kassign.assignor.streams.validate import AssignmentError
from kassign.server.streams.decode.request import DecodedRequest, decode_request
from kassign.server.streams.encode import (
    Timings,
    canonical_bytes,
    encode_response,
    without_timings,
)
from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

LOW = UUID("00000000-0000-0000-0000-000000000001")
HIGH_BIT = UUID("f0000000-0000-0000-0000-000000000000")  # negative as a Java long: sorts first
MID = UUID("80000000-0000-0000-0000-000000000000")  # the most negative: sorts before HIGH_BIT


def _decoded() -> DecodedRequest:
    tasks = [
        build.task(0, p, source=["in"], changelog=["app-store-changelog"], end_offset_sum=100)
        for p in range(3)
    ]
    members = [
        build.client(LOW, threads=["low-b", "low-a"], previous_active=["0_0"], rack="r1"),
        build.client(HIGH_BIT, threads=["high"], offset_sums={"0_1": 100}, rack="r2"),
        build.client(MID, threads=["mid"], end_point="mid-host:9000", rack="r3"),
    ]
    return decode_request(build.request(members, tasks, now_ms=1_000), now_ms=1_000)


T0, T1, T2 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)


def _assignment(diagnostics: Diagnostics | None = None):  # type: ignore[no-untyped-def]
    return task_assignment(
        [
            KafkaStreamsAssignment.of(LOW, active=[T2], standby=[T1]),
            KafkaStreamsAssignment.of(HIGH_BIT, active=[T0], standby=[T2]),
            KafkaStreamsAssignment.of(
                MID, active=[T1], standby=[T0], followup_rebalance_deadline_ms=5_000
            ),
        ],
        diagnostics,
    )


MEMBERS = (
    MemberAssignment("mid", MID, active=(T1,), standby=(T0,)),
    MemberAssignment("low-b", LOW, standby=(T1,)),
    MemberAssignment("low-a", LOW, active=(T2,)),
    MemberAssignment("high", HIGH_BIT, active=(T0,), standby=(T2,)),
)


def test_clients_in_java_uuid_order_with_rack_members_and_endpoint() -> None:
    response = encode_response(_decoded(), _assignment(), MEMBERS)
    assert [c.process_id for c in response.clients] == [str(MID), str(HIGH_BIT), str(LOW)]
    mid, _, low = response.clients
    assert (mid.rack_id, mid.user_end_point, mid.followup_rebalance_deadline_ms) == (
        "r3",
        "mid-host:9000",
        5_000,
    )
    assert list(low.member_ids) == ["low-a", "low-b"]
    assert low.followup_rebalance_deadline_ms == 0


def test_members_sorted_and_given_source_partitions_for_active_and_standby_tasks() -> None:
    response = encode_response(_decoded(), _assignment(), MEMBERS)
    assert [m.member_id for m in response.members] == ["high", "low-a", "low-b", "mid"]
    high = response.members[0]
    assert [(t.subtopology, t.partition) for t in high.active_tasks] == [(0, 0)]
    assert [(p.topic, p.partition) for p in high.active_partitions] == [("in", 0)]
    # like Kafka's AssignmentInfo: a standby task comes with its source partitions, no changelog
    assert [(p.topic, p.partition) for p in high.standby_partitions] == [("in", 2)]
    assert high.process_id == str(HIGH_BIT)


def test_moved_counts_only_tasks_with_a_previous_owner_and_standbys_without_state() -> None:
    decoded = _decoded()
    # 0_0 was active on LOW and is now on HIGH_BIT: moved. 0_1, 0_2 had no previous active.
    # standbys: LOW gets 0_1 (no state there), HIGH_BIT 0_2 (none), MID 0_0 (none): 3.
    assert moved_counts(decoded.state, _assignment()) == (1, 3)
    stay = task_assignment(
        [
            KafkaStreamsAssignment.of(LOW, active=[T0]),
            KafkaStreamsAssignment.of(HIGH_BIT, active=[T2], standby=[T1]),
            KafkaStreamsAssignment.of(MID, active=[T1]),
        ]
    )
    assert moved_counts(decoded.state, stay) == (0, 0)


def test_report_carries_diagnostics_notes_and_counts() -> None:
    diagnostics = Diagnostics(
        warmups=2,
        rack_status=RackStatus.OPTIMAL,
        cross_rack_cost_before=9,
        cross_rack_cost_after=4,
        notes=("from the assignor",),
    )
    response = encode_response(
        _decoded(), _assignment(diagnostics), MEMBERS, timings=Timings(0.5, 0.75)
    )
    r = response.report
    assert (r.assignor, r.tasks, r.clients, r.warmups) == ("high_availability", 3, 3, 2)
    assert (r.rack_optimisation, r.cross_rack_cost_before, r.cross_rack_cost_after) == (
        "optimal",
        9,
        4,
    )
    assert (r.rack_status, r.rack_reason) == (pb.RACK_OPTIMISATION_OPTIMAL, "")
    assert r.followup_scheduled and not r.solver_fallback
    assert r.rack_aware_strategy == "none"
    assert list(r.notes)[-1] == "from the assignor"
    assert (r.assign_seconds, r.total_seconds) == (0.5, 0.75)
    assert response.error == pb.ASSIGNMENT_ERROR_NONE


@pytest.mark.parametrize("status", list(RackStatus))
def test_every_rack_status_has_its_contract_value_and_the_same_string(status: RackStatus) -> None:
    reason = "" if status in (RackStatus.OFF, RackStatus.OPTIMAL) else "why"
    diagnostics = Diagnostics(rack_status=status, rack_reason=reason)
    r = encode_response(_decoded(), _assignment(diagnostics), MEMBERS).report
    assert pb.RackOptimisation.Name(r.rack_status) == f"RACK_OPTIMISATION_{status.name}"
    assert r.rack_reason == reason
    assert r.rack_optimisation == status.name.lower() + (": why" if reason else "")


def test_timings_are_the_only_difference_canonical_bytes_ignore() -> None:
    decoded = _decoded()
    a = encode_response(decoded, _assignment(), MEMBERS, timings=Timings(0.1, 0.2))
    b = encode_response(decoded, _assignment(), tuple(reversed(MEMBERS)), timings=Timings(3.0, 4.0))
    assert a.SerializeToString(deterministic=True) != b.SerializeToString(deterministic=True)
    assert canonical_bytes(a) == canonical_bytes(b)
    assert without_timings(a).report.total_seconds == 0.0 and a.report.total_seconds == 0.2


@pytest.mark.parametrize("error", list(AssignmentError))
def test_every_validation_error_maps_to_the_proto_enum_by_name(error: AssignmentError) -> None:
    response = encode_response(_decoded(), _assignment(), (), error=error)
    assert pb.AssignmentError.Name(response.error) == f"ASSIGNMENT_ERROR_{error.name}"
    assert list(response.members) == []
