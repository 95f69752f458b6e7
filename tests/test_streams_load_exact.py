"""bench/streams_load_bench.py ``--exact``: small Streams groups solved exactly by CP-SAT under the
assignor's rules, kassign's ``balance LOAD`` peak within 2% of that optimum wherever the optimum
is within 2% of the bound (issue 25)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from kassign.assignor.load import exact

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    """bench/ is a folder of scripts, not a package: load the bench by path."""
    path = ROOT / "bench" / "streams_load_bench.py"
    spec = importlib.util.spec_from_file_location("streams_load_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["streams_load_bench"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_the_exact_model_keeps_each_task_on_its_allowed_clients() -> None:
    loads, caps = np.array([10.0, 10.0, 4.0]), np.array([1, 2])
    assert bench.exact_peak(loads, caps) == (10.0, True)  # the bound is 8: 24 over 3 threads
    assert bench.exact_peak(loads, caps, [[0], [0], [0, 1]]) == (20.0, True)


@pytest.mark.parametrize("assignor", ["high_availability", "sticky"])
def test_kassign_is_within_two_percent_of_the_optimum_where_the_bound_allows(
    assignor: str,
) -> None:
    """Seeded: four groups per assignor through the bench's own check."""
    fit, missed, worst, _, unproved = bench.exact_check(assignor, 4, np.random.default_rng(2))
    assert fit >= 3 and unproved == 0
    assert missed == 0 and worst <= 1.02


@pytest.mark.parametrize(("assignor", "index"), [("high_availability", 81), ("sticky", 98)])
def test_groups_the_greedy_missed_reach_the_optimum(
    assignor: str, index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's worst misses before the core's exact step (``--exact 100``, seed 0: 1.108x
    and 1.068x an optimum within 2% of the bound) now within 2% of it; the greedy alone not."""
    rng = np.random.default_rng(0)
    for _ in range(index):
        bench.small_group(assignor, rng)
    state = bench.small_group(assignor, rng)
    layout = bench.Layout.of(state)
    loads, _ = bench.task_costs(state, layout.stateful + layout.stateless)
    best, proved = bench.exact_peak(
        loads, np.array(layout.capacities), bench.allowed_clients(state)
    )
    figures = bench.run(state)[0].diagnostics.load
    assert proved and best <= 1.02 * figures.bound
    assert figures.peak <= 1.02 * best
    monkeypatch.setattr(exact, "small", lambda _: False)
    assert bench.run(state)[0].diagnostics.load.peak > 1.02 * best
