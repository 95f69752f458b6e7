"""Regression guard for the load-aware paths (issue 25): each line the CPU time of a
``balance=LOAD`` call on a fixed group over ``check.reference_workload`` in the same run.

``load_bench.py`` and ``streams_load_bench.py`` report peaks, moves and times; this one guards
the times in about a minute, for ``make bench-check`` (``check.py``). Loads are Zipf
(``pipeline/loads.py``'s ``zipf_loads``, exponent 1.1); a drift multiplies each by a factor in
[0.9, 1.1] and starts from the fresh answer. The lines:

- the load core alone (``kassign.assignor.load.balance``): 2,000 members x 100,000 items fresh
  and after a drift; 20 members of capacities 1-4 x 100,000 items (the bisection); 200 members x
  20,000 items in 10 eligibility classes (each eligible on a random 30% of the members), fresh
  and after a drift; and the exact step: 20 small problems (8-20 integer loads on 2-5 members of
  capacities 1-4) on which ``balance`` runs CP-SAT (``exact.py``), drawn until 20 are found;
- consumer ``sticky`` through the library (``assignor/consumer``) on 50 topics x 800
  partitions with 800 members: fresh, after a drift (the members' userData claiming the fresh
  answer), and fresh on three racks (KIP-881);
- Kafka Streams ``high_availability`` and ``sticky`` on 1,000 clients x 10,000 tasks
  (``streams_load_bench.group``: one standby, every client caught up), fresh and after a drift;
  ``sticky``'s lines time three calls each (one, about 0.2 s, was too short against the
  neighbours' bursts on a shared machine).

A line more than 1.5x its record (``bench/baselines/load.json``) fails.

    .venv/bin/python bench/load_check.py [--check | --record]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from check import Line, add_modes, best_cpu, machine, per_reference, run_check
from consumer_groups import make_cluster, make_members, next_round
from kassign.assignor.consumer import AssignOptions, ConsumerGroup, assign, consumer_group
from kassign.assignor.load import LoadProblem, balance, exact
from kassign.assignor.load.figures import Balance
from kassign.assignor.streams.api import run
from kassign.assignor.streams.model import ApplicationState
from kassign.pipeline.loads import drifted, zipf_loads
from streams_load_bench import drifted as streams_drifted
from streams_load_bench import group as streams_group

BENCH = "load"
EXPONENT = 1.1
DRIFT = 0.1
SEED = 25
EXACT_PROBLEMS = 20
STICKY_CALLS = 3  # Streams sticky's calls per sample: one (~0.2 s) read 1.54x its record once
REPEATS = 5  # runs of each call, its least CPU kept: a neighbour's burst rarely spans five
EXACT_DRAWS = 2_000  # small problems drawn at most while looking for the exact step's

Case = tuple[str, Callable[[], object]]
"""A line's name and the call it times."""


def _unowned(items: int) -> np.ndarray:
    return np.full(items, -1, dtype=np.int64)


def core_cases(rng: np.random.Generator) -> list[Case]:
    """The load core alone: equal members, mixed capacities, eligibility classes."""
    cases: list[Case] = []
    loads = zipf_loads(100_000, EXPONENT, rng)
    fresh = LoadProblem(loads, np.ones(2_000), _unowned(len(loads)))
    later = LoadProblem(drifted(loads, DRIFT, rng), fresh.capacities, balance(fresh).owners)
    cases += [("core 2000x100000 fresh", lambda: balance(fresh))]
    cases += [("core 2000x100000 drift", lambda: balance(later))]
    mixed = LoadProblem(loads, rng.integers(1, 5, 20).astype(float), _unowned(len(loads)))
    cases += [("core 20x100000 capacities 1-4", lambda: balance(mixed))]
    few = zipf_loads(20_000, EXPONENT, rng)
    classes = rng.integers(0, 10, len(few))
    eligible = rng.random((10, 200)) < 0.3
    eligible[np.arange(10), rng.integers(0, 200, 10)] = True  # every class has a member
    split = LoadProblem(few, np.ones(200), _unowned(len(few)), classes, eligible)
    moved = LoadProblem(
        drifted(few, DRIFT, rng), split.capacities, balance(split).owners, classes, eligible
    )
    cases += [("core 200x20000 10 classes fresh", lambda: balance(split))]
    cases += [("core 200x20000 10 classes drift", lambda: balance(moved))]
    problems = exact_problems(EXACT_PROBLEMS, rng)
    cases += [(f"core exact step {len(problems)} small", lambda: [balance(p) for p in problems])]
    return cases


