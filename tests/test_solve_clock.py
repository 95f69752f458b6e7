"""bench/solve_clock.py: the solves inside a call timed through the flow runner, answers as
without it, and the runner before it put back."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from kassign.assignor import flow

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    """bench/ is a folder of scripts, not a package: load solve_clock.py by path."""
    spec = importlib.util.spec_from_file_location(
        "bench_solve_clock", ROOT / "bench" / "solve_clock.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


solve_clock = _load()


def _graph() -> flow.FlowGraph:
    """Two units from node 0 to node 2, the cheap way through node 1."""
    return flow.FlowGraph.of(3, [([0, 0, 1], [1, 2, 2], 2, [1, 5, 1])], [2, 0, -2])


def _slow(graph: flow.FlowGraph) -> flow.Outcome:
    """A runner that spends CPU the clock must see (about 20 ms)."""
    until = time.process_time() + 0.02
    while time.process_time() < until:
        pass
    return flow.optimal_flows(graph)


def test_the_clock_counts_each_solve_and_its_cpu_and_answers_the_same() -> None:
    plain = flow.solve(_graph())
    previous = flow.use_runner(_slow)
    try:
        with solve_clock.solve_clock() as clock:
            timed = [flow.solve(_graph()) for _ in range(2)]
            assert clock.runs == 2
            assert clock.cpu >= 0.04
            clock.reset()
            assert (clock.runs, clock.cpu) == (0, 0.0)
        assert flow.use_runner(previous) is _slow
    finally:
        flow.use_runner(previous)
    for solution in timed:
        assert np.array_equal(solution.flows, plain.flows) and solution.cost == plain.cost == 4


def test_a_failing_solve_is_counted_and_the_runner_put_back() -> None:
    def broken(graph: flow.FlowGraph) -> flow.Outcome:
        raise RuntimeError("helper gone")

    previous = flow.use_runner(broken)
    try:
        with pytest.raises(RuntimeError), solve_clock.solve_clock() as clock:
            flow.solve(_graph())
        assert clock.runs == 1
        assert flow.use_runner(previous) is broken
    finally:
        flow.use_runner(previous)
