"""KIP-925 rack-aware assignment at scale: end-to-end time, compact vs dense graph, cross-rack cost.

For each size (tasks x clients; 3 racks, 2 partitions per task, replication factor 2, 1 standby,
a ``zone`` tag per client) it prints:

- the high-availability assignor end to end (``kassign.assignor.streams.api.assign``) with strategy ``none``,
  ``min_traffic`` and ``balance_subtopology``, best of a few runs, read two ways: over the
  stateful-active compact solve measured apart (below; ``its solve``: one solve, while the call
  makes three, so the stricter reading and the one ``--check`` guards), and over the call's
  own solves (``its own N solves``: the CPU of every OR-Tools run inside the same call with the
  least CPU, timed through the flow runner, ``solve_clock.py``; with the range of that ratio
  over every call);
- the stateful-active solve alone on the compact (rack-routed) graph and on Kafka's dense
  task x client graph, from the same starting assignment, in the same run: their ratio is the
  figure. The dense solve runs in a child process with a time limit (it cannot be interrupted
  in-process); at 50,000 x 2,000 it would have 100M arcs and is skipped;
- the cross-rack cost (topic partitions read from another rack) before and after optimisation.

Each size also gives the lines ``bench/check.py`` guards, every one a ratio of two CPU times
from the same run (so the machine's speed and load cancel): HA ``none`` over a fixed reference
workload (``reference_workload``), HA with each strategy over its own solve alone, and the
solve over the reference.

Usage: ``python bench/rack_aware_bench.py [--sizes 1000x100,10000x1000,50000x2000]
[--dense-limit-s 120]`` reports; ``--check`` measures the guarded sizes (``CHECK_SIZES``, no
dense solve) and compares each line with ``bench/baselines/rack_aware.json``, exiting 1 on a
line more than 1.5x worse (``make bench-check``); ``--record`` rewrites those records.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from check import Line, add_modes, best_cpu, machine, run_check
from kassign.assignor.streams import api
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    application_state,
)
from kassign.assignor.streams.rack.active_flow import (
    ActiveProblem,
    placement_cost,
    solve_active_compact,
    solve_active_dense,
)
from kassign.assignor.streams.rack.costs import CostPhase, resolve_costs
from kassign.assignor.streams.rack.optimise import active_problem
from solve_clock import solve_clock

BENCH = "rack_aware"
CHECK_SIZES = "1000x100,10000x1000"
"""The sizes ``--check`` guards: a few seconds each; 100,000 x 5,000 (a minute) only reports."""
RACKS = ("rack-a", "rack-b", "rack-c")
SUBTOPOLOGIES = 10
DENSE_ARC_CAP = 20_000_000


def make_state(
    n_tasks: int, n_clients: int, strategy: RackAwareStrategy, seed: int = 7
) -> ApplicationState:
    """A fresh group (no previous tasks): every task reads a source and writes a changelog."""
    rng = random.Random(seed)
    per = -(-n_tasks // SUBTOPOLOGIES)
    tasks = []
    for i in range(n_tasks):
        tid = TaskId(i // per, i % per)
        source = frozenset(rng.sample(RACKS, 2))
        changelog = frozenset(rng.sample(RACKS, 2))
        tasks.append(
            TaskInfo(
                tid,
                True,
                ("store",),
                (
                    TaskTopicPartition(f"in-{tid.subtopology}", tid.partition, True, False, source),
                    TaskTopicPartition(
                        f"log-{tid.subtopology}", tid.partition, False, True, changelog
                    ),
                ),
            )
        )
    clients = []
    for j in range(n_clients):
        rack = RACKS[j % len(RACKS)]
        pid = uuid.UUID(int=rng.getrandbits(128))
        consumers = (ConsumerState(f"{pid}-1"), ConsumerState(f"{pid}-2"))
        clients.append(KafkaStreamsState(pid, consumers, rack_id=rack, client_tags={"zone": rack}))
    configs = AssignmentConfigs(
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
        rack_aware_strategy=strategy,
    )
    return application_state(tasks, clients, configs)


@dataclass(frozen=True)
class Timed:
    """One strategy's end-to-end calls: the best call (wall and CPU apart), the CPU its own
    OR-Tools runs took inside the call with the least CPU, and their count."""

    wall: float
    cpu: float
    own_solves: float
    solves: int
    ratios: tuple[float, ...]
    """Each call's CPU over its own solves' (empty when the calls solve nothing)."""


def timed_assign(state: ApplicationState, repeats: int) -> tuple[Timed, object]:
    """Best wall time and best CPU time of this process over ``repeats`` runs (CPU time is what
    a loaded machine cannot inflate), the solves inside each call timed through the flow
    runner (``solve_clock``), and the last result."""
    wall, cpu, own, runs, result = float("inf"), float("inf"), 0.0, 0, None
    ratios: list[float] = []
    with solve_clock() as clock:
        for _ in range(repeats):
            clock.reset()
            started, started_cpu = time.perf_counter(), time.process_time()
            result = api.assign(state)
            wall = min(wall, time.perf_counter() - started)
            call = time.process_time() - started_cpu
            if clock.runs:
                ratios.append(call / max(clock.cpu, 1e-9))
            if call < cpu:
                cpu, own, runs = call, clock.cpu, clock.runs
    return Timed(wall, cpu, own, runs, tuple(ratios)), result


def _dense_child(problem: ActiveProblem, out: mp.Queue) -> None:  # type: ignore[type-arg]
    started, started_cpu = time.perf_counter(), time.process_time()
    placement = solve_active_dense(problem)
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    out.put((wall, cpu, placement_cost(problem, placement)))


def dense_in_child(problem: ActiveProblem, limit_s: float) -> tuple[float, float, int] | None:
    """Dense solve wall and CPU time and cost, or ``None`` if not done within ``limit_s`` (wall)."""
    queue: mp.Queue = mp.Queue()  # type: ignore[type-arg]
    child = mp.get_context("fork").Process(target=_dense_child, args=(problem, queue))
    child.start()
    child.join(limit_s)
    if child.is_alive():
        child.terminate()
        child.join()
        return None
    return queue.get() if not queue.empty() else None


def round_robin_start(state: ApplicationState) -> dict[uuid.UUID, frozenset[TaskId]]:
    """A balanced starting assignment, as the assignors' first phase builds (tasks dealt in order)."""
    pids = list(state.clients)
    buckets: dict[uuid.UUID, set[TaskId]] = {p: set() for p in pids}
    for i, t in enumerate(state.tasks):
        buckets[pids[i % len(pids)]].add(t)
    return {p: frozenset(ts) for p, ts in buckets.items()}


