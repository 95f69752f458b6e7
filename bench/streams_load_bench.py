"""Issue 25 in the Streams assignors: the load mode's peak against its bound and against
counting's, per fresh group, and its CPU time (the whole assignment: actives, standbys, report).

Groups: ``CLIENTSxTASKS`` of ``--sizes``, stateful tasks with Zipf loads (task of rank ``k``
carries ``1000 / k**s``, ranks shuffled) for each exponent ``s`` of ``--exponents``, clients of
1, 2 or 4 stream threads, one standby per task, every client caught up (a fresh group). Per
group and assignor, one table line: ``balance LOAD``'s peak over the bound, the same group
assigned by count (Kafka's mode) read with the same loads, both answers' max/mean (the busiest
client's load per thread over the mean), LOAD's CPU milliseconds, and issue 25's stickiness:
every load drifted by a factor in [0.9, 1.1], the group assigned again by load from LOAD's
answer (its actives and standbys the previous ones), the actives that moved against those a
fresh placement of the drifted loads (no previous owners) puts elsewhere.

Usage: ``python bench/streams_load_bench.py [--sizes 10x100,200x10000] [--exponents 0.8,1.1]
[--seed 0]``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from kassign.assignor.streams.api import run
from kassign.assignor.streams.load_plan import measured_figures
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    Balance,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    TaskLoads,
    application_state,
)
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import TaskAssignment

SIZES = "10x100,10x2000,50x1000,100x5000,200x10000"


def group(clients: int, tasks: int, exponent: float, assignor: str, seed: int) -> ApplicationState:
    """A fresh group of ``clients`` and ``tasks`` Zipf-loaded stateful tasks."""
    rng = np.random.default_rng(seed)
    loads = 1000.0 / (rng.permutation(tasks) + 1) ** exponent
    ids = [TaskId(p % 8, p // 8) for p in range(tasks)]
    members = [
        KafkaStreamsState(
            UUID(int=c + 1),
            tuple(ConsumerState(f"c{c}-{k}") for k in range(int(rng.choice([1, 2, 4])))),
        )
        for c in range(clients)
    ]
    configs = AssignmentConfigs(assignor=assignor, balance=Balance.LOAD, num_standby_replicas=1)
    return application_state(
        [TaskInfo(t, True) for t in ids],
        members,
        configs,
        task_loads=TaskLoads(dict(zip(ids, loads.tolist(), strict=True))),
    )


def drifted(state: ApplicationState, answer: TaskAssignment, seed: int) -> ApplicationState:
    """``state`` at its next rebalance: each load times a factor in [0.9, 1.1], ``answer``'s
    actives and standbys the clients' previous tasks (every client still caught up on all)."""
    rng = np.random.default_rng(seed + 1)
    loads = {t: w * rng.uniform(0.9, 1.1) for t, w in state.task_loads.loads.items()}
    placed = answer.by_process()
    clients = [
        replace(
            c,
            previous_active_tasks=frozenset(placed[p].active),
            previous_standby_tasks=frozenset(placed[p].standby),
        )
        for p, c in state.clients.items()
    ]
    return application_state(
        list(state.tasks.values()), clients, state.configs, task_loads=TaskLoads(loads)
    )


def fresh_moves(state: ApplicationState, answer: TaskAssignment) -> int:
    """Actives a placement without previous owners puts on another client than ``answer``."""
    was = {t: a.process_id for a in answer.assignments for t in a.active}
    unowned = [
        replace(c, previous_active_tasks=frozenset(), previous_standby_tasks=frozenset())
        for c in state.clients.values()
    ]
    fresh, _ = run(replace(state, clients={c.process_id: c for c in unowned}))
    return sum(was[t] != a.process_id for a in fresh.assignments for t in a.active)


def line(clients: int, tasks: int, exponent: float, assignor: str, seed: int) -> str:
    state = group(clients, tasks, exponent, assignor, seed)
    start = time.process_time()
    by_load, _ = run(state)
    spent = time.process_time() - start
    counted, _ = run(replace(state, configs=replace(state.configs, balance=Balance.COUNT)))
    mine, theirs = by_load.diagnostics.load, measured_figures(state, counted)
    assert mine is not None
    later = drifted(state, by_load, seed)
    again, _ = run(later)
    moved, _ = moved_counts(later, again)
    figures = again.diagnostics.load
    assert figures is not None
    return (
        f"| {assignor} | {clients} x {tasks:,} | {exponent} | {mine.peak / mine.bound:.4f} "
        f"| {theirs.peak / theirs.bound:.3f} | {mine.peak / mine.mean:.2f} "
        f"| {theirs.peak / theirs.mean:.2f} | {spent * 1000:.0f} "
        f"| {moved:,} / {fresh_moves(later, by_load):,} | {figures.peak / figures.bound:.4f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--exponents", default="0.8,1.1,1.5")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        "| assignor | clients x tasks | s | load: peak / bound | count: peak / bound "
        "| load: max/mean | count: max/mean | load ms "
        "| drift: actives moved / a fresh placement's | drift: peak / bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for assignor in ("high_availability", "sticky"):
        for size in args.sizes.split(","):
            clients, tasks = (int(n) for n in size.split("x"))
            for exponent in (float(s) for s in args.exponents.split(",")):
                print(line(clients, tasks, exponent, assignor, args.seed), flush=True)


if __name__ == "__main__":
    main()
