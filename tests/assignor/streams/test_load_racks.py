"""Issue 25 with KIP-925 racks in the Streams assignors' ``balance`` ``LOAD``: the load core is
given each task's rack-locality (``load_racks.task_sites``), so cross-rack reads fall at the
same peak, on continuous (Zipf) loads where a trim among equal loads finds nothing to swap."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kassign.assignor.streams.api import run
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    Balance,
    ConsumerState,
    KafkaStreamsState,
    RackAwareStrategy,
    TaskId,
    TaskLoads,
    application_state,
)
from kassign.assignor.streams.result import TaskAssignment
from kassign.assignor.streams.validate import AssignmentError

from tests.assignor.rack_cases import task_info
from tests.assignor.strategies import uuid_for

RACKS = ("r0", "r1", "r2")


def racked_zipf_group(
    seed: int, assignor: str, strategy: RackAwareStrategy, *, replicas: int = 2
) -> ApplicationState:
    """12 clients (1 or 2 threads), four per rack; 240 Zipf-loaded tasks (exponent 1.0), half
    stateful, each reading one partition with replicas on ``replicas`` of the three racks."""
    rng = np.random.default_rng(seed)
    n_tasks = 240
    loads = 1000 / np.arange(1, n_tasks + 1) ** 1.0
    rng.shuffle(loads)
    tasks = [TaskId(p % 4, p // 4) for p in range(n_tasks)]
    homes = [sorted(rng.choice(RACKS, replicas, replace=False).tolist()) for _ in tasks]
    infos = [task_info(t, [homes[i]], stateful=i % 2 == 0) for i, t in enumerate(tasks)]
    clients = [
        KafkaStreamsState(
            uuid_for(i),
            tuple(ConsumerState(f"c{i}-{n}") for n in range(1 + i % 2)),
            rack_id=RACKS[i % 3],
        )
        for i in range(12)
    ]
    configs = AssignmentConfigs(
        assignor=assignor, balance=Balance.LOAD, rack_aware_strategy=strategy
    )
    return application_state(
        infos, clients, configs, task_loads=TaskLoads(dict(zip(tasks, loads.tolist())))
    )


def cross_rack_reads(state: ApplicationState, result: TaskAssignment) -> int:
    """Source partitions the actives read from a rack without a replica."""
    across = 0
    for a in result.assignments:
        rack = state.clients[a.process_id].rack_id
        for t in a.active:
            across += sum(rack not in p.rack_ids for p in state.tasks[t].topic_partitions)
    return across


def _assigned(state: ApplicationState) -> TaskAssignment:
    result, error = run(state)
    assert error is AssignmentError.NONE, result.diagnostics.notes
    return result


@pytest.mark.parametrize("assignor", ["high_availability", "sticky"])
def test_min_traffic_lowers_cross_rack_reads_at_the_same_peak(assignor: str) -> None:
    racked = racked_zipf_group(3, assignor, RackAwareStrategy.MIN_TRAFFIC)
    hidden = replace(
        racked, configs=replace(racked.configs, rack_aware_strategy=RackAwareStrategy.NONE)
    )
    with_racks, without = _assigned(racked), _assigned(hidden)
    assert cross_rack_reads(racked, with_racks) < cross_rack_reads(hidden, without) // 4
    figures = with_racks.diagnostics.load
    assert figures is not None and figures.peak <= 1.02 * figures.bound
