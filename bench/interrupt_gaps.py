"""How long a call past its deadline can run on: the longest stretches between checkpoints.

A caller's deadline stops an assignment only at ``kassign.assignor.interrupt.checkpoint``; what
runs between two of them runs to its end whatever the deadline (issue 27: a 10,000-task
``min_traffic`` call went on for seconds after DEADLINE_EXCEEDED). This runs the high-
availability assignor on ``rack_aware_bench``'s groups with a check at every checkpoint (one that
never stops the work) and prints the longest CPU stretches of this thread between two checks,
with where each began and ended, and the longest single OR-Tools solve (it cannot be
interrupted: its length is the floor of any such stretch).

Usage: ``python bench/interrupt_gaps.py [--sizes 10000x1000,100000x5000] [--strategy min_traffic]
[--top 5]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kassign.assignor import flow, interrupt
from kassign.assignor.streams import api
from kassign.assignor.streams.model import RackAwareStrategy
from rack_aware_bench import make_state

ROOT = Path(__file__).resolve().parents[1]


@dataclass(slots=True)
class Gaps:
    """Each check's CPU time (this thread) and place; the solves' CPU times and arcs."""

    marks: list[tuple[float, str]] = field(default_factory=list)
    solves: list[tuple[float, int]] = field(default_factory=list)

    def mark(self, where: str) -> None:
        self.marks.append((time.thread_time(), where))

    def check(self) -> None:
        """The check ``interrupt.checked`` runs: called from ``checkpoint``, two frames up."""
        caller = sys._getframe(3)
        path = Path(caller.f_code.co_filename)
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        self.mark(f"{name}:{caller.f_lineno}")

    def runner(self, graph: flow.FlowGraph) -> flow.Outcome:
        """``flow.optimal_flows``, timed: the same solve, in this thread."""
        started = time.thread_time()
        outcome = flow.optimal_flows(graph)
        self.solves.append((time.thread_time() - started, graph.num_arcs))
        return outcome

    def longest(self, top: int) -> list[tuple[float, str, str]]:
        pairs = zip(self.marks, self.marks[1:])
        stretches = [(b[0] - a[0], a[1], b[1]) for a, b in pairs]
        return sorted(stretches, reverse=True)[:top]


def measure(size: str, strategy: RackAwareStrategy, top: int) -> None:
    """Print the ``top`` longest stretches of one call on ``size`` (tasks x clients)."""
    n_tasks, n_clients = (int(x) for x in size.lower().split("x"))
    state = make_state(n_tasks, n_clients, strategy)
    gaps = Gaps()
    previous = flow.use_runner(gaps.runner)
    try:
        gaps.mark("start of assign")
        with interrupt.checked(gaps.check, every=0):
            api.assign(state)
        gaps.mark("end of assign")
    finally:
        flow.use_runner(previous)
    total = gaps.marks[-1][0] - gaps.marks[0][0]
    print(
        f"{n_tasks:,} tasks x {n_clients:,} clients, {strategy.value}: {total * 1000:.0f} ms cpu,"
        f" {len(gaps.marks) - 2:,} checkpoints, {len(gaps.solves)} solves"
    )
    for seconds, begin, end in gaps.longest(top):
        print(f"  {seconds * 1000:8.1f} ms cpu  {begin} -> {end}")
    if gaps.solves:
        seconds, arcs = max(gaps.solves)
        print(f"  longest solve {seconds * 1000:.1f} ms cpu ({arcs:,} arcs)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000x1000,100000x5000")
    parser.add_argument("--strategy", default="min_traffic")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    for size in args.sizes.split(","):
        measure(size, RackAwareStrategy(args.strategy), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
