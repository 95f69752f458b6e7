"""The call log line carries the moves split when the call asked for an explanation."""

from __future__ import annotations

from kassign.server.observe.calllog import describe
from kassign.server.streams.response_wire import WireResponse
from kassign.v1 import assignment_pb2 as pb


def test_the_split_appears_only_when_reported() -> None:
    report = pb.AssignmentReport(assignor="high_availability", active_tasks_moved=5, warmups=1)
    plain = describe("g", WireResponse(pb.AssignResponse(report=report), b"", 0, 0))
    assert "moves:" not in plain and "moved 5 active, 0 standby" in plain
    report.moves.CopyFrom(pb.MoveCounts(stateful_actives=1, stateless_actives=4, warmups=1))
    told = describe("g", WireResponse(pb.AssignResponse(report=report), b"", 0, 0))
    assert "moves: 1 stateful active, 4 stateless active, 0 standby, 1 warm-up" in told
    assert (
        told.replace("moves: 1 stateful active, 4 stateless active, 0 standby, 1 warm-up; ", "")
        == plain
    )
