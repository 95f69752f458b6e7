"""The CPU a call spends inside OR-Tools, read through ``flow.use_runner``.

Why a runner: every min-cost flow solve goes through ``flow.solve``, which hands the checked
graph to the process's runner. Wrapping that runner for the span of a measurement times exactly
the solver's runs inside the same end-to-end calls (no solve measured apart, no change to what
is solved or returned); outside ``solve_clock`` the library's runner is the one it had, so calls
that do not measure pay nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from kassign.assignor import flow


class SolveClock:
    """A runner that times the one it wraps: CPU seconds and runs since the last ``reset``."""

    def __init__(self, inner: flow.Runner) -> None:
        self.inner = inner
        self.cpu = 0.0
        self.runs = 0

    def reset(self) -> None:
        """Start a new call's count."""
        self.cpu, self.runs = 0.0, 0

    def __call__(self, graph: flow.FlowGraph) -> flow.Outcome:
        started = time.process_time()
        try:
            return self.inner(graph)
        finally:
            self.cpu += time.process_time() - started
            self.runs += 1


@contextmanager
def solve_clock() -> Iterator[SolveClock]:
    """Time every solve while inside; the runner before it is put back on the way out."""
    clock = SolveClock(flow.optimal_flows)
    clock.inner = flow.use_runner(clock)
    try:
        yield clock
    finally:
        flow.use_runner(clock.inner)
