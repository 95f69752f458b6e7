"""Output types: sorted task lists, follow-ups as new values, phase diagnostics merged sensibly."""

from uuid import UUID

from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    RackStatus,
    task_assignment,
)

P1 = UUID(int=1)
P_NEG = UUID("f0000000-0000-0000-0000-000000000000")  # negative as a Java long: sorts first


def test_assignment_sorts_tasks_and_follow_up_is_a_new_value() -> None:
    a = KafkaStreamsAssignment.of(P1, active=[TaskId(1, 0), TaskId(0, 3)], standby=[TaskId(0, 1)])
    assert a.active == (TaskId(0, 3), TaskId(1, 0))
    later = a.with_followup_rebalance(1_000)
    assert (
        later.followup_rebalance_deadline_ms == 1_000 and a.followup_rebalance_deadline_ms is None
    )
    assert [t.type.value for t in a.tasks] == ["ACTIVE", "ACTIVE", "STANDBY"]


def test_clients_in_java_uuid_order() -> None:
    result = task_assignment([KafkaStreamsAssignment.of(P1), KafkaStreamsAssignment.of(P_NEG)])
    assert [a.process_id for a in result.assignments] == [P_NEG, P1]
    assert not result.followup_scheduled


def _merge(*statuses: str) -> str:
    merged = Diagnostics()
    for status in statuses:
        name, _, reason = status.partition(": ")
        step = Diagnostics(rack_status=RackStatus[name.upper()], rack_reason=reason)
        merged = merged.merged(step)
    return merged.rack_optimisation


def test_merged_status_keeps_what_matters_most() -> None:
    assert _merge("off", "off") == "off"
    assert _merge("disabled: a", "disabled: b") == "disabled: a"
    assert _merge("optimal", "disabled: every standby is pinned", "optimal") == "optimal"
    assert _merge("optimal", "fallback: time budget", "optimal") == "fallback: time budget"
    assert _merge("disabled: x", "optimal") == "optimal"


def test_merged_adds_counts_and_costs() -> None:
    a = Diagnostics(warmups=1, cross_rack_cost_before=10, cross_rack_cost_after=4, notes=("a",))
    b = Diagnostics(
        warmups=2,
        cross_rack_cost_before=5,
        cross_rack_cost_after=5,
        solver_fallback=True,
        notes=("b",),
    )
    m = a.merged(b)
    assert (m.warmups, m.cross_rack_cost_before, m.cross_rack_cost_after) == (3, 15, 9)
    assert m.solver_fallback and m.notes == ("a", "b")
