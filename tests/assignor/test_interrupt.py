"""``kassign.assignor.interrupt``: a caller's check stops the long loops, and only when asked."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from kassign.assignor.errors import Interrupted
from kassign.assignor.interrupt import checked, checkpoint
from kassign.assignor.streams.api import run

from tests.assignor.builders import app_states, client, state, tasks


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
