"""kassign.server.runtime.slots: a slot the parent gives up reaches a forked worker's health."""

from __future__ import annotations

import time

import pytest
from grpc_health.v1 import health, health_pb2
from kassign.server.runtime.slots import WORKERS_SERVICE, LostSlots, report_lost_slots

from tests.server.runtime.test_supervisor import run

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_a_slot_lost_after_the_fork_is_seen_by_the_child() -> None:
    """In a fresh process (no fork from pytest's threads): the child waits until the parent
    has marked slot 2, then reports what it reads."""
    report = run("""
        from kassign.server.runtime.slots import LostSlots
        lost = LostSlots(3)
        go_r, go_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.read(go_r, 1)
            os.write(out_w, json.dumps(list(lost.lost())).encode())
            os._exit(0)
        before = list(lost.lost())
        lost.lose(2)
        os.write(go_w, b"x")
        child = json.loads(os.read(out_r, 100))
        os.waitpid(pid, 0)
        print(json.dumps({"before": before, "child": child}))
    """)
    assert report == {"before": [], "child": [2]}


def test_lose_refuses_a_slot_that_does_not_exist() -> None:
    with pytest.raises(IndexError):
        LostSlots(2).lose(2)


def _status(servicer: health.HealthServicer, service: str) -> int:
    request = health_pb2.HealthCheckRequest(service=service)
    reply: health_pb2.HealthCheckResponse = servicer.Check(request, None)  # type: ignore[arg-type]
    return reply.status


def _wait_for(servicer: health.HealthServicer, status: int) -> None:
    deadline = time.monotonic() + 10
    while _status(servicer, WORKERS_SERVICE) != status:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_health_turns_not_serving_for_the_workers_only_and_stays_so_in_shutdown() -> None:
    lost = LostSlots(2)
    servicer = health.HealthServicer()
    servicer.set("", SERVING)
    report_lost_slots(lost, servicer, poll_seconds=0.01)
    assert _status(servicer, WORKERS_SERVICE) == SERVING
    lost.lose(0)
    _wait_for(servicer, NOT_SERVING)
    assert _status(servicer, "") == SERVING  # the workers left still answer
    servicer.enter_graceful_shutdown()
    time.sleep(0.05)
    assert _status(servicer, WORKERS_SERVICE) == NOT_SERVING


def test_a_worker_forked_after_the_loss_starts_not_serving() -> None:
    lost = LostSlots(2)
    lost.lose(1)
    servicer = health.HealthServicer()
    report_lost_slots(lost, servicer, poll_seconds=60)
    assert _status(servicer, WORKERS_SERVICE) == NOT_SERVING