def compact_solve_cpu(state: ApplicationState, repeats: int) -> float:
    """Best CPU time of the stateful-active compact solve from a balanced start."""
    traffic, overlap = resolve_costs(state.configs, CostPhase.HIGH_AVAILABILITY)
    problem = active_problem(
        state,
        list(state.tasks),
        round_robin_start(state),
        traffic_cost=traffic,
        non_overlap_cost=overlap,
    )
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        solve_active_compact(problem)
        best = min(best, time.process_time() - started)
    return best


def solve_comparison(state: ApplicationState, limit_s: float) -> str:
    """Stateful-active solve on both graphs from one balanced start; the ratio uses CPU time."""
    traffic, overlap = resolve_costs(state.configs, CostPhase.HIGH_AVAILABILITY)
    start = round_robin_start(state)
    problem = active_problem(
        state, list(state.tasks), start, traffic_cost=traffic, non_overlap_cost=overlap
    )
    started, started_cpu = time.perf_counter(), time.process_time()
    placement = solve_active_compact(problem)
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    compact_cost = placement_cost(problem, placement)
    arcs = problem.num_tasks * problem.num_clients
    line = (
        f"  solve only, {state.configs.rack_aware_strategy.value:<19}"
        f" compact {wall * 1000:7.1f} ms wall {cpu * 1000:7.1f} ms cpu"
    )
    if arcs > DENSE_ARC_CAP:
        return line + f" | dense skipped: {arcs / 1e6:.0f}M task x client arcs"
    dense = dense_in_child(problem, limit_s)
    if dense is None:
        return line + f" | dense unfinished after {limit_s:.0f} s wall ({arcs / 1e6:.1f}M arcs)"
    d_wall, d_cpu, dense_cost = dense
    same = (
        "same optimum"
        if dense_cost == compact_cost
        else f"COST DIFFERS {dense_cost} vs {compact_cost}"
    )
    return line + (
        f" | dense {d_wall * 1000:8.1f} ms wall {d_cpu * 1000:8.1f} ms cpu ({arcs / 1e6:.1f}M arcs)"
        f" | ratio {d_cpu / max(cpu, 1e-9):6.1f}x cpu | {same}"
    )


