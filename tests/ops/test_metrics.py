"""server/observe/prometheus.py against a real in-process server: what each kind of call adds to which metric."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kassign.assignor.errors import InvalidRequest
from kassign.server.observe.consumer_metrics import ConsumerMetrics
from kassign.server.observe.prometheus import (
    AssignmentMetrics,
    GrpcMetrics,
    MetricsInterceptor,
    invalid_reason,
)
from kassign.server.runtime.app import (
    CONSUMER_SERVICE_NAME,
    SERVICE_NAME,
    ServerConfig,
    create_server,
)
from kassign.server.streams.decode.request import DecodedRequest
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc
from prometheus_client import CollectorRegistry

from tests.ops.serving import DATA

ASSIGN = {
    "grpc_service": "kassign.v1.TaskAssignmentService",
    "grpc_method": "Assign",
    "grpc_type": "unary",
}
CHECK = {"grpc_service": "grpc.health.v1.Health", "grpc_method": "Check", "grpc_type": "unary"}


@contextmanager
def served(registry: CollectorRegistry) -> Iterator[grpc.Channel]:
    server, port = create_server(
        ServerConfig(host="127.0.0.1", port=0),
        observer=AssignmentMetrics(registry),
        interceptors=(MetricsInterceptor(GrpcMetrics(registry)),),
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield channel
    finally:
        server.stop(None).wait()


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def bad_request() -> pb.AssignRequest:
    request = pb.AssignRequest(group_id="bad")
    request.members.add(member_id="m-1", raw_subscription=b"\x00")
    return request


def group_12() -> pb.AssignRequest:
    return json_format.Parse((DATA / "group_12.json").read_text(), pb.AssignRequest())


def test_health_and_reflection_calls_are_counted_by_type_and_code() -> None:
    registry = CollectorRegistry()
    with served(registry) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(3):
            health.Check(health_pb2.HealthCheckRequest(), timeout=10)
        with pytest.raises(grpc.RpcError) as missing:
            health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        assert missing.value.code() is grpc.StatusCode.NOT_FOUND
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = list(
            stub.ServerReflectionInfo(
                iter(
                    [
                        reflection_pb2.ServerReflectionRequest(list_services=""),
                        reflection_pb2.ServerReflectionRequest(list_services=""),
                    ]
                ),
                timeout=10,
            )
        )
        assert len(replies) == 2
    assert value(registry, "grpc_server_started_total", **CHECK) == 4
    assert value(registry, "grpc_server_handled_total", **CHECK, grpc_code="OK") == 3
    assert value(registry, "grpc_server_handled_total", **CHECK, grpc_code="NOT_FOUND") == 1
    assert value(registry, "grpc_server_handling_seconds_count", **CHECK) == 4
    assert value(registry, "grpc_server_msg_received_total", **CHECK) == 4
    assert value(registry, "grpc_server_msg_sent_total", **CHECK) == 3
    bidi = {
        "grpc_service": "grpc.reflection.v1alpha.ServerReflection",
        "grpc_method": "ServerReflectionInfo",
        "grpc_type": "bidi_stream",
    }
    assert value(registry, "grpc_server_started_total", **bidi) == 1
    assert value(registry, "grpc_server_msg_received_total", **bidi) == 2
    assert value(registry, "grpc_server_msg_sent_total", **bidi) == 2
    assert value(registry, "grpc_server_handled_total", **bidi, grpc_code="OK") == 1


def test_an_invalid_request_counts_its_reason_and_its_code() -> None:
    registry = CollectorRegistry()
    with served(registry) as channel:
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.Assign(bad_request(), timeout=30)
    assert failed.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert value(registry, "grpc_server_handled_total", **ASSIGN, grpc_code="INVALID_ARGUMENT") == 1
    reasons = [
        s
        for m in registry.collect()
        if m.name == "kassign_invalid_requests"
        for s in m.samples
        if s.name.endswith("_total")
    ]
    assert [s.value for s in reasons] == [1.0]
    assert "[0]" not in reasons[0].labels["reason"]
    decode = {"assignor": "unknown", "strategy": "unknown", "phase": "decode"}
    assert value(registry, "kassign_assignment_seconds_count", **decode) == 0  # decode never ended


def test_a_successful_assignment_records_phases_sizes_and_moves() -> None:
    registry = CollectorRegistry()
    request = group_12()
    with served(registry) as channel:
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        response = stub.Assign(request, timeout=60)
        stub.Assign(request, timeout=60)
    assert value(registry, "grpc_server_handled_total", **ASSIGN, grpc_code="OK") == 2
    labels = {"assignor": "high_availability", "strategy": "none"}
    for phase in ("decode", "assign", "encode"):
        assert value(registry, "kassign_assignment_seconds_count", **labels, phase=phase) == 2
    assert value(registry, "kassign_group_tasks_count") == 2
    assert value(registry, "kassign_group_tasks_sum") == 2 * 12
    assert value(registry, "kassign_group_clients_sum") == 2 * 3
    report = response.report
    assert (
        value(registry, "kassign_tasks_moved_total", type="active") == 2 * report.active_tasks_moved
    )
    assert value(registry, "kassign_warmups_total") == 2 * report.warmups
    assert value(registry, "kassign_followup_rebalances_total") == 2 * report.followup_scheduled
    assert value(registry, "kassign_solver_fallbacks_total") == 0


def test_invalid_reason_drops_list_indices_so_labels_stay_bounded() -> None:
    error = InvalidRequest("bad", field="members[12].subscription.owned_partitions[3].topic")
    assert invalid_reason(error) == "members[].subscription.owned_partitions[].topic"
    assert invalid_reason(ValueError("x")) == "ValueError"


def test_an_unknown_method_is_unimplemented_and_adds_no_label_set() -> None:
    registry = CollectorRegistry()
    with served(registry) as channel:
        unknown = channel.unary_unary("/kassign.v1.TaskAssignmentService/NoSuchMethod")
        with pytest.raises(grpc.RpcError) as failed:
            unknown(b"", timeout=10)
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert failed.value.code() is grpc.StatusCode.UNIMPLEMENTED
    started = [
        s.labels["grpc_method"]
        for m in registry.collect()
        if m.name == "grpc_server_started"
        for s in m.samples
        if s.name.endswith("_total")
    ]
    assert started == ["Check"]


class _Held(AssignmentMetrics):
    """Holds each call once it is decoded until ``release`` is set."""

    def __init__(self, registry: CollectorRegistry) -> None:
        super().__init__(registry)
        self.decoded = threading.Event()
        self.release = threading.Event()

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None:
        super().on_decoded(request, decoded)
        self.decoded.set()
        self.release.wait(timeout=30)


def test_calls_in_flight_rise_while_a_call_runs_and_fall_when_it_ends() -> None:
    registry = CollectorRegistry()
    held = _Held(registry)
    server, port = create_server(
        ServerConfig(host="127.0.0.1", port=0),
        observer=held,
        interceptors=(MetricsInterceptor(GrpcMetrics(registry)),),
    )
    server.start()
    try:
        with (
            grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
            futures.ThreadPoolExecutor(1) as pool,
        ):
            stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
            pending = pool.submit(stub.Assign, group_12(), timeout=60)
            assert held.decoded.wait(timeout=30)
            assert value(registry, "kassign_calls_in_flight", **ASSIGN) == 1
            held.release.set()
            pending.result(timeout=60)
            with pytest.raises(grpc.RpcError):
                stub.Assign(bad_request(), timeout=30)
    finally:
        server.stop(None).wait()
    assert value(registry, "grpc_server_handled_total", **ASSIGN, grpc_code="OK") == 1
    assert value(registry, "kassign_calls_in_flight", **ASSIGN) == 0


def test_initialise_creates_every_code_of_both_services_at_zero() -> None:
    registry = CollectorRegistry()
    metrics = GrpcMetrics(registry)
    assert (
        registry.get_sample_value("grpc_server_handled_total", {**ASSIGN, "grpc_code": "OK"})
        is None
    )
    metrics.initialise((SERVICE_NAME, CONSUMER_SERVICE_NAME))
    handled = {
        (s.labels["grpc_service"], s.labels["grpc_method"], s.labels["grpc_code"]): s.value
        for m in registry.collect()
        if m.name == "grpc_server_handled"
        for s in m.samples
        if s.name.endswith("_total")
    }
    codes = {code.name for code in grpc.StatusCode}
    assert len(codes) == 17
    assert handled == {
        (service, "Assign", code): 0.0
        for service in (SERVICE_NAME, CONSUMER_SERVICE_NAME)
        for code in codes
    }
    for name in ("grpc_server_started_total", "grpc_server_handling_seconds_count"):
        assert registry.get_sample_value(name, ASSIGN) == 0.0
    assert registry.get_sample_value("kassign_calls_in_flight", ASSIGN) == 0.0


def test_consumer_assignments_and_fallbacks_exist_from_the_start() -> None:
    registry = CollectorRegistry()
    ConsumerMetrics(registry)
    fallbacks = {
        s.labels["assignor"]: s.value
        for m in registry.collect()
        if m.name == "kassign_consumer_solver_fallbacks"
        for s in m.samples
        if s.name.endswith("_total")
    }
    assert fallbacks == {"rack-optimal": 0.0}
    answered = registry.get_sample_value(
        "kassign_consumer_assignments_total", {"assignor": "range", "kafka_rack_aware": "true"}
    )
    assert answered == 0.0
