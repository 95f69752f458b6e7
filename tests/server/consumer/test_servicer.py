"""The consumer servicer through a real server on 127.0.0.1: answers equal the library's, Kafka's
bytes per member, the report, raw v0-v3 subscriptions, determinism, and FAILED_PRECONDITION."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from kassign.assignor.consumer import assign
from kassign.kafka.consumer_protocol import decode_consumer_assignment
from kassign.server.consumer.encode import canonical_bytes
from kassign.server.consumer.servicer import PHASES, NullConsumerObserver, assign_consumer_request
from kassign.v1 import common_pb2, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb

from tests.server.consumer.requests import (
    ALL_ASSIGNORS,
    KAFKA_ASSIGNORS,
    null_pointer_group,
    racked_group,
    racked_library_group,
    racked_specs,
    racked_topics,
)
from tests.server.running import in_process


class Recorder(NullConsumerObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def on_phase(self, phase: str, seconds: float) -> None:
        assert seconds >= 0
        self.events.append(("phase", phase))

    def on_success(self, request: object, outcome: object) -> None:
        self.events.append(("success", None))

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        self.events.append(("error", code))


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def stub(recorder: Recorder) -> Iterator[consumer_pb2_grpc.ConsumerAssignmentServiceStub]:
    with (
        in_process(consumer_observer=recorder) as (_, target),
        grpc.insecure_channel(target) as channel,
    ):
        yield consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)


def call(
    stub: consumer_pb2_grpc.ConsumerAssignmentServiceStub, request: cpb.ConsumerAssignRequest
) -> cpb.ConsumerAssignResponse:
    response: cpb.ConsumerAssignResponse = stub.Assign(request, timeout=60)
    return response


def pairs(tps: object) -> list[tuple[str, int]]:
    return [(tp.topic, tp.partition) for tp in tps]  # type: ignore[attr-defined]


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_the_answer_is_the_librarys_on_the_same_group(stub, assignor: str) -> None:  # type: ignore[no-untyped-def]
    response = call(stub, racked_group(assignor))
    expected = assign(assignor, racked_library_group())
    assert [m.member_id for m in response.members] == [m.member_id for m in expected.members]
    for got, want in zip(response.members, expected.members, strict=True):
        assert pairs(got.partitions) == [tuple(tp) for tp in want.partitions]
        assert pairs(got.revoked) == [tuple(tp) for tp in want.revoked]
    report = response.report
    assert report.assignor == assignor and report.members == 7
    assert report.partitions == sum(len(r) for r in racked_topics().values())
    assert report.moved_partitions == expected.report.moved_partitions
    assert report.withheld_partitions == expected.report.withheld_partitions
    assert report.cross_rack_partitions_after == expected.report.cross_rack_partitions
    assert report.kafka_rack_aware == expected.report.rack_aware
    assert report.kafka_rack_reason == expected.report.rack_reason.value
    assert report.total_seconds >= report.assign_seconds > 0


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_members_sorted_partitions_sorted_and_every_partition_assigned_once(
    stub, assignor: str
) -> None:  # type: ignore[no-untyped-def]
    response = call(stub, racked_group(assignor))
    ids = [m.member_id for m in response.members]
    assert ids == sorted(ids)
    assigned = [tp for m in response.members for tp in pairs(m.partitions)]
    for m in response.members:
        assert pairs(m.partitions) == sorted(pairs(m.partitions))
        assert pairs(m.revoked) == sorted(pairs(m.revoked))
    withheld = response.report.withheld_partitions
    every = {(t, p) for t, racks in racked_topics().items() for p in range(len(racks))}
    assert len(assigned) == len(set(assigned)) == len(every) - withheld
    counts = [len(m.partitions) for m in response.members]
    assert (
        response.report.min_partitions_per_member,
        response.report.max_partitions_per_member,
    ) == (
        min(counts),
        max(counts),
    )


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_each_members_bytes_are_a_version_3_assignment_of_its_partitions(
    stub, assignor: str
) -> None:  # type: ignore[no-untyped-def]
    for m in call(stub, racked_group(assignor)).members:
        decoded = decode_consumer_assignment(m.assignment)
        assert decoded.version == 3 and decoded.user_data is None
        flat = [(o.topic, p) for o in decoded.assigned_partitions for p in o.partitions]
        assert flat == pairs(m.partitions)


def test_cooperative_sticky_revokes_what_it_withholds(stub) -> None:  # type: ignore[no-untyped-def]
    response = call(stub, racked_group("cooperative-sticky"))
    revoked = [tp for m in response.members for tp in pairs(m.revoked)]
    owned = {s.member_id: set(s.owned) for s in racked_specs()}
    assert revoked and response.report.revoked_partitions == len(revoked)
    for m in response.members:
        assert set(pairs(m.revoked)) <= owned[m.member_id]
        assert not set(pairs(m.revoked)) & set(pairs(m.partitions))
    assigned = {tp for m in response.members for tp in pairs(m.partitions)}
    assert not assigned & set(revoked)  # nobody gets a partition its owner still holds


def test_eager_assignors_revoke_nothing(stub) -> None:  # type: ignore[no-untyped-def]
    for assignor in ("range", "roundrobin", "sticky"):
        response = call(stub, racked_group(assignor))
        assert response.report.revoked_partitions == 0
        assert all(not m.revoked for m in response.members)


def _cross_rack(members: dict[str, tuple[str, set[tuple[str, int]]]]) -> int:
    racks = racked_topics()
    return sum(
        1 for rack, tps in members.values() if rack for t, p in tps if rack not in racks[t][p]
    )


@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_cross_rack_before_and_after_count_owned_and_assigned_partitions(
    stub, assignor: str
) -> None:  # type: ignore[no-untyped-def]
    response = call(stub, racked_group(assignor))
    specs = {s.member_id: s for s in racked_specs()}
    before = {m: (s.rack, set(s.owned)) for m, s in specs.items()}
    after = {
        m.member_id: (specs[m.member_id].rack, set(pairs(m.partitions))) for m in response.members
    }
    assert response.report.cross_rack_partitions_before == _cross_rack(before) > 0
    assert response.report.cross_rack_partitions_after == _cross_rack(after)


@pytest.mark.parametrize("version", range(4))
@pytest.mark.parametrize("assignor", ALL_ASSIGNORS)
def test_raw_subscriptions_of_every_version_answer_as_structured_ones(  # type: ignore[no-untyped-def]
    stub, assignor: str, version: int
) -> None:
    """A v3 raw subscription carries everything; older ones lose the fields they lack (owned
    partitions before v1, generation before v2, rack before v3), exactly as Kafka drops them."""
    raw = call(stub, racked_group(assignor, encoding="raw", version=version))
    structured = racked_group(assignor)
    for m in structured.members:
        sub = m.subscription
        if version < 1:
            del sub.owned_partitions[:]
        if version < 2:
            sub.ClearField("generation_id")
        if version < 3:
            sub.rack_id = ""
    assert canonical_bytes(raw) == canonical_bytes(call(stub, structured))


def test_the_same_request_gives_the_same_bytes(stub) -> None:  # type: ignore[no-untyped-def]
    for assignor in ALL_ASSIGNORS:
        first = canonical_bytes(call(stub, racked_group(assignor)))
        again = [canonical_bytes(call(stub, racked_group(assignor))) for _ in range(3)]
        assert again == [first] * 3


def test_structured_topic_and_owned_order_does_not_matter(stub) -> None:  # type: ignore[no-untyped-def]
    """Kafka's encoder sorts topics and owned partitions; a structured member is read sorted."""
    request = racked_group("cooperative-sticky")
    shuffled = cpb.ConsumerAssignRequest()
    shuffled.CopyFrom(request)
    for m in shuffled.members:
        sub = m.subscription
        topics = list(reversed(sub.topics))
        owned = list(reversed(sub.owned_partitions))
        del sub.topics[:]
        del sub.owned_partitions[:]
        sub.topics.extend(topics)
        sub.owned_partitions.extend(owned)
    assert canonical_bytes(call(stub, shuffled)) == canonical_bytes(call(stub, request))


