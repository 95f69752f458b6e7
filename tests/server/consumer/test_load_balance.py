"""``options.balance = LOAD`` through the consumer service (issue 25): partition loads and member
capacities read from the request, the report's figures, and clear errors."""

from __future__ import annotations

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.streams.decode.members import decode_member as decode_streams_member
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.server.consumer.requests import structured

HOT = [30.0, 1, 1, 1, 1, 1, 1, 1, 1, 1]


def request(assignor: str = "sticky", *, compact: bool = False) -> cpb.ConsumerAssignRequest:
    members = [consumer.member(f"m{i}", ["a"]) for i in range(3)]
    out = consumer.request(members, [consumer.topic("a", 10)], assignor=assignor, group_id="g")
    out.topics[0].partition_loads.extend(HOT)
    out.options.balance = common_pb2.BALANCE_LOAD
    return consumer.compact(out) if compact else out


def answer(req: cpb.ConsumerAssignRequest) -> cpb.ConsumerAssignResponse:
    data = assign_consumer_request(req).wire.SerializeToString()
    return cpb.ConsumerAssignResponse.FromString(data)


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky", "rack-optimal"])
def test_the_hot_partition_gets_a_member_to_itself(assignor: str, compact: bool) -> None:
    response = answer(request(assignor, compact=compact))
    loads = {m.member_id: sum(HOT[p] for _, p in m.partitions) for m in consumer.answers(response)}
    assert max(loads.values()) == 30.0
    assert response.report.load.bound == 30.0 and response.report.load.peak == 30.0
    assert response.report.load.mean == pytest.approx(39.0 / 3)
    assert not response.report.notes


def test_loads_without_load_balance_are_noted_and_change_nothing() -> None:
    counted = request()
    counted.options.ClearField("balance")
    plain = request()
    plain.ClearField("options")
    plain.topics[0].ClearField("partition_loads")
    response = answer(counted)
    assert not response.report.HasField("load")
    assert response.report.notes == [
        "partition loads and capacities ignored: balance is COUNT (options.balance)"
    ]
    assert [m.partitions for m in response.members] == [m.partitions for m in answer(plain).members]


def test_capacity_weighs_a_member() -> None:
    req = request("rack-optimal")
    req.topics[0].ClearField("partition_loads")
    structured(req, "m0").capacity = 8.0
    counts = {m.member_id: len(m.partitions) for m in consumer.answers(answer(req))}
    assert counts == {"m0": 8, "m1": 1, "m2": 1}


@pytest.mark.parametrize(
    ("edit", "field", "member"),
    [
        (lambda r: setattr(structured(r, "m1"), "capacity", -1.0), "subscription.capacity", "m1"),
        (lambda r: r.topics[0].partition_loads.append(1.0), "topics[a].partition_loads", None),
        (lambda r: setattr(r, "assignor", "range"), "options.balance", None),
        (lambda r: setattr(r.options, "balance", 7), "options.balance", None),
    ],
)
def test_bad_figures_name_their_field(edit: object, field: str, member: str | None) -> None:
    req = request()
    edit(req)  # type: ignore[operator]
    with pytest.raises(InvalidRequest) as caught:
        assign_consumer_request(req)
    assert caught.value.field == field
    assert caught.value.member == member


def test_streams_refuses_a_capacity() -> None:
    sub = pb.ConsumerSubscription(topics=["orders"], capacity=2.0)
    with pytest.raises(InvalidRequest) as error:
        decode_streams_member(pb.MemberSubscription(member_id="c1", subscription=sub))
    assert error.value.field == "subscription.capacity"
    assert error.value.member == "c1"


def test_the_explanation_tells_loads_and_the_load_rule_only_under_load() -> None:
    req = request()
    req.explain = True
    response = answer(req)
    told = response.explanation
    given = {m.member_id: sum(HOT[p] for _, p in m.partitions) for m in consumer.answers(response)}
    assert {m.member_id: (m.load, m.capacity) for m in told.members} == {
        m: (load, 1.0) for m, load in given.items()
    }
    assert [p.load for p in told.partitions] == HOT
    assert {p.rule for p in told.partitions} == {common_pb2.PLACEMENT_RULE_LOAD}  # none owned
    assert all(p.reason.startswith("load: no owner before") for p in told.partitions)
    req.options.ClearField("balance")
    counted = answer(req).explanation
    assert not any(m.HasField("load") or m.HasField("capacity") for m in counted.members)
    assert not any(p.HasField("load") for p in counted.partitions)
    assert common_pb2.PLACEMENT_RULE_LOAD not in {p.rule for p in counted.partitions}


def test_past_the_budget_a_note_and_the_count_answer() -> None:
    members = [consumer.member(f"m{i}", ["a"]) for i in range(3)]
    req = consumer.request(members, [consumer.topic("a", 3000)], assignor="sticky", group_id="g")
    req.topics[0].partition_loads.extend(float(p % 7) for p in range(3000))
    req.options.balance = common_pb2.BALANCE_LOAD
    req.options.solver_time_budget_ms = 1  # a fill of 3,000 partitions is priced at 3 ms
    response = answer(req)
    assert [note.split(" (")[0] for note in response.report.notes] == ["balance LOAD not applied"]
    assert "TIME_BUDGET" in response.report.notes[0]
    assert response.report.max_partitions_per_member == 1000  # Kafka's count balance
    assert response.report.load.peak >= response.report.load.bound > 0
