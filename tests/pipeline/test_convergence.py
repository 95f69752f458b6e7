"""Rack awareness never keeps a group from converging: the sample report's groups (its spec and
grid, seed 2026) that reach a rebalance with no follow-up under strategy ``none`` reach one under
the rack-aware strategies too, within the same 20 rebalances.

It once failed for 6 of the first 30 groups: the joint stage re-placed the lagging standby a
standby movement keeps as a warm-up, so the warm-up never caught up and every rebalance planned
it again. No Spark: ``simulate_rows`` is the function each Spark task runs.
"""

from __future__ import annotations

from pathlib import Path

from kassign.pipeline.generate import load_spec
from kassign.pipeline.grid import load_grid
from kassign.pipeline.rows import simulate_rows

SAMPLE = Path(__file__).resolve().parents[2] / "docs" / "sample-report"
GROUPS = 30


def test_rack_aware_groups_converge_where_none_does() -> None:
    spec, grid = load_spec(SAMPLE / "spec.json"), load_grid(SAMPLE / "grid.json")
    stuck: dict[str, list[int]] = {c.name: [] for c in grid}
    for index in range(GROUPS):
        rows = simulate_rows(seed=2026, index=index, spec=spec, grid=grid, events=(), rounds=20)
        for row in rows:
            if row["round"] == 1 and not row["converged"]:
                stuck[row["config"]].append(index)
    baseline = set(stuck["ha/none"])
    assert len(baseline) < GROUPS // 5  # the groups do converge, mostly
    worse = {name: sorted(set(groups) - baseline) for name, groups in stuck.items()}
    assert all(not groups for groups in worse.values()), worse
