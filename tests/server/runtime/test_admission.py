"""Load shedding (issue 16): slots, a bounded line, RESOURCE_EXHAUSTED past it, and health.

``Gate`` alone first (threads, no gRPC), then a real in-process server whose assignment calls
are held inside the servicer by an observer until the test lets them go, so which call holds a
slot, which waits and which is shed is known, not timed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.cli.main import build_parser
from kassign.cli.serve import serve_config
from kassign.server.observe.prometheus import LoadMetrics
from kassign.server.runtime.admission import DEFAULT_MAX_QUEUE, Entry, Gate, Load
from kassign.server.runtime.app import (
    CONSUMER_SERVICE_NAME,
    SERVICE_NAME,
    ServerConfig,
    create_server,
)
from kassign.server.streams.decode import DecodedRequest
from kassign.server.streams.servicer import NullObserver
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc
from prometheus_client import CollectorRegistry

from tests.server.requests import group

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def never_set(ticket: threading.Event) -> None:
    """A caller that gives up at once when it has to wait."""


def test_slots_then_the_line_then_shedding() -> None:
    loads: list[Load] = []
    gate = Gate(2, 1, loads.append)
    assert gate.enter(never_set) is Entry.HELD
    assert gate.enter(never_set) is Entry.HELD
    assert loads[-1] == Load(2, 0, saturated=False)
    assert gate.enter(never_set) is Entry.LEFT  # waited, gave up: out of the line again
    assert loads[-2:] == [Load(2, 1, saturated=True), Load(2, 0, saturated=False)]
    gate.leave()
    assert loads[-1] == Load(1, 0, saturated=False)
    with pytest.raises(ValueError, match="at least one slot"):
        Gate(0, 1, loads.append)


def test_a_full_line_sheds_and_a_freed_slot_goes_to_the_first_in_line() -> None:
    loads: list[Load] = []
    gate = Gate(1, 2, loads.append)
    assert gate.enter(never_set) is Entry.HELD
    order: list[int] = []
    waiting = threading.Barrier(3)

    def queued(n: int) -> None:
        def wait(ticket: threading.Event) -> None:
            waiting.wait()
            assert ticket.wait(30)

        assert gate.enter(wait) is Entry.HELD
        order.append(n)
        gate.leave()

    first = threading.Thread(target=queued, args=(1,))
    first.start()
    while not loads[-1].queued:  # the first is in line before the second arrives
        time.sleep(0.01)
    second = threading.Thread(target=queued, args=(2,))
    second.start()
    waiting.wait()
    assert loads[-1] == Load(1, 2, saturated=True)
    assert gate.enter(never_set) is Entry.SHED  # shed: the line never held it
    gate.leave()
    first.join(30)
    second.join(30)
    assert order == [1, 2]
    assert loads[-1] == Load(0, 0, saturated=False)


def test_a_caller_gone_from_the_line_takes_no_slot_and_keeps_no_place() -> None:
    """A ticket is set both when the slot is handed over and when the caller goes (its end
    callback): one that went while others waited before it leaves the line, and the freed slot
    still goes to the first in line (before, it was taken as handed a slot and its ``leave``
    admitted the one before it beside the call computing)."""
    loads: list[Load] = []
    gate = Gate(1, 2, loads.append)
    assert gate.enter(never_set) is Entry.HELD
    tickets: list[threading.Event] = []
    entries: dict[str, Entry] = {}

    def queued(name: str) -> None:
        def wait(ticket: threading.Event) -> None:
            tickets.append(ticket)
            assert ticket.wait(30)

        entries[name] = gate.enter(wait)

    first = threading.Thread(target=queued, args=("first",))
    first.start()
    while len(tickets) < 1:
        time.sleep(0.01)
    gone = threading.Thread(target=queued, args=("gone",))
    gone.start()
    while len(tickets) < 2:
        time.sleep(0.01)
    tickets[1].set()  # its caller cancelled: the end callback wakes it
    gone.join(30)
    assert entries == {"gone": Entry.LEFT}
    assert loads[-1] == Load(1, 1, saturated=False)
    gate.leave()  # the slot goes to the first in line
    first.join(30)
    assert entries["first"] is Entry.HELD
    assert loads[-1] == Load(1, 0, saturated=False)
    gate.leave()
    assert loads[-1] == Load(0, 0, saturated=False)


@settings(max_examples=60, deadline=None)
@given(
    slots=st.integers(1, 3),
    queue=st.integers(0, 3),
    steps=st.lists(st.sampled_from(["enter", "leave"]), max_size=30),
)
def test_the_gate_never_exceeds_its_slots_or_its_line(
    slots: int, queue: int, steps: list[str]
) -> None:
    """Callers that give up at once: a slot is held only when free, a call shed only when every
    slot is busy and (with no one waiting) the line has no room for it, i.e. ``queue == 0``."""
    loads: list[Load] = []
    gate = Gate(slots, queue, loads.append)
    held = 0
    for step in steps:
        if step == "leave" and held:
            gate.leave()
            held -= 1
        elif step == "enter":
            entered = gate.enter(never_set)
            if held < slots:
                assert entered is Entry.HELD
                held += 1
            else:
                assert entered is (Entry.SHED if queue == 0 else Entry.LEFT)
        assert all(0 <= load.computing <= slots and load.queued <= queue for load in loads)
        assert loads[-1].computing == held and loads[-1].queued == 0


class Held(NullObserver):
    """Holds every assignment call inside the servicer until ``release`` is set."""

    def __init__(self) -> None:
        self.inside = threading.Semaphore(0)
        self.release = threading.Event()

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None:
        self.inside.release()
        assert self.release.wait(30)


@contextmanager
def held_server(
    max_workers: int, max_queue: int
) -> Iterator[tuple[Held, LoadMetrics, grpc.Channel]]:
    held = Held()
    metrics = LoadMetrics(CollectorRegistry())
    metrics.initialise((SERVICE_NAME, CONSUMER_SERVICE_NAME))
    config = ServerConfig(host="127.0.0.1", port=0, max_workers=max_workers, max_queue=max_queue)
    server, port = create_server(config, observer=held, load_observer=metrics)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield held, metrics, channel
    finally:
        held.release.set()
        server.stop(None).wait()


def health(channel: grpc.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)  # type: ignore[attr-defined]
    return int(reply.status)


def assign(channel: grpc.Channel, timeout: float = 30) -> grpc.StatusCode:
    stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
    try:
        stub.Assign(group(), timeout=timeout)
    except grpc.RpcError as exc:
        return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def wait_for_depth(metrics: LoadMetrics, depth: int) -> None:
    limit = time.monotonic() + 30
    while metrics.queue_depth._value.get() != depth:  # type: ignore[attr-defined]
        assert time.monotonic() < limit, f"the queue never held {depth}"
        time.sleep(0.01)


def shed_count(metrics: LoadMetrics) -> float:
    return metrics.shed.labels(SERVICE_NAME, "Assign")._value.get()  # type: ignore[attr-defined]


def test_a_saturated_server_sheds_at_once_and_says_not_serving_until_a_slot_frees() -> None:
    with held_server(max_workers=1, max_queue=1) as (held, metrics, channel):
        assert shed_count(metrics) == 0  # the series exists from start-up
        with ThreadPoolExecutor(2) as pool:
            computing: Future[grpc.StatusCode] = pool.submit(assign, channel)
            assert held.inside.acquire(timeout=30)
            assert health(channel) == SERVING  # busy, not saturated
            queued: Future[grpc.StatusCode] = pool.submit(assign, channel)
            wait_for_depth(metrics, 1)
            names = ("", SERVICE_NAME, CONSUMER_SERVICE_NAME)
            assert [health(channel, name) for name in names] == [NOT_SERVING] * 3
            assert assign(channel) == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert shed_count(metrics) == 1
            held.release.set()
            assert computing.result(30) == queued.result(30) == grpc.StatusCode.OK
        assert health(channel) == SERVING
        assert metrics.queue_depth._value.get() == 0  # type: ignore[attr-defined]


def test_a_call_whose_deadline_passes_in_line_leaves_it_without_a_slot() -> None:
    with held_server(max_workers=1, max_queue=1) as (held, metrics, channel):
        with ThreadPoolExecutor(1) as pool:
            computing = pool.submit(assign, channel)
            assert held.inside.acquire(timeout=30)
            assert assign(channel, timeout=0.5) == grpc.StatusCode.DEADLINE_EXCEEDED
            assert metrics.queue_depth._value.get() == 0  # type: ignore[attr-defined]
            assert health(channel) == SERVING
            held.release.set()
            assert computing.result(30) == grpc.StatusCode.OK
        assert not held.inside.acquire(timeout=0.2)  # the one that left never reached a slot
        assert shed_count(metrics) == 0


def test_a_call_cancelled_in_line_leaves_it() -> None:
    with held_server(max_workers=1, max_queue=1) as (held, metrics, channel):
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        computing = stub.Assign.future(group(), timeout=30)
        assert held.inside.acquire(timeout=30)
        queued = stub.Assign.future(group(), timeout=30)
        wait_for_depth(metrics, 1)
        queued.cancel()
        wait_for_depth(metrics, 0)
        assert health(channel) == SERVING
        held.release.set()
        assert computing.result(30).members
        assert not held.inside.acquire(timeout=0.2)  # the cancelled call never reached a slot


def test_the_serve_flags_set_the_slots_and_the_line() -> None:
    def config(*argv: str) -> ServerConfig:
        return serve_config(build_parser().parse_args(["serve", *argv]))

    assert config("--max-workers", "3", "--max-queue", "0").max_queue == 0
    assert config().max_queue == DEFAULT_MAX_QUEUE
    with pytest.raises(SystemExit):
        config("--max-queue", "-1")