def reference_workload() -> None:
    """A fixed piece of Python model work (task ids hashed, sorted, indexed, gathered into
    sets): what the assignors mostly do, so a slower or busier machine slows both sides."""
    ids = [TaskId(i % 16, i) for i in range(60_000)]
    index = {t: i for i, t in enumerate(ids)}
    ordered = sorted(ids, reverse=True)
    total = sum(index[t] for t in ordered)
    held = [frozenset(ordered[k::50]) for k in range(50)]
    assert total > 0 and sum(map(len, held)) == len(ids)


def reference_cpu(repeats: int = 5) -> float:
    """Best CPU time of ``reference_workload``."""
    return best_cpu(reference_workload, repeats)


def size_lines(
    size: str, e2e: dict[str, float], solves: dict[str, float], ref: float
) -> list[Line]:
    """The guarded ratios of one size, from CPU times measured in this run."""
    lines = [
        Line(f"{size} high_availability none", e2e["none"] / ref, "reference workload"),
    ]
    for strategy in ("min_traffic", "balance_subtopology"):
        lines.append(
            Line(
                f"{size} high_availability {strategy}",
                e2e[strategy] / solves[strategy],
                "its compact solve alone",
            )
        )
    lines.append(
        Line(f"{size} compact solve min_traffic", solves["min_traffic"] / ref, "reference workload")
    )
    return lines


def own_solves(timed: Timed) -> str:
    """The best call over its own solves, and the range of that ratio over every call."""
    if not timed.solves:
        return "no solves"
    return (
        f"{timed.cpu / max(timed.own_solves, 1e-9):4.1f}x its own {timed.solves} solves"
        f" ({timed.own_solves * 1000:.1f} ms cpu; every call"
        f" {min(timed.ratios):.1f}-{max(timed.ratios):.1f}x)"
    )


def run(size: str, limit_s: float | None) -> list[Line]:
    """Print one size's figures (the dense comparison unless ``limit_s`` is ``None``); its lines."""
    n_tasks, n_clients = (int(x) for x in size.lower().split("x"))
    repeats = 10 if n_tasks <= 1_000 else 3 if n_tasks <= 10_000 else 1
    print(
        f"{n_tasks:,} tasks x {n_clients:,} clients (3 racks, 2 partitions/task, RF 2, 1 standby, tags)"
    )
    ref = reference_cpu()
    e2e: dict[str, float] = {}
    solves: dict[str, float] = {}
    for strategy in RackAwareStrategy:
        state = make_state(n_tasks, n_clients, strategy)
        timed, result = timed_assign(state, repeats)
        e2e[strategy.value] = timed.cpu
        diag = result.diagnostics  # type: ignore[attr-defined]
        extra = ""
        if strategy is not RackAwareStrategy.NONE:
            solves[strategy.value] = compact_solve_cpu(
                state, 3 * repeats if n_tasks <= 1_000 else repeats
            )
            extra = (
                f" | {timed.cpu / solves[strategy.value]:5.1f}x its solve"
                f" | {own_solves(timed)}"
                f" | cross-rack partitions {diag.cross_rack_cost_before:,} -> {diag.cross_rack_cost_after:,}"
                f" | {diag.rack_optimisation}"
            )
        print(
            f"  end to end, high_availability, {strategy.value:<19} "
            f"{timed.wall * 1000:8.1f} ms wall {timed.cpu * 1000:8.1f} ms cpu{extra}"
        )
    if limit_s is not None:
        for strategy in (RackAwareStrategy.MIN_TRAFFIC, RackAwareStrategy.BALANCE_SUBTOPOLOGY):
            print(solve_comparison(make_state(n_tasks, n_clients, strategy), limit_s))
    ref = min(ref, reference_cpu())
    print(f"  reference workload {ref * 1000:.1f} ms cpu")
    return size_lines(size, e2e, solves, ref)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None)
    parser.add_argument("--dense-limit-s", type=float, default=120.0)
    add_modes(parser)
    args = parser.parse_args(argv)
    guarded = args.check or args.record
    sizes = args.sizes or (CHECK_SIZES if guarded else "1000x100,10000x1000,50000x2000")
    print(machine("wall times include waiting for a core"))
    if not guarded:
        for size in sizes.split(","):
            run(size, args.dense_limit_s)
        return 0
    return run_check(
        BENCH,
        lambda: [line for size in sizes.split(",") for line in run(size, None)],
        record=args.record,
    )


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    sys.exit(main())
