"""The tables behind the report's plots, on hand-made rows whose sums can be checked by eye."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from kassign.pipeline.report import build_report
from kassign.pipeline.report_tables import (
    convergence_table,
    cost_table,
    movement_table,
    phase_totals,
    trajectory_table,
)


def _rows() -> pd.DataFrame:
    # two configs x one group; config "a" needs 2 rounds in phase 0, "b" one; one error row
    return pd.DataFrame(
        [
            {
                "config": "a",
                "group_id": "g",
                "phase": 0,
                "event": "initial",
                "round": 1,
                "cost_before": 10,
                "cost_after": 4,
                "cross_rack_partitions": 6,
                "active_moved": 3,
                "standby_moved": 1,
                "warmups": 2,
                "rebalances_to_converge": 2,
                "error": "",
            },
            {
                "config": "a",
                "group_id": "g",
                "phase": 0,
                "event": "initial",
                "round": 2,
                "cost_before": 6,
                "cost_after": 2,
                "cross_rack_partitions": 2,
                "active_moved": 1,
                "standby_moved": 0,
                "warmups": 0,
                "rebalances_to_converge": 2,
                "error": "",
            },
            {
                "config": "b",
                "group_id": "g",
                "phase": 0,
                "event": "initial",
                "round": 1,
                "cost_before": 0,
                "cost_after": 0,
                "cross_rack_partitions": 9,
                "active_moved": 5,
                "standby_moved": 2,
                "warmups": 0,
                "rebalances_to_converge": 1,
                "error": "",
            },
            {
                "config": "b",
                "group_id": "h",
                "phase": 0,
                "event": "initial",
                "round": 1,
                "cost_before": 99,
                "cost_after": 0,
                "cross_rack_partitions": 99,
                "active_moved": 99,
                "standby_moved": 99,
                "warmups": 0,
                "rebalances_to_converge": -1,
                "error": "InvalidRequest: no members",
            },
        ]
    )


def test_cost_table_means_and_savings_leave_errors_out() -> None:
    table = cost_table(_rows())
    assert table.loc["a", "cross_rack_before"] == 8 and table.loc["a", "cross_rack_after"] == 3
    assert table.loc["a", "saved"] == 5 and table.loc["a", "saved_pct"] == 62.5
    assert table.loc["b", "assignments"] == 1 and table.loc["b", "saved_pct"] == 0


def test_phase_totals_sum_a_phases_rounds() -> None:
    totals = phase_totals(_rows()).set_index("config")
    assert totals.loc["a", "active_moved"] == 4 and totals.loc["a", "warmups"] == 2
    assert movement_table(phase_totals(_rows())).loc["a", "active_moved_max"] == 4


def test_convergence_and_trajectory_tables() -> None:
    convergence = convergence_table(_rows())
    assert (
        convergence.loc[2, "a"] == 1
        and convergence.loc[1, "b"] == 1
        and convergence.loc[-1, "b"] == 1
    )
    trajectory = trajectory_table(_rows())
    assert trajectory.loc[1, "a"] == 6 and trajectory.loc[2, "a"] == 2
    assert trajectory.loc[1, "b"] == 9 and trajectory.loc[2, "b"] == 9  # converged: keeps its value


def test_a_report_page_from_parquet(tmp_path: Path) -> None:
    rows = _rows()
    for column, value in (("tasks", 4), ("clients", 2), ("converged", True)):
        rows[column] = value
    rows.to_parquet(tmp_path / "rows.parquet")
    page = build_report(tmp_path / "rows.parquet", tmp_path / "site").read_text()
    assert "4 rows, 1 with an error" in page and "kassign simulation report" in page
    assert sorted(p.name for p in (tmp_path / "site").glob("*.png")) == [
        "convergence.png",
        "cost.png",
        "movement.png",
        "trajectory.png",
    ]
