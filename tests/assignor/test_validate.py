"""KIP-924 validation: each rule caught, in a fixed order; every built-in result passes."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams import validate as validation
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.assignor.streams.sticky import StickyTaskAssignor
from kassign.assignor.streams.validate import AssignmentError, validate, validate_with_reason

from tests.assignor.builders import app_states, client, pid, state, tasks

T00, T01, T10 = tasks("0_0 0_1 1_0")
APP = state([client(1), client(2)], [T00, T01], [T10])  # 1_0 is stateless


def _of(*entries: tuple[UUID, list[TaskId], list[TaskId]]) -> TaskAssignment:
    return TaskAssignment(
        tuple(KafkaStreamsAssignment(p, tuple(a), tuple(s)) for p, a, s in entries)
    )


def test_a_sound_assignment_passes() -> None:
    result = _of((pid(1), [T00, T10], [T01]), (pid(2), [T01], [T00]))
    assert validate(APP, result) is AssignmentError.NONE
    assert validate_with_reason(APP, result) == (AssignmentError.NONE, "")


@pytest.mark.parametrize(
    ("result", "error"),
    [
        (
            _of((pid(1), [T00, T10], []), (pid(2), [T00, T01], [])),
            AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
        ),
        (
            _of((pid(1), [T00, T10], [T00]), (pid(2), [T01], [])),
            AssignmentError.TASK_ASSIGNED_TWICE_TO_CLIENT,
        ),
        (
            _of((pid(1), [T00, T10, T10], []), (pid(2), [T01], [])),
            AssignmentError.TASK_ASSIGNED_TWICE_TO_CLIENT,
        ),
        (
            _of((pid(1), [T00, T10], []), (pid(2), [T01], [T10])),
            AssignmentError.INVALID_STANDBY_TASK,
        ),
        (_of((pid(1), [T00, T01, T10], [])), AssignmentError.MISSING_PROCESS_ID),
        (
            _of((pid(1), [T00, T10], []), (pid(2), [T01], []), (pid(3), [], [])),
            AssignmentError.UNKNOWN_PROCESS_ID,
        ),
        (
            _of((pid(1), [T00, T10], []), (pid(2), [T01, tasks("7_7")[0]], [])),
            AssignmentError.UNKNOWN_TASK_ID,
        ),
        (_of((pid(1), [T00], []), (pid(2), [T01], [])), AssignmentError.ACTIVE_TASK_UNASSIGNED),
    ],
)
def test_each_rule(result: TaskAssignment, error: AssignmentError) -> None:
    found, why = validate_with_reason(APP, result)
    assert found is error
    assert why


def test_first_rule_broken_wins() -> None:
    """Both a doubled active and an unknown client: Kafka checks the doubled active first."""
    result = _of((pid(1), [T00, T10], []), (pid(2), [T00, T01], []), (pid(9), [], []))
    assert validate(APP, result) is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES


def test_the_order_of_clients_does_not_change_the_verdict() -> None:
    a = _of((pid(1), [T00, T10], []), (pid(2), [T01], [T10]), (pid(3), [], []))
    b = TaskAssignment(tuple(reversed(a.assignments)))
    assert validate_with_reason(APP, a) == validate_with_reason(APP, b)


def test_values_match_the_proto_numbers() -> None:
    assert [e.value for e in AssignmentError] == list(range(8))


@settings(max_examples=40, deadline=None)
@given(app_states(max_clients=6, max_tasks=12))
def test_sticky_results_always_pass(app: ApplicationState) -> None:
    assert validate(app, StickyTaskAssignor().assign(app)) is AssignmentError.NONE


def test_empty_group_with_no_tasks_is_valid() -> None:
    assert validate(state([]), task_assignment([])) is AssignmentError.NONE


def test_the_explanation_names_the_first_offending_task_in_task_order() -> None:
    # each list below holds its two offenders in reverse order; the sentence names the smaller
    app = state([client(1), client(2)], [T00, T01], tasks("1_0 1_1"))
    t10, t11 = tasks("1_0 1_1")
    stateless_standby = _of((pid(1), [T00, t10, t11], []), (pid(2), [T01], [t11, t10]))
    error, why = validate_with_reason(app, stateless_standby)
    assert error is AssignmentError.INVALID_STANDBY_TASK and why.endswith("stateless task 1_0")
    u7, u8 = tasks("7_7 8_8")
    unknown = _of((pid(1), [T00, t10, t11], []), (pid(2), [T01, u8, u7], []))
    error, why = validate_with_reason(app, unknown)
    assert error is AssignmentError.UNKNOWN_TASK_ID and why.endswith("unknown task 7_7")
    unassigned = _of((pid(1), [t11, t10], [T01]), (pid(2), [], [T00]))
    error, why = validate_with_reason(app, unassigned)
    assert (
        error is AssignmentError.ACTIVE_TASK_UNASSIGNED and why == "task 0_0 has no active client"
    )


@settings(max_examples=150, deadline=None)
@given(app_states(max_clients=4, max_tasks=8), st.data())
def test_the_whole_set_pass_agrees_with_every_check_in_order(
    app: ApplicationState, data: st.DataObject
) -> None:
    # a sound answer (sticky's), then a few edits that may break any rule, or none
    lists = {
        c.process_id: (list(c.active), list(c.standby))
        for c in StickyTaskAssignor().assign(app).assignments
    }
    pids = sorted(lists)
    known = sorted(app.tasks, key=lambda t: t.sort_key)
    anything = st.sampled_from([*known, tasks("7_7")[0]])
    for _ in range(data.draw(st.integers(0, 2))):
        edit = data.draw(
            st.sampled_from(["add", "drop", "swap", "standby", "client", "unknown client"])
        )
        active, standby = lists[data.draw(st.sampled_from(pids))]
        if edit == "add":
            active.append(data.draw(anything))
        elif edit == "drop" and active:
            active.pop(data.draw(st.integers(0, len(active) - 1)))
        elif edit == "swap" and active:
            active[data.draw(st.integers(0, len(active) - 1))] = data.draw(anything)
        elif edit == "standby":
            standby.append(data.draw(anything))
        elif edit == "client":
            del lists[data.draw(st.sampled_from(pids))]
            pids = sorted(lists) or [pid(9)]
            lists.setdefault(pids[0], ([], []))
        elif edit == "unknown client":
            lists[pid(9)] = ([], [])
    result = _of(*((p, a, s) for p, (a, s) in lists.items()))
    assert validate_with_reason(app, result) == validation._first_fault(
        app, validation._held_lists(result)
    )
