"""One log line per assignment, and a warning per refused request, through a real server."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from kassign.server.observe.calllog import CallLog, Observers, describe
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc

from tests.server.requests import group
from tests.server.running import in_process
from tests.server.streams.test_servicer import Recorder

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _assign(target: str, request: pb.AssignRequest) -> pb.AssignResponse:
    with grpc.insecure_channel(target) as channel:
        response: pb.AssignResponse = assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(
            request, timeout=60
        )
        return response


def test_each_answer_is_one_info_line_with_what_the_report_says(
    caplog: pytest.LogCaptureFixture,
) -> None:
    request = json_format.Parse(
        (EXAMPLES / "kip441-scale-out.json").read_text(), pb.AssignRequest()
    )
    recorder = Recorder()
    observers = Observers((recorder, CallLog()))
    with (
        in_process(observer=observers) as (_, target),
        caplog.at_level(logging.INFO, logger="kassign.calls"),
    ):
        response = _assign(target, request)
    lines = [r for r in caplog.records if r.name == "kassign.calls"]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO
    text = lines[0].getMessage()
    report = response.report
    assert text.startswith(f"assigned group {request.group_id!r} (high_availability): ")
    assert (
        f"{report.tasks} tasks, {report.clients} clients, {len(response.members)} members" in text
    )
    moved = f"moved {report.active_tasks_moved} active, {report.standby_tasks_moved} standby"
    assert moved in text and f"{report.warmups} warm-ups" in text
    deadline = max(c.followup_rebalance_deadline_ms for c in response.clients)
    assert deadline > 0 and f"follow-up rebalance at {deadline}" in text
    assert re.search(r"; \d+\.\d ms$", text)
    # Observers tells every observer, in order: the recorder heard the whole call too.
    assert ("decoded", request.group_id) in recorder.events
    assert recorder.events[-1] == ("success", None)


def test_a_refused_request_is_a_warning_naming_field_and_member(
    caplog: pytest.LogCaptureFixture,
) -> None:
    request = group()
    request.members[1].subscription.info.process_id = "not-a-uuid"
    member = request.members[1].member_id
    with (
        in_process(observer=CallLog()) as (_, target),
        caplog.at_level(logging.INFO, logger="kassign.calls"),
        pytest.raises(grpc.RpcError),
    ):
        _assign(target, request)
    (line,) = [r for r in caplog.records if r.name == "kassign.calls"]
    assert line.levelno == logging.WARNING
    message = line.getMessage()
    assert message.startswith("refused a request: INVALID_ARGUMENT: ")
    assert member in message and "process_id" in message


def test_a_steady_group_says_no_follow_up() -> None:
    head = pb.AssignResponse(report=pb.AssignmentReport(assignor="sticky"))
    assert "; no follow-up;" in describe("g", WireResponse(head, b"", 1, 0))
    assert "follow-up rebalance at 7" in describe("g", WireResponse(head, b"", 1, 7))


def test_the_first_follow_up_is_the_earliest_a_client_got() -> None:
    request = json_format.Parse(
        (EXAMPLES / "kip441-scale-out.json").read_text(), pb.AssignRequest()
    )
    outcome = assign_request(request)
    deadlines = [c.followup_rebalance_deadline_ms for c in outcome.response.clients]
    assert any(deadlines)
    assert outcome.wire.first_followup_ms == min(d for d in deadlines if d)
    assert outcome.wire.members == len(outcome.response.members)
