"""KIP-441 convergence: random joins and leaves, warm-ups catching up between rebalances.

After every perturbation the group rebalances, then follows every follow-up rebalance it asks
for; between two rebalances each client catches up on whatever it was given (actives report
-2, standbys and warm-ups lag 0), as in Kafka's ``TaskAssignorConvergenceTest``. Within
2 x (stateful tasks x (1 + standbys)) rebalances the group must stop asking, be balanced per
thread, and an extra rebalance must change nothing.

Seeded: a failure names its seed; replay one with
    KASSIGN_CONVERGENCE_SEED=<seed> .venv/bin/python -m pytest tests/assignor/test_convergence.py
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from uuid import UUID

import pytest
from kassign.assignor.streams.high_availability import assign_high_availability
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    AssignmentConfigs,
    TaskId,
    TaskInfo,
    application_state,
)
from kassign.assignor.streams.result import TaskAssignment

from tests.assignor.strategies import client_state

END_OFFSET = 50_000


@dataclass
class Cluster:
    """The simulated group: tasks, live clients, and what each client has on disk."""

    tasks: list[TaskInfo]
    configs: AssignmentConfigs
    threads: dict[UUID, int] = field(default_factory=dict)
    tags: dict[UUID, dict[str, str]] = field(default_factory=dict)
    offsets: dict[UUID, dict[TaskId, int]] = field(default_factory=dict)
    running: dict[UUID, frozenset[TaskId]] = field(default_factory=dict)
    now_ms: int = 0

    def join(self, rnd: random.Random, threads: int | None = None) -> None:
        pid = UUID(int=rnd.getrandbits(128))
        self.threads[pid] = rnd.randint(1, 3) if threads is None else threads
        self.tags[pid] = {"zone": rnd.choice("abc"), "cluster": rnd.choice("xy")}
        self.offsets[pid] = {}
        self.running[pid] = frozenset()

    def leave(self, rnd: random.Random) -> None:
        if len(self.threads) > 1:
            pid = rnd.choice(sorted(self.threads))
            for table in (self.threads, self.tags, self.offsets, self.running):
                del table[pid]

    def rebalance(self) -> TaskAssignment:
        ends = {t.id: t.changelog_end_offset_sum for t in self.tasks if t.stateful}
        clients = [
            client_state(
                pid,
                n,
                dict(self.offsets[pid]),
                ends,
                owned_active=self.running[pid],
                client_tags=self.tags[pid],
            )
            for pid, n in self.threads.items()
        ]
        state = application_state(self.tasks, clients, self.configs, now_ms=self.now_ms)
        result = assign_high_availability(state)
        self.now_ms += self.configs.probing_rebalance_interval_ms
        for a in result.assignments:  # everyone catches up before the next rebalance
            stateful = {t for t in a.active if t in ends}
            self.offsets[a.process_id] = {t: LATEST_OFFSET for t in stateful}
            self.offsets[a.process_id].update({t: ends[t] for t in a.standby})
            self.running[a.process_id] = frozenset(a.active)
        return result


def random_cluster(rnd: random.Random) -> Cluster:
    tasks = []
    for sub in range(rnd.randint(1, 4)):
        stateful = rnd.random() < 0.75
        for p in range(rnd.randint(1, 6)):
            end = END_OFFSET if stateful else 0
            tasks.append(TaskInfo(TaskId(sub, p), stateful, ("s",) * stateful, (), end))
    configs = AssignmentConfigs(
        acceptable_recovery_lag=100,
        max_warmup_replicas=rnd.randint(1, 3),
        num_standby_replicas=rnd.randint(0, 2),
        rack_aware_assignment_tags=rnd.choice([(), ("zone",), ("zone", "cluster")]),
    )
    cluster = Cluster(tasks, configs)
    for _ in range(rnd.randint(1, 6)):
        cluster.join(rnd)
    return cluster


def _balanced_per_thread(result: TaskAssignment, cluster: Cluster) -> bool:
    stateful = {t.id for t in cluster.tasks if t.stateful}
    counts = {a.process_id: sum(t in stateful for t in a.active) for a in result.assignments}
    caps = cluster.threads
    return not any(
        (counts[s] - 1) / caps[s] >= (counts[d] + 1) / caps[d]
        for s in counts
        for d in counts
        if s != d
    )


def converge(cluster: Cluster, seed: int, step: str) -> None:
    stateful = sum(t.stateful for t in cluster.tasks)
    limit = max(1, 2 * stateful * (1 + cluster.configs.num_standby_replicas))
    replay = f"replay: KASSIGN_CONVERGENCE_SEED={seed} (after {step})"
    for _ in range(limit):
        result = cluster.rebalance()
        if not result.followup_scheduled:
            break
    else:
        pytest.fail(f"no convergence within {limit} rebalances; {replay}")
    assert _balanced_per_thread(result, cluster), f"converged but unbalanced; {replay}"
    stateful_ids = [t.id for t in cluster.tasks if t.stateful]
    want = min(cluster.configs.num_standby_replicas, len(cluster.threads) - 1)
    copies = Counter(t for a in result.assignments for t in a.standby)
    assert all(copies[t] >= want for t in stateful_ids), f"standbys missing; {replay}"
    again = cluster.rebalance()
    assert not again.followup_scheduled, f"asked again after converging; {replay}"
    assert again.assignments == result.assignments, f"converged assignment moved; {replay}"


def run_seed(seed: int, perturbations: int) -> None:
    rnd = random.Random(seed)
    cluster = random_cluster(rnd)
    converge(cluster, seed, "the initial rebalance")
    for i in range(perturbations):
        event = rnd.choice(["join", "join", "leave"])
        getattr(cluster, event)(rnd)
        converge(cluster, seed, f"perturbation {i + 1}: {event}")


def _seeds(count: int, offset: int) -> list[int]:
    pinned = os.environ.get("KASSIGN_CONVERGENCE_SEED")
    return [int(pinned)] if pinned else list(range(offset, offset + count))


@pytest.mark.parametrize("seed", _seeds(12, 0))
def test_converges_under_joins_and_leaves(seed: int) -> None:
    run_seed(seed, perturbations=4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", _seeds(150, 1_000))
def test_converges_on_many_more_seeds(seed: int) -> None:
    run_seed(seed, perturbations=8)


def test_scale_out_takes_several_probing_rebalances() -> None:
    """KIP-441's scaling-out story: one loaded client, two join; warm-ups move work over."""
    rnd = random.Random(7)
    tasks = [TaskInfo(TaskId(0, p), True, ("s",), (), END_OFFSET) for p in range(9)]
    cluster = Cluster(tasks, AssignmentConfigs(max_warmup_replicas=2, acceptable_recovery_lag=100))
    cluster.join(rnd, threads=1)
    cluster.rebalance()
    cluster.join(rnd, threads=1)
    cluster.join(rnd, threads=1)
    rounds = 1
    while cluster.rebalance().followup_scheduled:
        rounds += 1
        assert rounds <= 2 * 9
    assert rounds > 1  # not all at once: at most two warm-ups per round
    assert sorted(len(r) for r in cluster.running.values()) == [3, 3, 3]
