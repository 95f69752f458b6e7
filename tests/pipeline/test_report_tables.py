"""The tables behind the report's plots, on hand-made rows whose sums can be checked by eye."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from kassign.pipeline.report import build_report
from kassign.pipeline.report_tables import (
    against_none_table,
    baselines,
    convergence_table,
    cost_table,
    error_table,
    event_table,
    movement_table,
    phase_totals,
    trajectory_table,
)


def _rows() -> pd.DataFrame:
    # two configs x one group; config "a" needs 2 rounds in phase 0, "b" one; one error row.
    # "a" is min_traffic, "b" its twin with rack strategy none.
    rows = pd.DataFrame(
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
    rows["converged"] = rows["rebalances_to_converge"] != -1
    rows["config_rack_strategy"] = rows["config"].map({"a": "min_traffic", "b": "none"})
    rows["config_assignor"] = "high_availability"
    for axis in ("config_traffic_cost", "config_non_overlap_cost", "config_standbys"):
        rows[axis] = -1
    return rows


def _with_a_rack_failure() -> pd.DataFrame:
    """``_rows`` plus phase 1 of group g, a rack failure: "a" does not converge within its one
    round, "b" converges at once."""
    event = {"group_id": "g", "phase": 1, "event": "rack_fail:0", "round": 1, "error": ""}
    extra = pd.DataFrame(
        [
            {
                **event,
                "config": "a",
                "cost_before": 4,
                "cost_after": 2,
                "cross_rack_partitions": 3,
                "active_moved": 2,
                "standby_moved": 0,
                "warmups": 1,
                "rebalances_to_converge": -1,
            },
            {
                **event,
                "config": "b",
                "cost_before": 0,
                "cost_after": 0,
                "cross_rack_partitions": 8,
                "active_moved": 6,
                "standby_moved": 1,
                "warmups": 0,
                "rebalances_to_converge": 1,
            },
        ]
    )
    rows = _rows()
    extra["converged"] = extra["rebalances_to_converge"] != -1
    for axis in rows.columns.difference(extra.columns):
        extra[axis] = extra["config"].map(rows.drop_duplicates("config").set_index("config")[axis])
    return pd.concat([rows, extra], ignore_index=True)


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
        convergence.loc["a", 2] == 1
        and convergence.loc["b", 1] == 1
        and convergence.loc["b", -1] == 1
    )
    trajectory = trajectory_table(_rows())
    assert trajectory.loc["a", 1] == 6 and trajectory.loc["a", 2] == 2
    assert trajectory.loc["b", 1] == 9 and trajectory.loc["b", 2] == 9  # converged: keeps its value


def test_the_event_breakdown_pools_phases_by_event_kind() -> None:
    table = event_table(_with_a_rack_failure())
    assert list(table.index) == [
        ("initial", "a"),
        ("initial", "b"),
        ("rack_fail", "a"),
        ("rack_fail", "b"),
    ]
    initial_a = table.loc[("initial", "a")]
    assert initial_a["phases"] == 1 and initial_a["active_moved"] == 4 and initial_a["warmups"] == 2
    assert initial_a["rebalances"] == 2 and initial_a["cross_rack_partitions"] == 2  # at its end
    failed_a = table.loc[("rack_fail", "a")]
    assert failed_a["converged_pct"] == 0 and pd.isna(failed_a["rebalances"])
    assert table.loc[("rack_fail", "b"), "active_moved"] == 6


def test_each_configuration_against_its_none_twin() -> None:
    rows = _with_a_rack_failure()
    assert baselines(rows) == {"a": "b"}
    table = against_none_table(rows)
    assert list(table.index) == ["a"] and table.loc["a", "baseline"] == "b"
    # cross-rack partitions: a's rows 6, 2, 3 against b's 9, 8; active moved per phase 4, 2 vs 5, 6
    assert table.loc["a", "cross_rack_partitions"] == 11 / 3 - 8.5
    assert table.loc["a", "cross_rack_pct"] == 100 * (11 / 3 - 8.5) / 8.5
    assert table.loc["a", "active_moved"] == 3 - 5.5
    assert table.loc["a", "rebalances"] == 2 - 1  # a's failed phase did not converge


def test_a_twin_with_other_costs_serves_when_the_grid_has_none_with_the_same() -> None:
    rows = _rows()
    rows.loc[rows["config"] == "a", "config_traffic_cost"] = 10
    assert baselines(rows) == {"a": "b"}
    rows.loc[rows["config"] == "b", "config_standbys"] = 1  # another standby count: no twin
    assert baselines(rows) == {} and against_none_table(rows).empty


def test_the_error_table_lists_each_failed_input_once() -> None:
    rows = _rows()
    rows.loc[rows["group_id"] == "g", "error"] = ""
    errors = error_table(rows)
    assert errors.to_dict("records") == [
        {
            "group_id": "h",
            "phase": 0,
            "event": "initial",
            "round": 1,
            "error": "InvalidRequest: no members",
            "configurations": "b",
        }
    ]
    everywhere = pd.concat([rows, rows.iloc[[-1]].assign(config="a")])
    assert list(error_table(everywhere)["configurations"]) == ["all 2"]


def test_a_report_page_from_parquet(tmp_path: Path) -> None:
    rows = _with_a_rack_failure()
    for column, value in (("tasks", 4), ("clients", 2)):
        rows[column] = value
    rows.to_parquet(tmp_path / "rows.parquet")
    page = build_report(tmp_path / "rows.parquet", tmp_path / "site").read_text()
    assert "6 rows, 2 configurations, 1 with an error" in page
    assert "kassign simulation report" in page
    assert list(tmp_path.joinpath("site").iterdir()) == [tmp_path / "site" / "index.html"]
    for key in ("cost", "against-none", "movement", "events", "convergence", "trajectory"):
        assert page.count(f'id="plot-{key}"') == 1 and f'id="table-{key}"' in page
    assert 'id="table-errors"' in page and "InvalidRequest: no members" in page
    assert "<img" not in page and "http" not in page.replace("http://www.w3.org", "")
    again = build_report(tmp_path / "rows.parquet", tmp_path / "again").read_text()
    assert again == page  # deterministic: no dates, no random ids


def test_a_report_of_errors_only_lists_them(tmp_path: Path) -> None:
    rows = _rows()
    rows["error"] = "DecodeError: truncated"
    rows.to_parquet(tmp_path / "rows.parquet")
    page = build_report(tmp_path / "rows.parquet", tmp_path / "site").read_text()
    assert "4 rows, 2 configurations, 4 with an error" in page
    # one line per failed rebalance: g round 1 (both configurations), g round 2 (a), h round 1 (b)
    assert "<svg" not in page and page.count("DecodeError: truncated") == 3
