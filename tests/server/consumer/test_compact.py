"""Issue 24's compact form: shared topic lists and owned partitions by topic in the request, runs
by topic in the answer, Kafka's bytes only when asked. The same assignment as the v1 request;
the v1 answer untouched (the snapshot and golden tests check its bytes); bad references refused
as INVALID_ARGUMENT naming the field and the member, through a real server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidAssignment, InvalidRequest
from kassign.server.consumer.compact_wire import compact_members_wire, topic_table
from kassign.server.consumer.encode import canonical_bytes, without_timings
from kassign.server.consumer.group_bytes import flat_partitions
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.limits import RequestLimits
from kassign.server.streams.decode.members import decode_member as decode_streams_member
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign.v1 import consumer_pb2_grpc
from kassign_client import consumer

from tests.server.consumer.requests import ALL_ASSIGNORS, member_index, racked_group
from tests.server.consumer.test_properties import groups, request
from tests.server.running import in_process

Outcome = tuple[list[tuple[str, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]], bytes]


def _outcome(req: cpb.ConsumerAssignRequest) -> Outcome | str:
    """Each member's partitions and revoked ones, and the report without timings."""
    try:
        response = assign_consumer_request(req).response
    except InvalidAssignment as exc:
        return str(exc.code)
    lists = [(a.member_id, a.partitions, a.revoked) for a in consumer.answers(response)]
    report = without_timings(cpb.ConsumerAssignResponse(report=response.report))
    return lists, report.SerializeToString()


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
@settings(max_examples=40, deadline=None)
@given(group=groups(), shuffle=st.randoms(use_true_random=False))
def test_compact_request_gives_the_v1_assignment(assignor: str, group, shuffle) -> None:  # type: ignore[no-untyped-def]
    v1 = request(group, assignor, "structured")
    compact = consumer.compact(v1)
    for sent in compact.members:  # entries in any order, a topic split: read sorted
        owned = sent.subscription.owned_by_topic
        entries = [(e.topic, list(e.partitions)) for e in owned]
        if entries and len(entries[0][1]) > 1:
            topic, numbers = entries[0]
            entries[:1] = [(topic, numbers[1:]), (topic, numbers[:1])]
        shuffle.shuffle(entries)
        del owned[:]
        owned.extend(pb.TopicPartitions(topic=t, partitions=ps) for t, ps in entries)
    expected = _outcome(v1)
    assert _outcome(compact) == expected
    if isinstance(expected, str):
        return
    outcome = assign_consumer_request(compact)
    assert outcome.wire.SerializeToString() == outcome.wire.message().SerializeToString()
    assert all(not m.assignment and not m.partitions for m in outcome.response.members)
    with_bytes = assign_consumer_request(consumer.compact(v1, assignment_bytes=True)).response
    v1_response = assign_consumer_request(v1).response
    assert [m.assignment for m in with_bytes.members] == [m.assignment for m in v1_response.members]


def test_v1_request_gets_the_v1_answer() -> None:
    """A request without the new fields gets no new field back: the v1 bytes."""
    response = assign_consumer_request(racked_group("cooperative-sticky")).response
    assert not response.topics
    assert all(not m.HasField("assigned") and m.assignment for m in response.members)
    again = assign_consumer_request(racked_group("cooperative-sticky")).response
    assert canonical_bytes(response) == canonical_bytes(again)


def test_members_share_one_list_and_partitions_read_in_runs() -> None:
    compact = consumer.compact(racked_group("range"))
    assert len(compact.topic_lists) == 2  # members with audit and without
    assert all(t.partition_count and not t.partitions for t in compact.topics)
    assert len(compact.replica_rack_lists) < sum(t.partition_count for t in compact.topics)
    response = assign_consumer_request(compact).response
    assert list(response.topics) == sorted(response.topics)
    for m in response.members:
        assert m.HasField("assigned")
        assert sum(m.assigned.counts) == len(m.assigned.partitions)