def test_a_group_kafka_cannot_assign_is_failed_precondition(stub) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as error:
        call(stub, null_pointer_group())
    assert error.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "KAFKA_NULL_POINTER" in error.value.details()
    assert "NullPointerException" in error.value.details()
    assert dict(error.value.trailing_metadata())["kassign-reason"] == "KAFKA_NULL_POINTER"
    # the eager sticky assignor reads ownership from userData (none here), so it answers
    request = null_pointer_group()
    request.assignor = "sticky"
    assert len(call(stub, request).members) == 3


def test_rack_optimal_reads_its_options_and_beats_kafka_on_racks(stub) -> None:  # type: ignore[no-untyped-def]
    eager = call(stub, racked_group("rack-optimal"))
    assert eager.report.rack_status == common_pb2.RACK_OPTIMISATION_OPTIMAL
    assert not eager.report.solver_fallback and not eager.report.notes
    assert eager.report.revoked_partitions == 0
    for kafka in KAFKA_ASSIGNORS:
        theirs = call(stub, racked_group(kafka)).report
        assert eager.report.cross_rack_partitions_after <= theirs.cross_rack_partitions_after
        assert eager.report.kafka_rack_aware == theirs.kafka_rack_aware or kafka == "roundrobin"
    cooperative = racked_group("rack-optimal")
    cooperative.options.protocol = cpb.REBALANCE_PROTOCOL_COOPERATIVE
    revoking = call(stub, cooperative)
    revoked = {tp for m in revoking.members for tp in pairs(m.revoked)}
    assert revoked and len(revoked) == revoking.report.withheld_partitions
    together = racked_group("rack-optimal")
    together.options.co_partitioned.add(topics=["orders", "payments"])
    for m in call(stub, together).members:
        numbers = {
            t: {p for tt, p in pairs(m.partitions) if tt == t} for t in ("orders", "payments")
        }
        assert numbers["orders"] == numbers["payments"]


def test_options_set_for_kafkas_assignors_are_noted_and_change_nothing(stub) -> None:  # type: ignore[no-untyped-def]
    plain = call(stub, racked_group("range"))
    request = racked_group("range")
    request.options.stickiness_cost = 3.0
    noted = call(stub, request)
    assert any("options ignored" in n for n in noted.report.notes)
    assert [m.assignment for m in noted.members] == [m.assignment for m in plain.members]


def test_topics_without_metadata_are_noted(stub) -> None:  # type: ignore[no-untyped-def]
    request = racked_group("roundrobin")
    request.members[0].subscription.topics.append("gone")
    notes = call(stub, request).report.notes
    assert notes == ["subscribed topics without metadata, not assigned: gone"]


def test_observer_hears_each_phase_then_success(stub, recorder: Recorder) -> None:  # type: ignore[no-untyped-def]
    recorder.events.clear()
    call(stub, racked_group("sticky"))
    phases = [p for kind, p in recorder.events if kind == "phase"]
    assert phases == ["decode", "assign", "encode"]
    assert set(phases) <= set(PHASES)
    assert recorder.events[-1] == ("success", None)


def test_the_cli_function_and_the_service_agree(stub) -> None:  # type: ignore[no-untyped-def]
    request = racked_group("cooperative-sticky")
    local = assign_consumer_request(request).response
    assert canonical_bytes(local) == canonical_bytes(call(stub, request))
