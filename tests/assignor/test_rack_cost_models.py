"""Kafka's two rack cost models (``rack.costs.CostModel``): which partitions each one counts.

Kafka's built-in assignors (``RackAwareTaskAssignor#getCost``) count an active's source partitions
and a standby's changelog partitions; KIP-924's ``TaskAssignmentUtils`` counts all of an active's
partitions. Each case has a task whose source is in rack a and whose changelog is only in rack b.
"""

from __future__ import annotations

import pytest
from kassign.assignor.streams import rack
from kassign.assignor.streams.model import TaskId, TaskInfo, TaskTopicPartition
from kassign.assignor.streams.rack.costs import CostModel, CostPhase, counted_partitions
from kassign.assignor.streams.result import TaskType

from tests.assignor.rack_cases import client, pid, state_of

T0, T1 = TaskId(0, 0), TaskId(0, 1)
SOURCE = TaskTopicPartition("in", 0, True, False, frozenset({"a"}))
CHANGELOG = TaskTopicPartition("log", 0, False, True, frozenset({"b"}))


def _task(tid: TaskId, source: str, changelog: str) -> TaskInfo:
    """A stateful task reading ``in`` (replicas in ``source``) and logging to ``log``."""
    return TaskInfo(
        tid,
        True,
        ("store",),
        (
            TaskTopicPartition("in", tid.partition, True, False, frozenset({source})),
            TaskTopicPartition("log", tid.partition, False, True, frozenset({changelog})),
        ),
    )


def _crossed():  # type: ignore[no-untyped-def]
    """T0 (source a, changelog b) on the b client, T1 (both b) on the a client."""
    state = state_of([_task(T0, "a", "b"), _task(T1, "b", "b")], [client(0, "a"), client(1, "b")])
    return state, {pid(0): frozenset({T1}), pid(1): frozenset({T0})}


@pytest.mark.parametrize(
    ("model", "task_type", "counted"),
    [
        (CostModel.BUILT_IN, TaskType.ACTIVE, [SOURCE]),
        (CostModel.BUILT_IN, TaskType.STANDBY, [CHANGELOG]),
        (CostModel.TASK_ASSIGNMENT_UTILS, TaskType.ACTIVE, [SOURCE, CHANGELOG]),
        (CostModel.TASK_ASSIGNMENT_UTILS, TaskType.STANDBY, [CHANGELOG]),
    ],
)
def test_each_model_counts_its_partitions(
    model: CostModel, task_type: TaskType, counted: list[TaskTopicPartition]
) -> None:
    keep = counted_partitions(model, task_type)
    assert [tp for tp in (SOURCE, CHANGELOG) if keep(tp)] == counted


@pytest.mark.parametrize("phase", [CostPhase.HIGH_AVAILABILITY, CostPhase.STICKY])
def test_built_in_assignors_count_an_actives_source_misses_only(phase: CostPhase) -> None:
    state, start = _crossed()
    costs = {"traffic_cost": 10, "non_overlap_cost": 1}  # sticky's 1/10 would keep the start
    state = state_of(state.tasks.values(), state.clients.values(), **costs)
    result, diag = rack.trim_actives(state, [T0, T1], start, phase)
    # before: T0's source (a) read from b, T1's source (b) read from a; T0's changelog not counted.
    assert (diag.cross_rack_cost_before, diag.cross_rack_cost_after) == (2, 0)
    assert result == {pid(0): frozenset({T0}), pid(1): frozenset({T1})}


def test_the_kip_924_utility_counts_every_partition_of_an_active() -> None:
    state, start = _crossed()
    result, diag = rack.optimize_active_tasks(
        state, [T0, T1], start, traffic_cost=10, non_overlap_cost=1
    )
    # before: T0's source, T1's source and changelog; after: T0's changelog (b) read from a.
    assert (diag.cross_rack_cost_before, diag.cross_rack_cost_after) == (3, 1)
    assert result == {pid(0): frozenset({T0}), pid(1): frozenset({T1})}


def test_models_can_disagree_on_whether_a_move_helps() -> None:
    """T0 costs one partition on either rack under the utility's model, none on a under Kafka's."""
    tasks = [_task(T0, "a", "b"), _task(T1, "a", "a")]
    state = state_of(tasks, [client(0, "a"), client(1, "b")], traffic_cost=10)
    start = {pid(0): frozenset({T1}), pid(1): frozenset({T0})}
    _, diag = rack.trim_actives(state, [T0], start, CostPhase.HIGH_AVAILABILITY)
    assert (diag.rack_optimisation, diag.cross_rack_cost_before) == ("optimal", 1)
    _, utility = rack.optimize_active_tasks(state, [T0], start, traffic_cost=10, non_overlap_cost=1)
    assert (
        utility.rack_optimisation
        == "disabled: every task's cross-rack cost is the same on every rack"
    )


def _standbys():  # type: ignore[no-untyped-def]
    """T0 (source a, changelog b) and T1 (source b, changelog a), each standby on its source's rack."""
    clients = [client(0, "a"), client(1, "b"), client(2, "a"), client(3, "b")]
    state = state_of([_task(T0, "a", "b"), _task(T1, "b", "a")], clients, num_standby_replicas=1)
    active = {pid(0): frozenset({T0}), pid(1): frozenset({T1})}
    standby = {pid(2): frozenset({T0}), pid(3): frozenset({T1})}
    return state, active, standby


def test_standbys_count_changelog_misses_only_under_both_models() -> None:
    state, active, standby = _standbys()
    built_in = rack.trim_standbys(state, active, standby, CostPhase.HIGH_AVAILABILITY)
    utility = rack.optimize_standby_tasks(
        state, active, standby, traffic_cost=10, non_overlap_cost=1
    )
    for result, diag in (built_in, utility):
        assert (diag.cross_rack_cost_before, diag.cross_rack_cost_after) == (2, 0)
        assert result[pid(3)] == frozenset({T0}) and result[pid(2)] == frozenset({T1})


@pytest.mark.parametrize("assignor", ["high_availability", "sticky"])
def test_built_in_assignors_end_to_end_leave_the_changelog_out(assignor: str) -> None:
    from kassign.assignor.streams.api import assign

    state, _ = _crossed()
    state = state_of(
        state.tasks.values(),
        state.clients.values(),
        assignor=assignor,
        num_standby_replicas=1,
        traffic_cost=10,
        non_overlap_cost=1,
    )
    result = assign(state)
    active = {a.process_id: a.active for a in result.assignments}
    assert active == {pid(0): (T0,), pid(1): (T1,)}
    # Actives: no source read across racks. Standbys: T1's changelog (b) read on a. The old,
    # utility-model count added T0's changelog (b) read on a.
    assert result.diagnostics.cross_rack_cost_after == 1