def exact_problems(
    count: int, rng: np.random.Generator, draws: int = EXACT_DRAWS
) -> list[LoadProblem]:
    """``count`` small problems on which ``balance`` prices, hence runs, the exact step (the
    greedy leaves them past the slack); an error if ``draws`` do not yield them, as a line
    that no longer reaches CP-SAT would guard nothing."""
    found: list[LoadProblem] = []
    for _ in range(draws):
        items, members = int(rng.integers(8, 21)), int(rng.integers(2, 6))
        loads = np.round(zipf_loads(items, rng.uniform(0.8, 1.5), rng) * 10)
        capacities = rng.integers(1, 5, members).astype(float)
        problem = LoadProblem(loads, capacities, _unowned(items))
        paid: list[int] = []
        balance(problem, afford=paid.append)
        if exact.units(problem) in paid:
            found.append(problem)
            if len(found) == count:
                return found
    raise RuntimeError(
        f"{len(found)} of {draws} small problems reached the exact step, not {count}"
    )


def consumer_cases(rng: np.random.Generator) -> list[Case]:
    """Consumer ``sticky`` with balance LOAD through the library."""
    cases: list[Case] = []
    for racks in (False, True):
        cluster = make_cluster(40_000, racks=racks, seed=800, topics=50)
        members = make_members(cluster, 800, racks=racks, equal=True, seed=800)
        loads = zipf_loads(40_000, EXPONENT, rng)
        group = consumer_group(members, cluster.topics())
        options = _load_options(group, loads)
        layout = "racks" if racks else "none"
        cases += [(f"consumer 50x800x800 {layout} sticky fresh", _consumer(group, options))]
        if racks:
            continue
        owning = next_round(members, assign("sticky", group, options), "sticky", 0, replaced=0)
        later = consumer_group(owning, cluster.topics())
        after = _load_options(later, drifted(loads, DRIFT, rng))
        cases += [(f"consumer 50x800x800 {layout} sticky drift", _consumer(later, after))]
    return cases


def _load_options(group: ConsumerGroup, loads: np.ndarray) -> AssignOptions:
    """balance LOAD with ``loads`` dealt to the topics in order, partition by partition."""
    by_topic: dict[str, list[float]] = {}
    start = 0
    for name, topic in group.topics.items():
        count = len(topic.partition_racks)
        by_topic[name] = loads[start : start + count].tolist()
        start += count
    return AssignOptions(balance=Balance.LOAD, loads=by_topic)


def _consumer(group: ConsumerGroup, options: AssignOptions) -> Callable[[], object]:
    return lambda: assign("sticky", group, options)


def streams_cases() -> list[Case]:
    """Kafka Streams' two assignors with balance LOAD, fresh and after a drift."""
    cases: list[Case] = []
    for assignor in ("high_availability", "sticky"):
        state = streams_group(1_000, 10_000, EXPONENT, assignor, SEED)
        answer, _ = run(state)
        later = streams_drifted(state, answer, SEED)
        calls = STICKY_CALLS if assignor == "sticky" else 1
        suffix = f" x{calls}" if calls > 1 else ""
        cases += [(f"streams 1000x10000 {assignor} fresh{suffix}", _streams(state, calls))]
        cases += [(f"streams 1000x10000 {assignor} drift{suffix}", _streams(later, calls))]
    return cases


def _streams(state: ApplicationState, calls: int) -> Callable[[], object]:
    return lambda: [run(state) for _ in range(calls)]


def cases() -> list[Case]:
    """Every guarded call, its inputs built once (the fresh answers a drift starts from)."""
    rng = np.random.default_rng(SEED)
    return [*core_cases(rng), *consumer_cases(rng), *streams_cases()]


def measure(guarded: list[Case], repeats: int = REPEATS) -> list[Line]:
    """Each call's best CPU over ``repeats`` runs, over the run's reference workload."""

    def raw() -> list[Line]:
        lines = []
        for name, call in guarded:
            spent = best_cpu(call, repeats)
            print(f"  {name:<44} {spent * 1000:8.1f} ms cpu", flush=True)
            lines.append(Line(name, spent))
        return lines

    return per_reference(raw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_modes(parser)
    args = parser.parse_args(argv)
    print(machine(f"CPU times, best of {REPEATS}"))
    guarded = cases()
    if not (args.check or args.record):
        for line in measure(guarded):
            print(f"{line.name:<44} {line.ratio:8.3f}x reference")
        return 0
    return run_check(BENCH, lambda: measure(guarded), record=args.record)


if __name__ == "__main__":
    sys.exit(main())
