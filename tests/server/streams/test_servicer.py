"""The servicer through a real server on 127.0.0.1: answers, bad input, determinism, observer."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kassign.assignor.streams import api
from kassign.assignor.streams.api import register
from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import PHASES, AssignObserver, NullObserver, assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc
from kassign_client import build

from tests.server.requests import group, pid
from tests.server.running import in_process

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


class Recorder(NullObserver):
    """Remembers what the servicer reported."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.seconds: list[tuple[str, float]] = []

    def on_decoded(self, request: pb.AssignRequest, decoded: object) -> None:
        self.events.append(("decoded", request.group_id))

    def on_phase(self, phase: str, seconds: float) -> None:
        assert seconds >= 0
        self.events.append(("phase", phase))
        self.seconds.append((phase, seconds))

    def on_success(
        self, request: object, decoded: object, assignment: object, response: object
    ) -> None:
        self.events.append(("success", None))

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        self.events.append(("error", code))


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def stub(recorder: Recorder) -> Iterator[assignment_pb2_grpc.TaskAssignmentServiceStub]:
    with in_process(observer=recorder) as (_, target), grpc.insecure_channel(target) as channel:
        yield assignment_pb2_grpc.TaskAssignmentServiceStub(channel)


def _call(
    stub: assignment_pb2_grpc.TaskAssignmentServiceStub, request: pb.AssignRequest
) -> pb.AssignResponse:
    response: pb.AssignResponse = stub.Assign(request, timeout=60)
    return response


def test_assigns_every_task_once_and_spreads_over_threads(stub) -> None:  # type: ignore[no-untyped-def]
    response = _call(stub, group())
    assert response.error == pb.ASSIGNMENT_ERROR_NONE
    actives = [(t.subtopology, t.partition) for c in response.clients for t in c.active_tasks]
    assert sorted(actives) == sorted((s, p) for s in (0, 1) for p in range(6))
    assert len(response.members) == 6
    assert sum(len(m.active_tasks) for m in response.members) == 12
    assert response.report.tasks == 12 and response.report.clients == 3
    assert response.report.total_seconds > 0


def test_the_observer_hears_each_phase_then_success(stub, recorder: Recorder) -> None:  # type: ignore[no-untyped-def]
    recorder.events.clear()
    _call(stub, group())
    assert recorder.events == [
        ("phase", "decode"),
        ("decoded", "g"),
        # strategy none, balance COUNT
        *(("phase", p) for p in PHASES[1:] if p not in ("rack_optimisation", "load_source")),
        ("success", None),
    ]
    assert isinstance(recorder, AssignObserver)


def test_rack_optimisation_is_its_own_phase_when_it_runs() -> None:
    request = pb.AssignRequest()
    json_format.Parse((EXAMPLES / "rack-aware-min-traffic.json").read_text(), request)
    recorder = Recorder()
    assign_request(request, observer=recorder)
    phases = [name for kind, name in recorder.events if kind == "phase"]
    assert phases == [p for p in PHASES if p != "load_source"]  # balance COUNT
    seconds = dict(recorder.seconds)
    assert seconds["rack_optimisation"] > 0 and seconds["assign"] >= 0


def test_same_request_twice_gives_the_same_bytes_but_timings(stub) -> None:  # type: ignore[no-untyped-def]
    first, second = _call(stub, group()), _call(stub, group())
    assert canonical_bytes(first) == canonical_bytes(second)


def test_member_order_in_the_request_does_not_change_the_answer(stub) -> None:  # type: ignore[no-untyped-def]
    request = group()
    shuffled = pb.AssignRequest()
    shuffled.CopyFrom(request)
    del shuffled.members[:]
    shuffled.members.extend(reversed(request.members))
    assert canonical_bytes(_call(stub, request)) == canonical_bytes(_call(stub, shuffled))


@pytest.mark.parametrize("encoding", ["info_bytes", "raw"])
def test_kafka_bytes_give_the_same_assignment_as_structured(stub, encoding) -> None:  # type: ignore[no-untyped-def]
    structured = _call(stub, group())
    as_bytes = _call(stub, group(encoding=encoding))
    assert canonical_bytes(as_bytes) == canonical_bytes(structured)


def _info_bytes(member_id: str = "m-1", **info: object) -> bytes:
    return build.member(member_id, pid(1), encoding="info_bytes", **info).subscription.info_bytes  # type: ignore[arg-type]


def _with_member(member: pb.MemberSubscription) -> pb.AssignRequest:
    request = group()
    request.members.append(member)
    return request


def _bytes_member(member_id: str, data: bytes) -> pb.MemberSubscription:
    return pb.MemberSubscription(
        member_id=member_id, subscription=pb.ConsumerSubscription(info_bytes=data)
    )


