"""``kassign.assignor.interrupt``: a caller's check stops the long loops, and only when asked."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from kassign.assignor.errors import Interrupted
from kassign.assignor.flow import FlowGraph, Outcome, optimal_flows, use_runner
from kassign.assignor.interrupt import checked, checkpoint
from kassign.assignor.streams.api import run
from kassign.assignor.streams.model import ApplicationState, RackAwareStrategy

from tests.assignor.builders import app_states, client, state, tasks
from tests.ops.serving import load_script

RACK_STOP_CPU = 0.25
"""CPU seconds a rack-aware call may run after its deadline: the solve it is in (about 40 ms
here) and the step after it; before issue 27 the 10,000-task call below ran its whole joint
stage and the rest of the call (80-170 ms at rest, seconds on heavier groups) and never
stopped inside the assignor."""


class Stop(Interrupted):
    pass


def stop() -> None:
    raise Stop("the caller left")


def test_without_a_check_a_checkpoint_does_nothing() -> None:
    checkpoint()


def test_the_check_runs_at_the_first_checkpoint_then_at_most_once_per_interval() -> None:
    calls: list[int] = []
    with checked(lambda: calls.append(1), every=3600):
        for _ in range(1000):
            checkpoint()
    assert calls == [1]
    with checked(lambda: calls.append(2), every=0):
        checkpoint()
        checkpoint()
    assert calls == [1, 2, 2]
    checkpoint()  # the block ended: no check left behind
    assert calls == [1, 2, 2]


def test_a_check_belongs_to_its_thread() -> None:
    seen: list[BaseException] = []

    def elsewhere() -> None:
        try:
            checkpoint()
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            seen.append(exc)

    with checked(stop):
        other = threading.Thread(target=elsewhere)
        other.start()
        other.join(30)
    assert seen == []


def test_standby_placement_stops_at_its_checkpoint_and_run_lets_the_interruption_through() -> None:
    """``api.run`` turns an assignor's unexpected errors into ``InvalidAssignment``; an
    ``Interrupted`` passes as it is, so the service answers the caller's code."""
    group = state(
        [client(n, threads=2) for n in range(4)],
        stateful=tasks("0_0 0_1 0_2 0_3"),
        num_standby_replicas=2,
    )
    with checked(stop, every=0), pytest.raises(Stop, match="the caller left"):
        run(group)


@settings(max_examples=40, deadline=None)
@given(app_states())
def test_a_check_that_never_stops_changes_nothing(group: object) -> None:
    calls: list[None] = []
    with checked(lambda: calls.append(None), every=0):
        checked_result = run(group)  # type: ignore[arg-type]
    assert checked_result == run(group)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def rack_group() -> ApplicationState:
    """``rack_aware_bench``'s 10,000 tasks x 1,000 clients (3 racks, a standby, tags),
    ``min_traffic``: about 0.7 s of CPU, most of it after the first solve."""
    bench = load_script("bench/rack_aware_bench.py")
    group: ApplicationState = bench.make_state(10_000, 1_000, RackAwareStrategy.MIN_TRAFFIC)
    return group


class CpuDeadline:
    """A deadline that expires while the ``expire_in``-th solve of the call runs (OR-Tools
    cannot be interrupted: the solve is the rack phase's longest piece), as this thread's CPU
    time; ``runner`` is the library's own solver, counted."""

    def __init__(self, expire_in: int) -> None:
        self.expire_in = expire_in
        self.solves = 0
        self.expired_at: float | None = None

    def runner(self, graph: FlowGraph) -> Outcome:
        self.solves += 1
        if self.solves == self.expire_in:
            self.expired_at = time.thread_time()
        return optimal_flows(graph)

    def check(self) -> None:
        if self.expired_at is not None:
            raise Stop("the deadline passed")


def test_a_rack_aware_call_stops_promptly_when_its_deadline_passes_in_the_joint_stage(
    rack_group: ApplicationState,
) -> None:
    """Issue 27: a ``min_traffic`` call ran on for seconds after its deadline; the rack path
    had no checkpoint, so it stopped only at the next phase's. The deadline expires during the
    call's third and last solve (phase 5, the joint stage's); the call must stop within
    ``RACK_STOP_CPU`` of CPU after it, the rest of that solve included."""
    deadline = CpuDeadline(expire_in=3)
    previous = use_runner(deadline.runner)
    try:
        with checked(deadline.check, every=0), pytest.raises(Stop):
            run(rack_group)
        stopped = time.thread_time()
    finally:
        use_runner(previous)
    assert deadline.solves == 3 and deadline.expired_at is not None
    assert stopped - deadline.expired_at < RACK_STOP_CPU
