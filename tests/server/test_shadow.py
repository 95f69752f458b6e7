"""Shadow calls through both rooms' servicers (issue 26): the report's comparison, Kafka's answer
checked (INVALID_ARGUMENT naming the field and the member), the answer otherwise the usual one."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest
from hypothesis import HealthCheck, assume, given, settings
from kassign.assignor.errors import InvalidAssignment, InvalidRequest
from kassign.server.calls import record_shadow
from kassign.server.consumer.encode import canonical_bytes as consumer_bytes
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.consumer.shadow import journal_answer as consumer_answer
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import assign_request
from kassign.server.streams.shadow import journal_answer
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, common_pb2
from kassign.v1 import consumer_pb2 as cpb

from tests.server.consumer.requests import racked_group
from tests.server.consumer.test_load_balance import request as load_request
from tests.server.consumer.test_properties import groups
from tests.server.consumer.test_properties import request as consumer_request
from tests.server.requests import group
from tests.server.running import in_process
from tests.server.streams.test_load_balance import _loaded


def _streams_shadow() -> pb.AssignRequest:
    """``group()`` with kassign's own answer as Kafka's."""
    request = group()
    request.shadow.kafka_assignor = "HighAvailabilityTaskAssignor"
    request.shadow.kafka.extend(journal_answer(assign_request(group()).assignment))
    return request


def _consumer_shadow(request: cpb.ConsumerAssignRequest) -> cpb.ConsumerAssignRequest:
    shadowed = cpb.ConsumerAssignRequest()
    shadowed.CopyFrom(request)
    shadowed.shadow.kafka_assignor = request.assignor
    shadowed.shadow.kafka.extend(consumer_answer(assign_consumer_request(request).assignment))
    return shadowed


def test_a_streams_shadow_call_is_the_usual_answer_plus_the_comparison() -> None:
    plain = assign_request(group()).response
    shadowed = assign_request(_streams_shadow()).response
    compared = shadowed.report.shadow
    assert compared.same and compared.differing_members == 0
    assert compared.kafka == compared.kassign
    assert compared.kafka.moved == plain.report.active_tasks_moved
    assert compared.kafka.standbys_moved == plain.report.standby_tasks_moved
    shadowed.report.ClearField("shadow")
    assert canonical_bytes(shadowed) == canonical_bytes(plain)
    assert not plain.report.HasField("shadow")


def test_kafkas_different_answer_is_measured_as_it_is() -> None:
    request = _streams_shadow()
    first, second = request.shadow.kafka[0], request.shadow.kafka[1]
    first.process_id, second.process_id = second.process_id, first.process_id
    compared = assign_request(request).response.report.shadow
    assert not compared.same and compared.differing_members == 2
    assert compared.kafka.moved > compared.kassign.moved == 0


def test_a_consumer_shadow_call_is_the_usual_answer_plus_the_comparison() -> None:
    plain = assign_consumer_request(racked_group("range")).response
    shadowed = assign_consumer_request(_consumer_shadow(racked_group("range"))).response
    compared = shadowed.report.shadow
    assert (
        compared.same and compared.kafka == compared.kassign and compared.kafka_assignor == "range"
    )
    assert compared.kafka.moved == plain.report.moved_partitions
    assert compared.kafka.cross_rack_partitions == plain.report.cross_rack_partitions_after
    shadowed.report.ClearField("shadow")
    assert consumer_bytes(shadowed) == consumer_bytes(plain)


@pytest.mark.parametrize("assignor", ["sticky", "rack-optimal"])
def test_a_consumer_load_answers_peak_is_the_reports(assignor: str) -> None:
    report = assign_consumer_request(_consumer_shadow(load_request(assignor))).response.report
    assert report.shadow.kassign.max_load == pytest.approx(report.load.peak)
    assert report.shadow.kafka.HasField("max_load")


def test_a_streams_load_answers_peak_is_the_reports() -> None:
    request = _loaded()
    request.shadow.kafka.extend(journal_answer(assign_request(_loaded()).assignment))
    report = assign_request(request).response.report
    assert report.shadow.kafka.max_load == report.shadow.kassign.max_load == report.load.peak
    plain = assign_request(_streams_shadow()).response.report.shadow
    assert not plain.kafka.HasField("max_load")  # no loads: unset, not 0


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=groups())
def test_kassigns_answer_as_kafkas_gives_the_reports_figures(assignor: str, group) -> None:  # type: ignore[no-untyped-def]
    request = consumer_request(group, assignor, "structured")
    try:
        report = assign_consumer_request(_consumer_shadow(request)).response.report
    except InvalidAssignment:
        assume(False)
    compared = report.shadow
    assert compared.same and compared.differing_members == 0
    assert compared.kafka == compared.kassign
    assert compared.kafka.moved == report.moved_partitions
    assert compared.kafka.cross_rack_partitions == report.cross_rack_partitions_after


def _edit_streams(edit: Callable[[pb.AssignRequest], None]) -> pb.AssignRequest:
    request = _streams_shadow()
    edit(request)
    return request


PID = "00000000-0000-0007-0000-000000000007"  # not a client of group()


def _bad_streams() -> dict[str, tuple[pb.AssignRequest, str, str]]:
    def first(r: pb.AssignRequest) -> pb.ClientAssignment:
        return r.shadow.kafka[0]

    def unknown_client(r: pb.AssignRequest) -> None:
        first(r).process_id = PID

    def not_a_uuid(r: pb.AssignRequest) -> None:
        first(r).process_id = "host-1"

    def unknown_task(r: pb.AssignRequest) -> None:
        first(r).active_tasks.add(subtopology=9, partition=0)

    def unknown_standby(r: pb.AssignRequest) -> None:
        first(r).standby_tasks.add(subtopology=0, partition=99)

    def twice(r: pb.AssignRequest) -> None:
        r.shadow.kafka[1].active_tasks.append(first(r).active_tasks[0])

    def client_twice(r: pb.AssignRequest) -> None:
        r.shadow.kafka.add(process_id=first(r).process_id)

    kafka = _streams_shadow().shadow.kafka
    one, two, n = kafka[0].process_id, kafka[1].process_id, len(kafka[1].active_tasks)
    return {
        "unknown client": (_edit_streams(unknown_client), "shadow.kafka[0].process_id", PID),
        "not a uuid": (_edit_streams(not_a_uuid), "shadow.kafka[0].process_id", "host-1"),
        "unknown task": (_edit_streams(unknown_task), "shadow.kafka[0].active_tasks[", one),
        "unknown standby": (_edit_streams(unknown_standby), "shadow.kafka[0].standby_tasks[", one),
        "active twice": (_edit_streams(twice), f"shadow.kafka[1].active_tasks[{n}]", two),
        "client twice": (_edit_streams(client_twice), "shadow.kafka[3].process_id", one),
    }


@pytest.mark.parametrize("name", sorted(_bad_streams()))
def test_a_bad_streams_kafka_answer_names_the_field_and_client(name: str) -> None:
    request, field, member = _bad_streams()[name]
    with pytest.raises(InvalidRequest) as caught:
        assign_request(request)
    assert caught.value.field.startswith(field) and caught.value.member == member


def _bad_consumer() -> dict[str, tuple[cpb.ConsumerAssignRequest, str, str]]:
    cases = {}
    edits: dict[str, tuple[Callable[[cpb.ConsumerAssignRequest], None], str, str]] = {
        "unknown member": (
            lambda r: setattr(r.shadow.kafka[0], "member_id", "stranger"),
            "shadow.kafka[0].member_id",
            "stranger",
        ),
        "unknown topic": (
            lambda r: r.shadow.kafka[0].partitions.add(topic="nope", partition=0),
            "shadow.kafka[0].partitions[",
            "m0",
        ),
        "no such partition": (
            lambda r: r.shadow.kafka[0].partitions.add(topic="audit", partition=5),
            "shadow.kafka[0].partitions[",
            "m0",
        ),
        "partition twice": (
            lambda r: r.shadow.kafka[1].partitions.append(r.shadow.kafka[0].partitions[0]),
            "shadow.kafka[1].partitions[",
            "m1",
        ),
        "runs": (
            lambda r: r.shadow.kafka[2].assigned.topics.append(0),
            "shadow.kafka[2].assigned",
            "m2",
        ),
        "member twice": (
            lambda r: r.shadow.kafka.add(member_id="m0"),
            "shadow.kafka[7].member_id",
            "m0",
        ),
    }
    for name, (edit, field, member) in edits.items():
        request = _consumer_shadow(racked_group("range"))
        edit(request)
        cases[name] = (request, field, member)
    return cases


@pytest.mark.parametrize("name", sorted(_bad_consumer()))
def test_a_bad_consumer_kafka_answer_names_the_field_and_member(name: str) -> None:
    request, field, member = _bad_consumer()[name]
    with pytest.raises(InvalidRequest) as caught:
        assign_consumer_request(request)
    assert caught.value.field.startswith(field) and caught.value.member == member


@pytest.fixture(scope="module")
def stub() -> Iterator[assignment_pb2_grpc.TaskAssignmentServiceStub]:
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        yield assignment_pb2_grpc.TaskAssignmentServiceStub(channel)


def test_over_grpc_a_bad_kafka_answer_is_invalid_argument(stub) -> None:  # type: ignore[no-untyped-def]
    request, _, _ = _bad_streams()["unknown client"]
    with pytest.raises(grpc.RpcError) as caught:
        stub.Assign(request, timeout=30)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "shadow.kafka[0].process_id" in caught.value.details()
    assert PID in caught.value.details()


class _Journal:
    """A journal that tells what happened, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    def stamp(self, group_key: str) -> common_pb2.JournalStamp:
        self.events.append(("stamp", group_key))
        return common_pb2.JournalStamp(group_key=group_key)

    def record(self, request: pb.AssignRequest, stamp: object = None) -> None:
        assert isinstance(stamp, common_pb2.JournalStamp)
        filled = str(request.shadow.HasField("comparison"))
        self.events.append(("record", stamp.group_key, filled))


def test_a_shadow_line_is_stamped_first_and_recorded_once_answered_or_failed() -> None:
    def fill(copy: pb.AssignRequest, outcome: str) -> None:
        copy.shadow.comparison.same = outcome == "answer"

    def answer() -> str:
        journal.events.append(("answer",))
        return "answer"

    def failing() -> str:
        raise InvalidRequest("no", field="f")

    journal = _Journal()
    assert record_shadow(journal, pb.AssignRequest(group_id="g"), answer, fill) == "answer"
    assert journal.events == [("stamp", "g"), ("answer",), ("record", "g", "True")]
    journal.events.clear()
    with pytest.raises(InvalidRequest):
        record_shadow(journal, pb.AssignRequest(group_id="h"), failing, fill)
    assert journal.events == [("stamp", "h"), ("record", "h", "False")]  # as it came