def _bad_requests() -> dict[str, tuple[pb.AssignRequest, str, str | None]]:
    """name -> (request, a fragment the field must contain, the member the error must name)."""
    good = _info_bytes("late")
    unknown_version = struct.pack(">i", 99) + good[4:]
    duplicate = group()
    duplicate.members.append(duplicate.members[0])
    two_racks = group()
    two_racks.members.extend(build.client(pid(9), threads=["r-1"], rack="rack-x"))
    two_racks.members.extend(build.client(pid(9), threads=["r-2"], rack="rack-y"))
    bad_uuid = group()
    bad_uuid.members[0].subscription.info.process_id = "not-a-uuid"
    negative_standbys, absurd_lag, unknown_assignor = group(), group(), group()
    negative_standbys.configs.num_standby_replicas = -1
    absurd_lag.configs.acceptable_recovery_lag = -5
    unknown_assignor.configs.assignor = "no-such-assignor"
    empty = group()
    del empty.members[:]
    first = group().members[0].member_id
    return {
        "truncated bytes": (_with_member(_bytes_member("late", good[:-3])), "info_bytes", "late"),
        "over-long bytes": (
            _with_member(_bytes_member("late", good + b"\0")),
            "info_bytes",
            "late",
        ),
        "unknown version": (
            _with_member(_bytes_member("late", unknown_version)),
            "version",
            "late",
        ),
        "garbage raw subscription": (
            _with_member(pb.MemberSubscription(member_id="late", raw_subscription=b"\x00")),
            "raw_subscription",
            "late",
        ),
        "bad uuid": (bad_uuid, "process_id", first),
        "duplicate member ids": (duplicate, "member_id", first),
        "one process two racks": (two_racks, "rack_id", "r-2"),
        "negative standbys": (negative_standbys, "configs.num_standby_replicas", None),
        "negative recovery lag": (absurd_lag, "configs.acceptable_recovery_lag", None),
        "unknown assignor": (unknown_assignor, "configs.assignor", None),
        "empty group": (empty, "members", None),
    }


@pytest.mark.parametrize("name", sorted(_bad_requests()))
def test_bad_input_is_invalid_argument_naming_field_and_member(
    stub, recorder: Recorder, name: str
) -> None:  # type: ignore[no-untyped-def]
    request, field, member = _bad_requests()[name]
    recorder.events.clear()
    with pytest.raises(grpc.RpcError) as caught:
        _call(stub, request)
    error = caught.value
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    metadata = dict(error.trailing_metadata())
    assert field in metadata["kassign-field"] and metadata["kassign-field"] in error.details()
    if member is not None:
        assert metadata["kassign-member"] == member and repr(member) in error.details()
    assert "Traceback" not in error.details()
    assert recorder.events[-1] == ("error", grpc.StatusCode.INVALID_ARGUMENT)


def test_now_ms_zero_reads_the_clock_once_and_request_time_wins_otherwise() -> None:
    request = group(now_ms=0)
    outcome = assign_request(request, clock_ms=lambda: 42_000)
    assert outcome.decoded.state.now_ms == 42_000
    assert assign_request(group(now_ms=7_000), clock_ms=lambda: 1).decoded.state.now_ms == 7_000


class _Raises:
    def assign(self, application_state: object) -> object:
        raise RuntimeError("plug-in bug with secret-detail")


class _DropsEveryTask:
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return task_assignment(KafkaStreamsAssignment.of(p) for p in application_state.clients)


@pytest.fixture
def plugins() -> Iterator[None]:
    register("test-raises", _Raises)
    register("test-drops", _DropsEveryTask)
    yield
    for name in ("test-raises", "test-drops"):
        api._registered.pop(name, None)


def test_a_raising_assignor_is_internal_with_a_request_id_and_no_traceback(
    stub,
    recorder: Recorder,
    plugins: None,  # type: ignore[no-untyped-def]
) -> None:
    request = group()
    request.configs.assignor = "test-raises"
    recorder.events.clear()
    with pytest.raises(grpc.RpcError) as caught:
        _call(stub, request)
    error = caught.value
    assert error.code() is grpc.StatusCode.INTERNAL
    request_id = dict(error.trailing_metadata())["kassign-request-id"]
    assert request_id in error.details() and "Traceback" not in error.details()
    assert recorder.events[-1] == ("error", grpc.StatusCode.INTERNAL)


def test_an_invalid_assignment_comes_back_with_its_error_and_no_members(
    stub, plugins: None
) -> None:  # type: ignore[no-untyped-def]
    request = group()
    request.configs.assignor = "test-drops"
    response = _call(stub, request)
    assert response.error == pb.ASSIGNMENT_ERROR_ACTIVE_TASK_UNASSIGNED
    assert list(response.members) == [] and len(response.clients) == 3
    assert response.report.assignor == "test-drops"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    clients=st.integers(1, 5),
    threads=st.integers(1, 3),
    partitions=st.integers(1, 8),
    standbys=st.integers(0, 2),
    order=st.randoms(use_true_random=False),
)
def test_answer_depends_on_the_group_not_on_member_order(  # type: ignore[no-untyped-def]
    clients, threads, partitions, standbys, order
) -> None:
    request = group(clients=clients, threads=threads, partitions=partitions, standbys=standbys)
    shuffled = pb.AssignRequest()
    shuffled.CopyFrom(request)
    members = list(request.members)
    order.shuffle(members)
    del shuffled.members[:]
    shuffled.members.extend(members)
    first = assign_request(request).response
    assert canonical_bytes(first) == canonical_bytes(assign_request(shuffled).response)
    assert first.error == pb.ASSIGNMENT_ERROR_NONE
    assert sorted(m.member_id for m in first.members) == sorted(
        m.member_id for m in request.members
    )


def test_offset_sums_of_unknown_tasks_are_ignored_and_reported(stub) -> None:  # type: ignore[no-untyped-def]
    request = group()
    request.members.extend(build.client(pid(7), threads=["newcomer"], offset_sums={"9_9": 5}))
    response = _call(stub, request)
    assert response.error == pb.ASSIGNMENT_ERROR_NONE
    assert any("newcomer" in note and "9_9" in note for note in response.report.notes)
    assert "9_9" not in {
        f"{t.subtopology}_{t.partition}" for c in response.clients for t in c.standby_tasks
    }
