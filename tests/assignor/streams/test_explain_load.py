"""Issue 25's Streams explanations (``balance`` ``LOAD``): the rule given is the load mode's own
(``LOAD``, ``STICKY``, ``CAUGHT_UP``, ``WARM_UP``, ...), never ``UNSPECIFIED``, and a reason
names the figures that decided it (shares of the bound, per thread)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from kassign.assignor.streams.api import run, run_explained
from kassign.assignor.streams.explain import Explanation, Placement, ReplicaKind
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.trace import Rule

from tests.assignor.strategies import uuid_for
from tests.assignor.streams.test_load_balance import (
    ASSIGNORS,
    HOT,
    TASKS,
    _client,
    _group,
    _kip441_group,
    _loaded_states,
)


def _explained(state: ApplicationState) -> Explanation:
    assignment, _, explanation = run_explained(state)
    assert assignment == run(state)[0]  # explaining never changes the answer
    return explanation


def _placements(explanation: Explanation, task: TaskId) -> list[Placement]:
    return [p for s in explanation.tasks if s.task == task for p in s.placements]


def _share(reason: str, pid: object) -> float:
    found = re.search(rf"{pid} at (\d+\.\d\d) of the bound with it", reason)
    assert found, reason
    return float(found.group(1))


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_a_hot_task_placed_by_load_with_its_figures(assignor: str) -> None:
    """No owner before: every active is placed by load; the hot task's client is at the bound
    (10 a thread, bound 10), and the reason says so."""
    state = _group([_client(1), _client(2)], HOT, assignor=assignor)
    (hot,) = _placements(_explained(state), TASKS[0])
    assert hot.rule is Rule.LOAD and hot.kind is ReplicaKind.ACTIVE
    assert hot.reason == (
        f"load: no owner before; placed by load, {hot.process_id} at 1.00 of the bound with it "
        "(10 a thread, bound 10)"
    )


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_kept_task_sticky_with_its_share_and_a_moved_one_names_its_owner(assignor: str) -> None:
    """Client 1 ran all five tasks: it keeps the hot one (at the bound), the light ones move
    to client 2, each reason saying where client 1 would have been keeping it (11 / 10)."""
    state = _group([_client(1, active=TASKS), _client(2)], HOT, assignor=assignor)
    explanation = _explained(state)
    (kept,) = _placements(explanation, TASKS[0])
    one, two = uuid_for(1), uuid_for(2)
    assert (kept.rule, kept.process_id) == (Rule.STICKY, one)
    assert kept.reason == f"sticky: ran it before; {one} at 1.00 of the bound with it"
    for task in TASKS[1:]:
        (moved,) = _placements(explanation, task)
        assert (moved.rule, moved.process_id) == (Rule.LOAD, two)
        assert moved.reason == (
            f"load: {two} at 0.50 of the bound with it (5 a thread, bound 10); "
            f"{one}, its owner, would be at 1.10 keeping it"
        )


@pytest.mark.parametrize("warmups", [1, 4])
def test_held_actives_and_warm_ups_say_where_load_wants_them(warmups: int) -> None:
    """Client 2 is new and far behind: KIP-441 holds every active on client 1 (caught up);
    load wants two of them on client 2, which warms up as many as the budget allows."""
    explanation = _explained(_kip441_group(warmups))
    one, two = uuid_for(1), uuid_for(2)
    actives = [p for s in explanation.tasks for p in s.placements if p.process_id == one]
    held = [p for p in actives if "load wants it" in p.reason]
    assert len(held) == 2 and all(p.rule is Rule.CAUGHT_UP for p in held)
    assert all(p.reason.startswith("caught-up: lag 0, running within ") for p in held)
    warmed = [p for p in held if p.reason.endswith(": a warm-up goes there")]
    assert len(warmed) == min(warmups, 2)
    assert all(f"load wants it on {two}, not caught up ({two} at " in p.reason for p in held)
    if warmups == 1:
        (short,) = (p for p in held if p not in warmed)
        assert short.reason.endswith("no warm-up left (max_warmup_replicas 1)")
    kept = [p for p in actives if p not in held]
    assert kept and all(p.rule is Rule.STICKY for p in kept)
    warm = [p for s in explanation.tasks for p in s.placements if p.kind is ReplicaKind.WARM_UP]
    assert len(warm) == len(warmed) and all(p.rule is Rule.WARM_UP for p in warm)
    for p in warm:
        assert p.reason.startswith("warm-up: lag 1000000000 beyond ")
        assert f"; load wants it here ({two} at " in p.reason
        assert _share(p.reason, two) == 0.50


@settings(max_examples=15, deadline=None)
@given(_loaded_states())
def test_no_load_placement_is_unspecified(state: ApplicationState) -> None:
    """Random groups (both assignors, racks, tags, standbys, lags): every replica has a rule of
    its own, and each LOAD reason gives a share of the bound."""
    for story in _explained(state).tasks:
        for p in story.placements:
            assert p.rule is not Rule.UNSPECIFIED, p
            if p.rule is Rule.LOAD:
                assert _share(p.reason, p.process_id) >= 0
