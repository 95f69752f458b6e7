"""Balance LOAD without task loads through the Streams service (issue 25): the server's load
source gives each task the sum of its source partitions' loads, counts stand in when there is
none or it failed, the request's own loads win; the report's ``load.source`` and notes say which."""

from __future__ import annotations

import pytest
from kassign.server.loads.prometheus import LoadReading
from kassign.server.loads.source import LoadSource, LoadSourceConfig
from kassign.server.streams.servicer import assign_request
from kassign.server.streams.source_loads import NO_SOURCE
from kassign.v1 import assignment_pb2 as pb

from tests.server.loads.cases import SOURCE, counts_stand_in
from tests.server.loads.test_fill import Fixed, Heard
from tests.server.requests import group

HOT = {(t, p): 1.0 for t in ("orders", "clicks") for p in range(6)} | {("orders", 0): 50.0}


def _request(*, loads: bool = False) -> pb.AssignRequest:
    """Three clients of two threads; stateful 0_p reads orders-p, stateless 1_p clicks-p."""
    request = group()
    request.configs.balance = pb.BALANCE_LOAD
    for task in request.tasks if loads else ():
        task.load = 3.0
    return request


def _report(
    request: pb.AssignRequest, reading: LoadReading | None, heard: Heard | None = None
) -> pb.AssignmentReport:
    source = None
    if reading is not None:
        source = LoadSource(LoadSourceConfig(source=SOURCE), heard, reader=Fixed(reading))
    return assign_request(request, loads=source).response.report


def test_task_loads_from_the_source_balance_the_group() -> None:
    heard = Heard()
    got = _report(_request(), LoadReading(HOT), heard)
    assert got.load.source == "prometheus"
    assert (got.load.bound, got.load.peak) == (25.0, 25.0)  # 0_0 alone on two threads
    assert not got.notes and heard.reads == [("ok", 0)]


def test_the_requests_own_loads_win_and_the_source_is_not_asked() -> None:
    heard = Heard()
    got = _report(_request(loads=True), LoadReading(HOT), heard)
    assert got.load.source == "request" and got.load.mean == 6.0  # 12 tasks x 3 on 6 threads
    assert heard.reads == []


@pytest.mark.parametrize(("reading", "note"), counts_stand_in(NO_SOURCE))
def test_without_loads_counts_stand_in_and_say_why(reading: LoadReading | None, note: str) -> None:
    got = _report(_request(), reading)
    assert got.load.source == ""
    assert (got.load.bound, got.load.peak) == (2.0, 2.0)  # 12 tasks by count on 6 threads
    assert note in got.notes


def test_count_balance_never_asks_the_source() -> None:
    heard = Heard()
    request = _request()
    request.configs.ClearField("balance")
    got = _report(request, LoadReading(HOT), heard)
    assert not got.HasField("load") and heard.reads == []
