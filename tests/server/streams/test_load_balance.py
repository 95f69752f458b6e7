"""Issue 25 through the service: ``TaskInfo.load`` / ``state_bytes`` and ``configs.balance``
decoded and checked, the report's ``load`` figures, the same bytes twice, counting unchanged."""

from __future__ import annotations

import math

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import Balance, TaskId
from kassign.server.streams.decode import decode_request
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.server.requests import group


def _loaded(balance: int = pb.BALANCE_LOAD) -> pb.AssignRequest:
    """Three clients of two threads, six stateful and six stateless tasks; 0_0 is hot."""
    request = group()
    for task in request.tasks:
        task.load = 50.0 if (task.id.subtopology, task.id.partition) == (0, 0) else 1.0
        task.state_bytes = 1000 * task.id.partition
    request.configs.balance = balance  # type: ignore[assignment]
    return request


def test_loads_reach_the_model_and_the_report() -> None:
    outcome = assign_request(_loaded())
    state = outcome.decoded.state
    assert state.configs.balance is Balance.LOAD
    assert state.task_loads.load_of(TaskId(0, 0)) == 50.0
    assert state.task_loads.state_of(TaskId(0, 3)) == 3000
    load = outcome.response.report.load
    assert load.source == "request"
    assert load.bound == 25.0  # the hot task on one client of two threads
    assert load.peak == 25.0
    assert load.mean == pytest.approx(61 / 6)


def test_same_request_twice_gives_the_same_bytes() -> None:
    first, second = assign_request(_loaded()), assign_request(_loaded())
    assert canonical_bytes(first.response) == canonical_bytes(second.response)


def test_count_ignores_loads_with_a_note_and_answers_as_before() -> None:
    plain = assign_request(group()).response
    ignored = assign_request(_loaded(pb.BALANCE_COUNT)).response
    assert not ignored.report.HasField("load")
    assert ignored.report.notes == [
        *plain.report.notes,
        "task loads and state bytes ignored: balance is COUNT (configs.balance)",
    ]
    del ignored.report.notes[:]
    del plain.report.notes[:]
    assert canonical_bytes(ignored) == canonical_bytes(plain)


@pytest.mark.parametrize("load", [-1.0, math.nan, math.inf])
def test_a_bad_load_names_the_field_and_the_task(load: float) -> None:
    request = _loaded()
    request.tasks[2].load = load
    with pytest.raises(InvalidRequest) as err:
        decode_request(request, now_ms=1)
    assert err.value.field == "tasks[2].load"
    assert "task 0_2" in str(err.value)


def test_negative_state_bytes_name_the_field() -> None:
    request = _loaded(pb.BALANCE_COUNT)  # checked whatever the balance
    request.tasks[7].state_bytes = -5
    with pytest.raises(InvalidRequest) as err:
        decode_request(request, now_ms=1)
    assert err.value.field == "tasks[7].state_bytes"
    assert "task 1_1" in str(err.value)


def test_an_unknown_balance_names_the_config() -> None:
    request = _loaded()
    request.configs.balance = 9  # type: ignore[assignment]
    with pytest.raises(InvalidRequest) as err:
        decode_request(request, now_ms=1)
    assert err.value.field == "configs.balance"


def test_an_explanation_of_the_load_mode_is_given() -> None:
    """Each client's load and capacity (threads) under LOAD, none under COUNT; no rules of its
    own yet (docs/load-aware.md), but every task is still explained."""
    request = _loaded()
    request.explain = True
    response = assign_request(request).response
    assert response.report.load.peak == 25.0
    assert len(response.explanation.tasks) == len(request.tasks)
    clients = response.explanation.clients
    assert sum(c.load for c in clients) == 61.0  # every task's load, once
    assert max(c.load / c.capacity for c in clients) == response.report.load.peak
    counted = _loaded(pb.BALANCE_COUNT)
    counted.explain = True
    assert not assign_request(counted).response.explanation.clients[0].HasField("load")
