"""Balance LOAD without partition loads through the consumer service (issue 25): the server's
load source fills them, counts stand in when there is none or it failed, and the report's
``load.source`` and notes say which."""

from __future__ import annotations

import pytest
from kassign.server.calls import Deadline
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.consumer.source_loads import NO_SOURCE
from kassign.server.loads.prometheus import LoadReading
from kassign.server.loads.source import LoadSource, LoadSourceConfig
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.server.loads.cases import SOURCE, counts_stand_in
from tests.server.loads.test_fill import Fixed, Heard

HOT = {("a", p): 30.0 if p == 0 else 1.0 for p in range(10)}


def request(*, loads: list[float] | None = None) -> cpb.ConsumerAssignRequest:
    members = [consumer.member(f"m{i}", ["a"]) for i in range(3)]
    out = consumer.request(members, [consumer.topic("a", 10)], assignor="sticky", group_id="g")
    out.options.balance = common_pb2.BALANCE_LOAD
    out.topics[0].partition_loads.extend(loads or [])
    return out


def report(
    req: cpb.ConsumerAssignRequest, reading: LoadReading | None, heard: Heard | None = None
) -> cpb.ConsumerAssignmentReport:
    source = None
    if reading is not None:
        source = LoadSource(LoadSourceConfig(source=SOURCE), heard, reader=Fixed(reading))
    data = assign_consumer_request(req, loads=source).wire.SerializeToString()
    return cpb.ConsumerAssignResponse.FromString(data).report


def test_loads_from_the_source_balance_the_group() -> None:
    heard = Heard()
    got = report(request(), LoadReading(HOT), heard)
    assert got.load.source == "prometheus"
    assert (got.load.bound, got.load.peak) == (30.0, 30.0)  # the hot partition alone
    assert not got.notes and heard.reads == [("ok", 0)]


def test_the_requests_own_loads_win_and_the_source_is_not_asked() -> None:
    heard = Heard()
    got = report(request(loads=[3.0] * 10), LoadReading(HOT), heard)
    assert got.load.source == "request" and got.load.bound == 10.0
    assert heard.reads == []


def test_a_partition_missing_from_the_answer_is_noted() -> None:
    partial = {k: v for k, v in HOT.items() if k != ("a", 9)}
    got = report(request(), LoadReading(partial))
    assert got.load.source == "prometheus"
    note = (
        f"load source {SOURCE}: 1 of 10 partitions missing from its answer, each given the mean"
        " of the others (4.22222)"
    )
    assert list(got.notes) == [note]


@pytest.mark.parametrize(("reading", "note"), counts_stand_in(NO_SOURCE))
def test_without_loads_counts_stand_in_and_say_why(reading: LoadReading | None, note: str) -> None:
    got = report(request(), reading)
    assert got.load.source == ""
    assert (got.load.bound, got.load.peak) == (10 / 3, 4.0)  # 10 partitions by count on 3
    assert list(got.notes) == [note]


def test_count_balance_never_asks_the_source() -> None:
    heard = Heard()
    req = request()
    req.options.ClearField("balance")
    got = report(req, LoadReading(HOT), heard)
    assert not got.HasField("load") and heard.reads == [] and not got.notes


class Deadlined:
    """A call's context with ``left`` seconds to its deadline, its caller waiting."""

    def __init__(self, left: float) -> None:
        self.left = left

    def time_remaining(self) -> float:
        return self.left

    def is_active(self) -> bool:
        return True


def test_the_source_gets_at_most_half_the_calls_time_left() -> None:
    reader = Fixed(LoadReading(HOT))
    source = LoadSource(LoadSourceConfig(source=SOURCE), reader=reader)
    deadline = Deadline(Deadlined(0.8))  # type: ignore[arg-type]
    assign_consumer_request(request(), loads=source, deadline=deadline)
    assert reader.timeouts == [0.4]


def test_capacities_alone_are_not_loads_the_source_fills_them() -> None:
    req = request()
    for member in req.members:
        member.subscription.capacity = 2.0
    got = report(req, LoadReading(HOT))
    assert got.load.source == "prometheus" and got.load.bound == 15.0  # the hot 30 on 2


def test_the_explanation_tells_the_loads_the_source_gave() -> None:
    req = request()
    req.explain = True
    source = LoadSource(LoadSourceConfig(source=SOURCE), None, reader=Fixed(LoadReading(HOT)))
    data = assign_consumer_request(req, loads=source).wire.SerializeToString()
    told = cpb.ConsumerAssignResponse.FromString(data).explanation
    assert [p.load for p in told.partitions] == [HOT[("a", p)] for p in range(10)]
    assert sorted(m.load for m in told.members) == [4.0, 5.0, 30.0]  # nine 1s over two
