"""kassign.server.runtime.heartbeat and readiness: a silent worker is killed, readiness votes.

The whole path (a SIGSTOPped worker of a real ``kassign serve`` replaced) is in
tests/ops/test_hung_worker.py; here the watchdog's decisions, with a fake pool and clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpc_health.v1 import health, health_pb2
from kassign.server.runtime.heartbeat import Heartbeats, Watchdog
from kassign.server.runtime.readiness import Readiness

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@dataclass
class Pool:
    workers: dict[int, int]  # slot -> pid
    forked: dict[int, float]  # pid -> when
    stopping: bool = False
    killed: list[int] = field(default_factory=list)

    def live(self) -> dict[int, int]:
        return dict(self.workers)

    def started(self, pid: int) -> float | None:
        return self.forked.get(pid)

    def kill_unresponsive(self, pid: int) -> bool:
        self.killed.append(pid)
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _watchdog(pool: Pool, beats: Heartbeats, clock: Clock) -> Watchdog:
    return Watchdog(beats, pool, timeout=5.0, startup=30.0, clock=clock)


def test_a_silent_worker_is_killed_on_the_second_late_look_and_its_slot_marked() -> None:
    clock, beats = Clock(), Heartbeats(2)
    pool = Pool({0: 11, 1: 12}, {11: 0.0, 12: 0.0})
    watchdog = _watchdog(pool, beats, clock)
    beats.answered(0, 11, 99.0)
    beats.answered(1, 12, 99.0)
    assert watchdog.check() == [] and not beats.replacing()
    clock.now = 104.5  # 5.5 s since worker 11's last answer; 12 keeps answering
    beats.answered(1, 12, 104.4)
    assert watchdog.check() == []  # late once: a suspect, not yet killed
    clock.now = 105.0
    beats.answered(1, 12, 104.9)
    assert watchdog.check() == [11] and pool.killed == [11]
    assert beats.replacing()
    clock.now = 105.5
    assert watchdog.check() == [] and pool.killed == [11]  # killed once, though not yet reaped
    pool.workers[0] = 21  # the supervisor's replacement
    pool.forked[21] = 105.1
    clock.now = 106.0
    assert watchdog.check() == [] and beats.replacing()  # not answered yet
    beats.answered(0, 21, 106.2)
    assert watchdog.check() == [] and not beats.replacing()


def test_a_worker_late_once_then_answering_is_left_alone() -> None:
    clock, beats = Clock(), Heartbeats(1)
    pool = Pool({0: 11}, {11: 0.0})
    watchdog = _watchdog(pool, beats, clock)
    beats.answered(0, 11, 94.0)
    assert watchdog.check() == []  # 6 s: late once
    beats.answered(0, 11, 100.1)
    clock.now = 100.5
    assert watchdog.check() == []
    clock.now = 106.0  # late again, but not twice in a row
    assert watchdog.check() == [] and pool.killed == []


def test_a_new_worker_gets_the_startup_allowance_not_the_timeout() -> None:
    clock, beats = Clock(), Heartbeats(1)
    pool = Pool({0: 11}, {11: 80.0})  # forked 20 s ago, no answer yet
    beats.answered(0, 7, 99.0)  # the slot's previous worker answered, not this one
    watchdog = _watchdog(pool, beats, clock)
    assert watchdog.check() == [] and watchdog.check() == []
    clock.now = 111.0  # 31 s since the fork
    assert watchdog.check() == [] and watchdog.check() == [11]


def _status(servicer: health.HealthServicer, service: str) -> int:
    request = health_pb2.HealthCheckRequest(service=service)
    reply: health_pb2.HealthCheckResponse = servicer.Check(request, None)  # type: ignore[arg-type]
    return reply.status


def test_readiness_is_up_only_when_no_reason_holds_it_down() -> None:
    servicer = health.HealthServicer()
    servicer.set("", SERVING)
    servicer.set("svc", SERVING)
    readiness = Readiness(servicer)
    readiness.hold("saturated", ("", "svc"), True)
    readiness.hold("replacing", ("",), True)
    readiness.hold("saturated", ("", "svc"), False)  # saturation ends while a worker is replaced
    assert _status(servicer, "") == NOT_SERVING
    assert _status(servicer, "svc") == SERVING
    readiness.hold("replacing", ("",), False)
    assert _status(servicer, "") == SERVING
