"""The server as a whole: health, reflection, message limits, SIGTERM draining in-flight calls."""

from __future__ import annotations

import platform
import signal
import socket
import threading
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from kassign.server.runtime.app import (
    CONSUMER_SERVICE_NAME,
    SERVICE_NAME,
    ServerConfig,
    create_server,
)
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc

from tests.server.requests import group
from tests.server.running import in_process, subprocess_server


def test_health_says_serving_for_the_server_and_both_services() -> None:
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for name in ("", SERVICE_NAME, CONSUMER_SERVICE_NAME):
            reply = stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_services_and_serves_the_proto() -> None:
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        services = {SERVICE_NAME, CONSUMER_SERVICE_NAME, "grpc.health.v1.Health"}
        assert set(database.get_services()) >= services
        pool = descriptor_pool.DescriptorPool(database)
        method = pool.FindServiceByName(SERVICE_NAME).FindMethodByName("Assign")
        assert method.input_type.full_name == "kassign.v1.AssignRequest"
        assert "members" in method.input_type.fields_by_name
        method = pool.FindServiceByName(CONSUMER_SERVICE_NAME).FindMethodByName("Assign")
        assert method.input_type.full_name == "kassign.v1.ConsumerAssignRequest"


def test_reflection_finds_the_file_of_a_method_by_its_full_name() -> None:
    # ghz resolves --call package.Service.Method with exactly this request
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        ask = lambda symbol: ProtoReflectionDescriptorDatabase(channel).FindFileContainingSymbol(
            symbol  # a fresh database each time: one answers from the files it already holds
        )
        assert ask(f"{SERVICE_NAME}.Assign").name == "kassign/v1/assignment.proto"
        assert ask("grpc.health.v1.Health.Check").name == "grpc_health/v1/health.proto"
        assert ask(SERVICE_NAME).name == "kassign/v1/assignment.proto"
        assert ask(f"{CONSUMER_SERVICE_NAME}.Assign").name == "kassign/v1/consumer.proto"
        for missing in (f"{SERVICE_NAME}.Nope", "kassign.v1.Nope.Assign", "Assign"):
            with pytest.raises(KeyError):
                ask(missing)


def test_requests_over_4_mib_are_read_and_the_limit_is_configurable() -> None:
    big = pb.AssignRequest(group_id="x" * (5 << 20))  # no members: a quick INVALID_ARGUMENT
    with (
        in_process() as (_, target),
        grpc.insecure_channel(
            target, options=[("grpc.max_send_message_length", 64 << 20)]
        ) as channel,
    ):
        with pytest.raises(grpc.RpcError) as caught:
            assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(big, timeout=30)
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    with (
        in_process(max_message_bytes=1 << 20) as (_, target),
        grpc.insecure_channel(
            target, options=[("grpc.max_send_message_length", 64 << 20)]
        ) as channel,
    ):
        with pytest.raises(grpc.RpcError) as caught:
            assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(big, timeout=30)
        assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_taken_port_is_an_error_not_a_shared_port() -> None:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        with pytest.raises(OSError):
            create_server(ServerConfig(host="127.0.0.1", port=holder.getsockname()[1]))
    finally:
        holder.close()


def _call_in_thread(
    target: str, request: pb.AssignRequest
) -> tuple[threading.Thread, dict[str, object]]:
    result: dict[str, object] = {}

    def call() -> None:
        with grpc.insecure_channel(
            target, options=[("grpc.max_receive_message_length", 64 << 20)]
        ) as ch:
            try:
                result["response"] = assignment_pb2_grpc.TaskAssignmentServiceStub(ch).Assign(
                    request, timeout=120
                )
            except grpc.RpcError as exc:
                result["error"] = exc
            result["done_at"] = time.monotonic()

    thread = threading.Thread(target=call)
    thread.start()
    return thread, result


@pytest.mark.slow
def test_sigterm_lets_the_in_flight_call_finish_then_exits(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    request = group(clients=100, threads=4, partitions=5_000, standbys=1)  # 10,000 tasks
    with subprocess_server(tmp_path, "--journal", str(journal), "--grace", "60") as (proc, target):
        thread, result = _call_in_thread(target, request)
        deadline = time.monotonic() + 60
        # the journal records a request before it is computed: the call is then in flight
        while not any(f.stat().st_size for f in journal.glob("*.jsonl")):
            assert time.monotonic() < deadline, "the call never reached the server"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        signalled_at = time.monotonic()
        thread.join(timeout=120)
        assert "error" not in result, result.get("error")
        response = result["response"]
        assert (
            isinstance(response, pb.AssignResponse) and response.error == pb.ASSIGNMENT_ERROR_NONE
        )
        margin = float(result["done_at"]) - signalled_at  # type: ignore[arg-type]
        print(f"the call finished {margin:.2f}s after SIGTERM")
        assert margin > 0, "the call finished before the signal: make the request larger"
        assert proc.wait(timeout=60) == 0
        with pytest.raises(grpc.RpcError) as caught, grpc.insecure_channel(target) as channel:
            assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(group(), timeout=5)
        assert caught.value.code() is grpc.StatusCode.UNAVAILABLE


def test_sigint_on_an_idle_server_exits_cleanly_and_logs_the_port(tmp_path: Path) -> None:
    with subprocess_server(tmp_path, "--malloc-tuning") as (proc, target):
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        _, err = proc.communicate(timeout=10)
    assert f":{target.rsplit(':', 1)[1]}" in err.decode()
    if platform.libc_ver()[0] == "glibc":  # the worker set malloc's thresholds (runtime/malloc.py)
        assert "malloc tuned: mmap threshold 64 MiB" in err.decode()
