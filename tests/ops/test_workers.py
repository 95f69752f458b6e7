"""``kassign serve --workers 2``: one port for both, and SIGTERM drains calls already in flight."""

from __future__ import annotations

import os
import signal
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import DATA, Served, kassign_serve, listening_sockets

pytestmark = pytest.mark.slow

ASSIGN = {
    "grpc_service": "kassign.v1.TaskAssignmentService",
    "grpc_method": "Assign",
    "grpc_type": "unary",
}
CALLS = 6


def assign_counts(served: Served) -> tuple[float, float]:
    """(started, handled) Assign calls, summed over workers, from the parent's /metrics."""
    started = handled = 0.0
    for family in text_string_to_metric_families(served.metrics_text()):
        for sample in family.samples:
            if not all(sample.labels.get(k) == v for k, v in ASSIGN.items()):
                continue
            if sample.name == "grpc_server_started_total":
                started += sample.value
            elif sample.name == "grpc_server_handled_total":
                handled += sample.value
    return started, handled


def call(target: str, request: pb.AssignRequest) -> pb.AssignResponse:
    # A channel of its own: one TCP connection each, so SO_REUSEPORT spreads them over workers.
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        return assignment_pb2_grpc.TaskAssignmentServiceStub(ch).Assign(request, timeout=120)


def worker_pids(served: Served) -> set[str]:
    return {
        line.rsplit("(pid ", 1)[1].rstrip(")")
        for line in served.log.read_text().splitlines()
        if "kassign serving on" in line
    }


def _health_checks(served: Served, count: int) -> None:
    for _ in range(count):  # a connection each, so the kernel spreads them over the workers
        with grpc.insecure_channel(
            served.target, options=[("grpc.use_local_subchannel_pool", 1)]
        ) as ch:
            reply = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_workers_share_one_port_and_answer_health_checks(tmp_path: Path) -> None:
    with kassign_serve(tmp_path, workers=2) as served:
        assert len(worker_pids(served)) == 2
        _health_checks(served, 4)
        os.kill(served.proc.pid, signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0


def test_sigterm_drains_in_flight_calls_on_every_worker_then_exits_cleanly(tmp_path: Path) -> None:
    request = json_format.Parse((DATA / "group_2000.json").read_text(), pb.AssignRequest())
    with kassign_serve(tmp_path, "--grace", "60", workers=2) as served:
        with futures.ThreadPoolExecutor(CALLS) as pool:
            pending = [pool.submit(call, served.target, request) for _ in range(CALLS)]
            deadline = time.monotonic() + 60
            started, handled = assign_counts(served)
            while started < CALLS and time.monotonic() < deadline:
                time.sleep(0.02)
                started, handled = assign_counts(served)
            assert started == CALLS, "the calls never all reached the server"
            assert handled < CALLS, "every call finished before SIGTERM: nothing was in flight"
            os.kill(served.proc.pid, signal.SIGTERM)
            responses = [f.result(timeout=180) for f in pending]
        assert [len(r.clients) for r in responses] == [50] * CALLS
        assert all(r.error == pb.ASSIGNMENT_ERROR_NONE for r in responses)
        assert served.proc.wait(timeout=90) == 0
        # Each worker logs every answer it gave (kassign.server.observe.calllog), drained ones included.
        assert served.log.read_text().count("assigned group 'bench-group_2000'") == CALLS
        log = served.log.read_text()
        assert log.count("kassign stopped") == 2
        assert "exited with" not in log


def _wait_for_log(served: Served, text: str, count: int = 1) -> None:
    deadline = time.monotonic() + 60
    while served.log.read_text().count(text) < count:
        assert time.monotonic() < deadline, served.log.read_text()
        time.sleep(0.05)


def _listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a listening TCP socket on ``port`` (from /proc)."""
    inodes = listening_sockets(port)
    fds = Path(f"/proc/{pid}/fd")
    return any(os.readlink(fd) in inodes for fd in fds.iterdir())


def test_a_dead_worker_is_replaced_and_its_counts_kept(tmp_path: Path) -> None:
    with kassign_serve(tmp_path, workers=2) as served:
        _health_checks(served, 6)
        before = served.metrics_text()
        originals = sorted(int(pid) for pid in worker_pids(served))
        for n, victim in enumerate(originals, start=1):
            os.kill(victim, signal.SIGKILL)
            _wait_for_log(served, f"worker pid {victim} exited with -9; replacing worker")
            _wait_for_log(served, "kassign serving on", 2 + n)
        replacements = {int(pid) for pid in worker_pids(served)} - set(originals)
        assert len(replacements) == 2
        # Forked after the metrics endpoint opened, they must not keep its port open.
        assert _listens_on(served.proc.pid, served.metrics_port)
        assert not any(_listens_on(pid, served.metrics_port) for pid in replacements)
        # Both originals are gone: whatever answers now is a replacement, on the same port.
        _health_checks(served, 4)
        checks = 'grpc_server_started_total{grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary"}'
        assert f"{checks} 6.0" in before
        # Counts from before the kills are kept, whichever worker served them.
        assert f"{checks} 10.0" in served.metrics_text()
        os.kill(served.proc.pid, signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 1  # workers failed, though the service went on
        log = served.log.read_text()
        for pid in replacements:
            assert f"worker pid {pid} exited\n" in log
