"""One Kafka Streams group under drifting task loads, count balancing against load balancing.

Why: issue 25 asks the pipeline's simulation for partitions *or tasks*. A Streams group is the
one simulate converges (``kassign.pipeline.generate``: lags, standbys, tags and racks drawn
from the spec), run under its generated configuration (``high_availability``) twice: ``count``
as Kafka runs it and ``load`` (``balance=LOAD``), each task carrying its Zipf load of the round
(``kassign.pipeline.loads``), each from its own previous assignment. Round 1 starts from the
generated group's previous owners and lagging stores. A rebalance that schedules a follow-up
(KIP-441: warm-ups restoring) is followed by it as simulate's convergence does (the warm-ups
and standbys have caught up by then, ``rows.after_rebalance``), up to ``MAX_CALLS`` a round;
the round's figures are those of its last assignment, its moves (actives now on a client that
did not run them) those of all its calls. Capacity is a client's stream threads, as the
assignors weigh it. ``load_rounds`` runs the rounds and measures them. Pure: no Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.load.figures import Balance
from kassign.assignor.streams.model import AssignmentConfigs, TaskLoads
from kassign.assignor.streams.result import TaskAssignment
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.group import Group, to_state
from kassign.pipeline.load_rounds import MAX_CALLS, Simulated, Step, simulated_rows
from kassign.pipeline.load_rows import check_sizes
from kassign.pipeline.loads import LoadModel, load_rng, load_rounds
from kassign.pipeline.measures import assign_and_measure
from kassign.pipeline.rows import after_rebalance

__all__ = ["ASSIGNOR", "streams_load_group", "streams_load_rows"]

ASSIGNOR = AssignmentConfigs().assignor
"""The generated groups' configuration's assignor (``generate.random_group``): Kafka's default."""


class AssignmentFailed(RuntimeError):
    """The assignor gave no valid assignment (its measures' error says why)."""


def _owners(group: Group, assignment: TaskAssignment) -> IntArray:
    """Each task's active client, as an index into ``group.clients`` (-1: none)."""
    row = {task.id: i for i, task in enumerate(group.tasks)}
    client = {c.process_id: i for i, c in enumerate(group.clients)}
    owners = np.full(len(group.tasks), -1, dtype=np.int64)
    for target in assignment.assignments:
        owners[[row[t] for t in target.active]] = client[target.process_id]
    return owners


def _rebalance(
    group: Group, balance: Balance, loads: FloatArray
) -> tuple[Group, IntArray, int, int]:
    """A round's calls on ``loads``: the group after them, each task's client, actives moved,
    calls made."""
    task_loads = TaskLoads(
        loads=dict(zip((t.id for t in group.tasks), loads.tolist(), strict=True))
    )
    moved = calls = 0
    while True:
        calls += 1
        state = to_state(group)
        if balance is Balance.LOAD:
            configs = replace(state.configs, balance=balance)
            state = replace(state, configs=configs, task_loads=task_loads)
        assignment, measures = assign_and_measure(state)
        if assignment is None or measures.error:
            raise AssignmentFailed(measures.error)
        moved += measures.active_moved
        group = after_rebalance(group, assignment)
        if not measures.followup or calls == MAX_CALLS:
            return group, _owners(group, assignment), moved, calls


def _run(group: Group) -> Callable[[Balance], Step]:
    """A fresh run of ``group`` under a balance: each round from the group the last one left."""

    def start(balance: Balance) -> Step:
        current = group

        def step(loads: FloatArray) -> tuple[IntArray, int, int]:
            nonlocal current
            current, owners, moved, calls = _rebalance(current, balance, loads)
            return owners, moved, calls

        return step

    return start


def streams_load_group(
    spec: GroupSpec, *, seed: int, index: int, model: LoadModel, rounds: int
) -> Simulated:
    """Streams group ``index`` of a run seeded ``seed`` with its tasks' loads in each round."""
    check_sizes(spec)
    group = random_group(spec, seed=seed, index=index)
    capacities = np.array([c.threads for c in group.clients], dtype=np.float64)
    loads = load_rounds(len(group.tasks), model, load_rng(seed, index), rounds)
    return Simulated(group.group_id, capacities, loads, _run(group))


def streams_load_rows(
    *, seed: int, index: int, spec: GroupSpec, model: LoadModel, rounds: int
) -> list[dict[str, Any]]:
    """Every round of Streams group ``index`` under count then load balancing (``members`` are
    its clients, ``partitions`` its tasks, ``moved`` actives moved)."""

    def make() -> Simulated:
        return streams_load_group(spec, seed=seed, index=index, model=model, rounds=rounds)

    head = {"group_index": index, "seed": seed, "kind": "streams", "assignor": ASSIGNOR}
    return simulated_rows(head, f"sim-{seed}-{index:06d}", make)
