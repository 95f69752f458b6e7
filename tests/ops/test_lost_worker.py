"""A worker slot lost for good, as an operator sees it: metrics and a health status, not only a
log line (issue 16). ``kassign serve --workers 2``; worker 0 is killed as soon as it starts, three
times, so the supervisor gives its slot up while worker 1 serves on."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.server.runtime.slots import POLL_SECONDS, WORKERS_SERVICE
from kassign.server.runtime.supervisor import QUICK_FAILURES
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import Served, kassign_serve

pytestmark = pytest.mark.slow

STARTING = re.compile(r"worker 0 \(pid (\d+)\) starting")


def pool_values(served: Served) -> dict[str, float]:
    wanted = {
        "kassign_workers_configured",
        "kassign_workers_live",
        "kassign_workers_lost",
        "kassign_worker_restarts_total",
    }
    found = {}
    processes = set()
    for family in text_string_to_metric_families(served.metrics_text()):
        for sample in family.samples:
            if sample.name in wanted:
                found[sample.name] = sample.value
            if sample.name == "process_resident_memory_bytes":
                processes.add(sample.labels["process"])
    found["processes"] = len(processes)
    return found


def health(served: Served, service: str) -> int:
    with grpc.insecure_channel(served.target) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=10
        )
    return reply.status


def kill_worker_0_as_it_starts(served: Served, times: int) -> None:
    killed: set[int] = set()
    deadline = time.monotonic() + 60
    while len(killed) < times:
        assert time.monotonic() < deadline, served.log.read_text()
        pids = {int(p) for p in STARTING.findall(served.log.read_text())} - killed
        for pid in sorted(pids):
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.02)


def test_a_lost_slot_shows_in_metrics_and_in_the_workers_health(tmp_path: Path) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    with kassign_serve(tmp_path, workers=2) as served:
        assert pool_values(served) == {
            "kassign_workers_configured": 2,
            "kassign_workers_live": 2,
            "kassign_workers_lost": 0,
            "kassign_worker_restarts_total": 0,
            "processes": 3,
        }
        assert health(served, WORKERS_SERVICE) == serving
        kill_worker_0_as_it_starts(served, QUICK_FAILURES)
        deadline = time.monotonic() + 30
        while "not replacing it" not in served.log.read_text():
            assert time.monotonic() < deadline, served.log.read_text()
            time.sleep(0.05)
        assert pool_values(served) == {
            "kassign_workers_configured": 2,
            "kassign_workers_live": 1,
            "kassign_workers_lost": 1,
            "kassign_worker_restarts_total": QUICK_FAILURES - 1,
            "processes": 2,
        }
        time.sleep(POLL_SECONDS * 3)
        # Only worker 1 is left to answer: the service serves, and says a worker is lost.
        assert health(served, "") == serving
        assert health(served, WORKERS_SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING
        os.kill(served.proc.pid, signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 1  # workers failed: the exit status says so
