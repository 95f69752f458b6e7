"""A worker that stops answering is noticed, killed and replaced (issue 27).

With one worker SIGSTOPped for 10 s, 4 of 7 new connections timed out while health said SERVING:
the kernel kept handing the stopped worker its share of connections, and the parent only knew
whether its workers had exited.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.server.runtime.heartbeat import PROBE_SECONDS

from tests.ops.serving import Served, alive, kassign_serve
from tests.ops.test_workers import worker_pids

pytestmark = pytest.mark.slow

TIMEOUT = 2.0  # --worker-timeout
BUSY_SECONDS = 3.0  # a busy worker's call, three times its --worker-timeout of 1 s


def _check(served: Served) -> int | None:
    """The whole server's status on a fresh connection (so any worker may take it); None if no
    answer within a second."""
    with grpc.insecure_channel(
        served.target, options=[("grpc.use_local_subchannel_pool", 1)]
    ) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=1
            )
        except grpc.RpcError:
            return None
    status: int = reply.status
    return status


def test_a_stopped_worker_is_killed_and_replaced_and_readiness_recovers(tmp_path: Path) -> None:
    with kassign_serve(tmp_path, "--worker-timeout", str(TIMEOUT), workers=2) as served:
        victim = min(int(pid) for pid in worker_pids(served))
        time.sleep(2 * PROBE_SECONDS)  # past its first probe: no start-up allowance left
        os.kill(victim, signal.SIGSTOP)
        stopped = time.monotonic()
        while alive(victim):
            assert time.monotonic() - stopped < 30, served.log.read_text()
            time.sleep(0.05)
        noticed = time.monotonic() - stopped
        assert f"(pid {victim}) answered no probe" in served.log.read_text()
        replaced = f"worker pid {victim} exited with -9; replacing worker"
        while replaced not in served.log.read_text():  # dead, then reaped: the line follows
            assert time.monotonic() - stopped < 30, served.log.read_text()
            time.sleep(0.05)
        # the timeout, two looks half a second apart, and scheduling on a busy machine
        assert TIMEOUT <= noticed < TIMEOUT + 8, noticed
        deadline = time.monotonic() + 60
        while served.log.read_text().count("kassign serving on") < 3:
            assert time.monotonic() < deadline, served.log.read_text()
            time.sleep(0.05)
        # once the replacement has answered its first probe, every connection is answered SERVING
        deadline = time.monotonic() + 15
        while [_check(served) for _ in range(8)] != [health_pb2.HealthCheckResponse.SERVING] * 8:
            assert time.monotonic() < deadline, served.log.read_text()
        assert "kassign_workers_hung_total 1.0" in served.metrics_text()


def test_a_busy_worker_is_not_taken_for_a_hung_one(tmp_path: Path) -> None:
    """Its probe is answered between the steps of a long computation (a 1 ms switch
    interval), so a worker computing for several timeouts in a row is left alone. The call is
    made heavier until it lasts ``BUSY_SECONDS`` on this machine, whatever its speed."""
    from kassign.v1 import assignment_pb2_grpc

    from tests.ops.serving import heavy_request

    took, tasks = 0.0, 4_000
    with kassign_serve(tmp_path, "--worker-timeout", "1", workers=1) as served:
        # the heaviest answers pass gRPC's default 4 MB: a fast machine reaches 32,000 tasks
        # (20 standbys each: a 4.9 MB answer in CI once)
        unbounded = [("grpc.max_receive_message_length", -1)]
        with grpc.insecure_channel(served.target, options=unbounded) as channel:
            stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
            while took < BUSY_SECONDS and tasks <= 64_000:
                request = heavy_request(tasks=tasks, clients=60, standbys=20)
                started = time.monotonic()
                stub.Assign(request, timeout=300)
                took, tasks = time.monotonic() - started, tasks * 2
        assert "answered no probe" not in served.log.read_text()
        assert "replacing worker" not in served.log.read_text()
        assert took >= BUSY_SECONDS, f"the heaviest call took {took:.1f} s"
