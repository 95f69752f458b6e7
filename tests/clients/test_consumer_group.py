"""kassign_client.consumer_group: the request a Python leader sends, and the answer's checks
(the Java plug-in's ResponseToGroup, the same refusals)."""

from __future__ import annotations

import pytest
from kassign.v1 import common_pb2 as common
from kassign.v1 import consumer_pb2 as cpb
from kassign_client.consumer_group import InvalidAnswer, Subscription, assignments, request

M1 = Subscription(
    member_id="m1",
    topics=("t",),
    rack_id="a",
    owned_partitions=(("t", 0), ("t", 1)),
    generation_id=3,
)
M2 = Subscription(member_id="m2", topics=("t",), rack_id="b", user_data=b"\x01")
COUNTS = {"t": 2}


def answer(member: str, *partitions: tuple[str, int]) -> cpb.ConsumerMemberAssignment:
    return cpb.ConsumerMemberAssignment(
        member_id=member,
        partitions=[common.TopicPartition(topic=t, partition=p) for t, p in partitions],
    )


def response(*members: cpb.ConsumerMemberAssignment) -> cpb.ConsumerAssignResponse:
    return cpb.ConsumerAssignResponse(members=members)


def test_request_keeps_member_order_and_fields() -> None:
    sent = request(
        "g",
        "rack-optimal",
        [M2, M1],
        {"t": [["a", "b"], ["b", ""]], "unsubscribed": [["a"]]},
        cooperative=True,
        time_budget_ms=700,
        co_partitioned=[("t", "u")],
        compact=False,
    )
    assert [m.member_id for m in sent.members] == ["m2", "m1"]
    m2, m1 = (m.subscription for m in sent.members)
    assert (
        m1.rack_id,
        m1.generation_id,
        [(o.topic, o.partition) for o in m1.owned_partitions],
    ) == (
        "a",
        3,
        [("t", 0), ("t", 1)],
    )
    assert not m2.HasField("generation_id") and m2.user_data_bytes == b"\x01"
    assert [t.name for t in sent.topics] == ["t"]  # only subscribed topics
    assert [list(p.rack_ids) for p in sent.topics[0].partitions] == [["a", "b"], ["b", ""]]
    assert sent.options.protocol == cpb.REBALANCE_PROTOCOL_COOPERATIVE
    assert sent.options.solver_time_budget_ms == 700
    assert [list(c.topics) for c in sent.options.co_partitioned] == [["t", "u"]]
    eager = request("g", "range", [M1], {"t": [["a"], ["b"]]}, cooperative=False)
    assert eager.options.protocol == cpb.REBALANCE_PROTOCOL_EAGER
    assert not eager.options.HasField("solver_time_budget_ms")


def test_a_valid_answer_is_returned_by_member() -> None:
    got = assignments(
        response(answer("m1", ("t", 0)), answer("m2")),
        [M1, M2],
        COUNTS,
        cooperative=True,
        compact=False,
    )
    assert sorted(got) == ["m1", "m2"]
    assert got["m1"].partitions == (("t", 0),)


def test_compact_request_shares_lists_and_asks_for_runs() -> None:
    """The default (issue 24): the same request in the compact form, answered with runs."""
    racks = {"t": [["a", "b"], ["b", ""]], "unsubscribed": [["a"]]}
    sent = request("g", "range", [M2, M1], racks, cooperative=False)
    assert sent.compact_answer and not sent.assignment_bytes
    m2, m1 = (m.subscription for m in sent.members)
    assert [list(sent.topic_lists[m.topic_list].topics) for m in (m2, m1)] == [
        list(M2.topics),
        list(M1.topics),
    ]
    assert [(e.topic, list(e.partitions)) for e in m1.owned_by_topic] == [("t", [0, 1])]
    assert sent.topics[0].partition_count == 2 and not sent.topics[0].partitions
    assert [
        list(sent.replica_rack_lists[i].rack_ids) for i in sent.topics[0].replica_rack_list
    ] == [
        ["a", "b"],
        ["b", ""],
    ]
    runs = cpb.ConsumerAssignResponse(
        topics=["t"],
        members=[
            cpb.ConsumerMemberAssignment(
                member_id="m1", assigned=cpb.PartitionRuns(topics=[0], counts=[1], partitions=[1])
            ),
            cpb.ConsumerMemberAssignment(member_id="m2", assigned=cpb.PartitionRuns()),
        ],
    )
    got = assignments(runs, [M1, M2], COUNTS, cooperative=False, compact=True)
    assert got["m1"].partitions == (("t", 1),) and got["m2"].partitions == ()
    v1 = response(answer("m1", ("t", 1)), answer("m2"))
    assert assignments(v1, [M1, M2], COUNTS, cooperative=False, compact=False)["m1"] == got["m1"]
    for older in (v1, response(answer("m1"), answer("m2"))):  # as a server predating runs answers
        with pytest.raises(InvalidAnswer, match="m1 without partition runs: it predates"):
            assignments(older, [M1, M2], COUNTS, cooperative=False, compact=True)
    runs.members[0].assigned.topics[0] = 1
    with pytest.raises(InvalidAnswer, match="topic index"):
        assignments(runs, [M1, M2], COUNTS, cooperative=False, compact=True)


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ((answer("m1", ("t", 0)), answer("x", ("t", 1))), "unknown member x"),
        ((answer("m1", ("t", 0), ("t", 1)),), "left out member m2"),
        ((answer("m1", ("t", 0)), answer("m1")), "member m1 twice"),
        ((answer("m1", ("t", 0)), answer("m2", ("t", 0))), "to both m1 and m2"),
        ((answer("m1", ("t", 0)), answer("m2", ("t", 2))), "partition t-2"),
        ((answer("m1", ("u", 0)), answer("m2")), "partition u-0"),
    ],
)
def test_an_answer_kafka_would_refuse_is_refused(
    members: tuple[cpb.ConsumerMemberAssignment, ...], why: str
) -> None:
    with pytest.raises(InvalidAnswer, match=why):
        assignments(response(*members), [M1, M2], COUNTS, cooperative=False, compact=False)


def test_cooperative_forbids_a_hand_over_in_one_round() -> None:
    handed = response(answer("m1", ("t", 0)), answer("m2", ("t", 1)))
    with pytest.raises(InvalidAnswer, match="still owned by another member were handed over: t-1"):
        assignments(handed, [M1, M2], COUNTS, cooperative=True, compact=False)
    assert sorted(assignments(handed, [M1, M2], COUNTS, cooperative=False, compact=False)) == [
        "m1",
        "m2",
    ]