@pytest.mark.parametrize(
    "values",
    [[], [0], [1, 127, 128, 300, 16383, 16384, 2**21, 2**28, 2**31 - 1], [-1, -(2**31), 5]],
)
def test_numbers_are_packed_as_protobuf_packs_them(values: list[int]) -> None:
    """Varints of one to five bytes, and negative numbers sign-extended to ten."""
    flat = flat_partitions([[("t", v) for v in values], []])
    wire = compact_members_wire(["m", "n"], flat, flat_partitions([[], []]), None, ["t"])
    runs = cpb.PartitionRuns(topics=[0], counts=[len(values)], partitions=values)
    expected = cpb.ConsumerAssignResponse(
        members=[
            cpb.ConsumerMemberAssignment(member_id="m", assigned=runs if values else None),
            cpb.ConsumerMemberAssignment(member_id="n", assigned=cpb.PartitionRuns()),
        ]
    )
    expected.members[0].assigned.SetInParent()
    assert wire == expected.SerializeToString()


Edit = Callable[[cpb.ConsumerAssignRequest], None]


@pytest.fixture(scope="module")
def stub() -> Iterator[consumer_pb2_grpc.ConsumerAssignmentServiceStub]:
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        yield consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)


def _sub(r: cpb.ConsumerAssignRequest, member: str) -> pb.ConsumerSubscription:
    sub: pb.ConsumerSubscription = r.members[member_index(r, member)].subscription
    return sub


def _list_out_of_range(r: cpb.ConsumerAssignRequest) -> None:
    _sub(r, "m3").topic_list = len(r.topic_lists)


def _negative_list(r: cpb.ConsumerAssignRequest) -> None:
    _sub(r, "m2").topic_list = -1


def _topics_and_list(r: cpb.ConsumerAssignRequest) -> None:
    _sub(r, "m4").topics.append("orders")


def _owned_twice(r: cpb.ConsumerAssignRequest) -> None:
    _sub(r, "m1").owned_partitions.add(topic="orders", partition=0)


def _rack_list_out_of_range(r: cpb.ConsumerAssignRequest) -> None:
    r.topics[1].replica_rack_list[-1] = len(r.replica_rack_lists)


def _rack_lists_short(r: cpb.ConsumerAssignRequest) -> None:
    del r.topics[0].replica_rack_list[-1]


def _count_and_partitions(r: cpb.ConsumerAssignRequest) -> None:
    r.topics[0].partitions.add()


def _owned_out_of_range(r: cpb.ConsumerAssignRequest) -> None:
    _sub(r, "m1").owned_by_topic[0].partitions.append(10_000)


def _listed_name_illegal(r: cpb.ConsumerAssignRequest) -> None:
    r.topic_lists[_sub(r, "m1").topic_list].topics.append("no/such")


