"""``trace.attribute``: a pair's rule is the rule of the stage that added it, and stays until a
later stage of its kind drops it."""

from __future__ import annotations

from uuid import UUID

from kassign.assignor.placement import Rule
from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.trace import Phase, Placed, Stage, Trace, attribute

A, B = UUID(int=1), UUID(int=2)
T0, T1 = TaskId(0, 0), TaskId(0, 1)
ACTIVE, STANDBY = TaskType.ACTIVE, TaskType.STANDBY


def test_the_stage_that_added_a_pair_names_its_rule_and_source() -> None:
    trace = Trace(
        (
            Stage(ACTIVE, Rule.BALANCE, {A: {T0, T1}, B: set()}),
            Stage(STANDBY, Rule.TAG_SPREAD, {B: {T0}}),  # another kind: no effect on actives
            Stage(ACTIVE, Rule.CAUGHT_UP, {A: {T1}, B: {T0}}, phase=Phase.MOVEMENT),
            Stage(ACTIVE, Rule.RACK_COST, {A: {T1}, B: {T0}}),  # changes nothing
        )
    )
    assert attribute(trace, ACTIVE) == {
        (T1, A): Placed(Rule.BALANCE),
        (T0, B): Placed(Rule.CAUGHT_UP, A, Phase.MOVEMENT),
    }
    assert attribute(trace, STANDBY) == {(T0, B): Placed(Rule.TAG_SPREAD)}


def test_per_pair_rules_and_scope() -> None:
    trace = Trace(
        (
            Stage(ACTIVE, Rule.BALANCE, {A: {T0}}, scope=frozenset({T0})),
            # a stage scoped to T1 leaves T0's pair alone; its own pair takes the override
            Stage(ACTIVE, Rule.BALANCE, {B: {T1}}, {(T1, B): Rule.FALLBACK}, frozenset({T1})),
        )
    )
    assert attribute(trace, ACTIVE) == {
        (T0, A): Placed(Rule.BALANCE),
        (T1, B): Placed(Rule.FALLBACK),
    }
