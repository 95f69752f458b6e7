"""Issue 25 in the Streams assignors: the load mode's peak against its bound and against
counting's, per fresh group, and its CPU time (the whole assignment: actives, standbys, report).

Groups: ``CLIENTSxTASKS`` of ``--sizes``, stateful tasks with Zipf loads (task of rank ``k``
carries ``1000 / k**s``, ranks shuffled) for each exponent ``s`` of ``--exponents``, clients of
1, 2 or 4 stream threads, one standby per task, every client caught up (a fresh group). Per
group and assignor, one table line: ``balance LOAD``'s peak over the bound, the same group
assigned by count (Kafka's mode) read with the same loads, and LOAD's CPU milliseconds.

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


def line(clients: int, tasks: int, exponent: float, assignor: str, seed: int) -> str:
    state = group(clients, tasks, exponent, assignor, seed)
    start = time.process_time()
    by_load, _ = run(state)
    spent = time.process_time() - start
    counted, _ = run(replace(state, configs=replace(state.configs, balance=Balance.COUNT)))
    mine, theirs = by_load.diagnostics.load, measured_figures(state, counted)
    assert mine is not None
    return (
        f"| {assignor} | {clients} x {tasks:,} | {exponent} | {mine.peak / mine.bound:.4f} "
        f"| {theirs.peak / theirs.bound:.3f} | {spent * 1000:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--exponents", default="0.8,1.1,1.5")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| assignor | clients x tasks | s | load: peak / bound | count: peak / bound | load ms |")
    print("|---|---|---|---|---|---|")
    for assignor in ("high_availability", "sticky"):
        for size in args.sizes.split(","):
            clients, tasks = (int(n) for n in size.split("x"))
            for exponent in (float(s) for s in args.exponents.split(",")):
                print(line(clients, tasks, exponent, assignor, args.seed), flush=True)


if __name__ == "__main__":
    main()