CASES: dict[str, tuple[Edit, str, str | None]] = {
    # the library's own checks name the compact field the member sent, not the v1 one
    "owned partition out of range": (_owned_out_of_range, "subscription.owned_by_topic", "m1"),
    "illegal name in a topic list": (_listed_name_illegal, "subscription.topic_list", "m1"),
    "rack list out of range": (_rack_list_out_of_range, "topics[1].replica_rack_list", None),
    "a rack list short": (_rack_lists_short, "topics[0].replica_rack_list", None),
    "count and partitions": (_count_and_partitions, "topics[0].partition_count", None),
    "topic list out of range": (_list_out_of_range, "subscription.topic_list", "m3"),
    "negative topic list": (_negative_list, "subscription.topic_list", "m2"),
    "topics and topic list": (_topics_and_list, "subscription.topic_list", "m4"),
    "owned in both forms": (_owned_twice, "subscription.owned_by_topic", "m1"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_reference_is_invalid_argument_naming_field_and_member(stub, name: str) -> None:  # type: ignore[no-untyped-def]
    edit, field, member = CASES[name]
    req = consumer.compact(racked_group("sticky"))
    assert _sub(req, "m1").owned_by_topic  # the case edits a member that owns partitions
    edit(req)
    with pytest.raises(grpc.RpcError) as error:
        stub.Assign(req, timeout=30)
    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    metadata = dict(error.value.trailing_metadata())
    assert metadata["kassign-field"] == field, error.value.details()
    assert metadata.get("kassign-member") == member
    assert field in error.value.details()


def test_compact_request_is_answered_over_grpc(stub) -> None:  # type: ignore[no-untyped-def]
    v1 = racked_group("sticky")
    answered = stub.Assign(consumer.compact(v1), timeout=30)
    expected = stub.Assign(v1, timeout=30)
    assert [(a.member_id, a.partitions) for a in consumer.answers(answered)] == [
        (a.member_id, a.partitions) for a in consumer.answers(expected)
    ]


def test_limits_count_shared_lists_and_packed_claims() -> None:
    req = consumer.compact(racked_group("sticky"))
    partitions = sum(t.partition_count for t in req.topics)
    req.topic_lists.add(topics=[f"x{i}" for i in range(partitions + 1)])
    with pytest.raises(InvalidRequest) as error:
        assign_consumer_request(req, limits=RequestLimits(partitions=partitions))
    assert error.value.field == f"topic_lists[{len(req.topic_lists) - 1}]"
    del req.topic_lists[-1]
    owned = sum(len(e.partitions) for m in req.members for e in m.subscription.owned_by_topic)
    with pytest.raises(InvalidRequest) as error:
        assign_consumer_request(req, limits=RequestLimits(owned_partitions=owned - 1))
    assert "owned partitions" in error.value.reason


@pytest.mark.parametrize("field", ["topic_list", "owned_by_topic"])
def test_streams_refuses_the_consumer_fields(field: str) -> None:
    sub = pb.ConsumerSubscription(topics=["orders"])
    if field == "topic_list":
        sub.topic_list = 0
    else:
        sub.owned_by_topic.add(topic="orders", partitions=[0])
    with pytest.raises(InvalidRequest) as error:
        decode_streams_member(pb.MemberSubscription(member_id="m", subscription=sub))
    assert error.value.field == f"subscription.{field}"
    assert error.value.member == "m"


_IDS = st.sampled_from(["m", "consumer-1-" + "a" * 130, "\u00e9t\u00e9", "x" * 127])
_LIST = st.sets(st.tuples(st.sampled_from(["a", "b", "t" * 130]), st.integers(0, 2**31 - 1)))


def _runs_message(partitions: list[tuple[str, int]], table: list[str]) -> cpb.PartitionRuns:
    topics: list[int] = []
    counts: list[int] = []
    for topic, _ in partitions:
        if not topics or table[topics[-1]] != topic:
            topics.append(table.index(topic))
            counts.append(0)
        counts[-1] += 1
    return cpb.PartitionRuns(topics=topics, counts=counts, partitions=[p for _, p in partitions])


@settings(max_examples=50, deadline=None)
@given(
    members=st.lists(
        st.tuples(_IDS, _LIST, _LIST, st.none() | st.binary(max_size=200)), min_size=1, max_size=6
    ),
    with_bytes=st.booleans(),
)
def test_members_wire_is_what_protobuf_writes(
    members: list[tuple[str, set[tuple[str, int]], set[tuple[str, int]], bytes | None]],
    with_bytes: bool,
) -> None:
    """The group's members as ``compact_members_wire`` writes them are the bytes protobuf writes
    for the same messages: ids of any length and script, empty lists, assignment bytes or
    none, long fields whose lengths take two-byte varints."""
    assigned = [sorted(a) for _, a, _, _ in members]
    revoked = [sorted(r) for _, _, r, _ in members]
    kafka = [b or b"" for *_, b in members] if with_bytes else None
    flat, gone = flat_partitions(assigned), flat_partitions(revoked)
    table = topic_table(flat, gone)
    expected = cpb.ConsumerAssignResponse(
        members=[
            cpb.ConsumerMemberAssignment(
                member_id=member_id,
                assignment=kafka[i] if kafka else b"",
                assigned=_runs_message(assigned[i], table),
                revoked_runs=_runs_message(revoked[i], table) if revoked[i] else None,
            )
            for i, (member_id, *_) in enumerate(members)
        ]
    )
    wire = compact_members_wire([m for m, *_ in members], flat, gone, kafka, table)
    assert wire == expected.SerializeToString()
