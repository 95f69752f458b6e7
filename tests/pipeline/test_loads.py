"""``simulate --loads``' pure parts, without Spark: loads, one group's rounds, the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from kassign.assignor.load.figures import Balance
from kassign.pipeline.generate import GroupSpec
from kassign.pipeline.load_rounds import MAX_CALLS
from kassign.pipeline.load_rows import LOAD_COLUMNS, load_group, load_rows, round_measures
from kassign.pipeline.loads import LoadModel, drifted, load_model, load_rng, zipf_loads
from kassign.pipeline.report import build_report
from kassign.pipeline.report_loads import load_summary_table, per_round_table
from kassign.pipeline.streams_load_rows import streams_load_group, streams_load_rows

SPEC = GroupSpec(clients=(4, 4), threads=(1, 1), subtopologies=(2, 2), partitions=(100, 100))


def test_the_options_are_checked_naming_the_option() -> None:
    assert load_model("zipf:1.1", 0.1) == LoadModel(1.1, 0.1)
    assert load_model("zipf:0") == LoadModel(0.0, 0.0)
    for loads, drift, named in (
        ("pareto:1", 0.0, "--loads"),
        ("zipf", 0.0, "--loads"),
        ("zipf:-1", 0.0, "--loads"),
        ("zipf:nan", 0.0, "--loads"),
        ("zipf:1", 1.0, "--drift"),
        ("zipf:1", -0.1, "--drift"),
    ):
        with pytest.raises(ValueError, match=named):
            load_model(loads, drift)


def test_zipf_loads_are_the_ranks_loads_shuffled_and_drift_stays_within_its_fraction() -> None:
    loads = zipf_loads(50, 1.1, load_rng(7, 3))
    assert np.allclose(np.sort(loads)[::-1], 1000.0 / np.arange(1, 51) ** 1.1)
    assert not np.all(np.diff(loads) <= 0)  # shuffled, not in rank order
    assert np.array_equal(loads, zipf_loads(50, 1.1, load_rng(7, 3)))
    assert not np.array_equal(loads, zipf_loads(50, 1.1, load_rng(7, 4)))
    later = drifted(loads, 0.1, load_rng(7, 3))
    factors = later / loads
    assert factors.min() >= 0.9 and factors.max() <= 1.1 and factors.std() > 0.02
    assert drifted(loads, 0.0, load_rng(7, 3)) is loads


def test_round_measures_by_hand() -> None:
    # members' loads 4 and 2+2 on capacities 1 and 2: 4 and 2 per unit; a withheld partition
    # (-1) counts for nobody but for the mean and the bound: 9 over 3
    measures = round_measures(
        np.array([4.0, 2.0, 2.0, 1.0]),
        np.array([1.0, 2.0]),
        np.array([0, 1, 1, -1]),
        moved=2,
        rebalances=1,
    ).row()
    assert measures["max_load"] == 4.0 and measures["mean_load"] == 3.0
    assert measures["bound"] == 3.0  # the mean, above the heaviest over the largest capacity: 2
    assert measures["max_over_mean"] == measures["peak_over_bound"] == pytest.approx(4 / 3)
    assert (measures["moved"], measures["rebalances"]) == (2, 1)


def _rows(model: LoadModel, rounds: int = 4, spec: GroupSpec = SPEC) -> pd.DataFrame:
    return pd.DataFrame(load_rows(seed=3, index=1, spec=spec, model=model, rounds=rounds))


def test_load_balancing_lowers_the_peak_and_moves_little_as_loads_drift() -> None:
    rows = _rows(LoadModel(0.8, 0.1))
    assert list(rows.columns) == list(LOAD_COLUMNS) and (rows["error"] == "").all()
    assert list(rows["config"]) == ["count"] * 4 + ["load"] * 4
    assert (rows["partitions"] == 200).all() and (rows["members"] == 4).all()
    count, load = (rows[rows["config"] == c].set_index("round") for c in ("count", "load"))
    assert np.allclose(count["bound"], load["bound"])  # the same loads on both sides
    assert (load["peak_over_bound"] <= 1.02).all()
    assert (load["max_over_mean"] < count["max_over_mean"]).all()
    assert (count["peak_over_bound"] > 1.05).all()  # Kafka's answer ignores load
    assert (count["moved"] == 0).all() and load.loc[1, "moved"] == 0  # nothing owned yet
    assert 0 < load.loc[2:, "moved"].sum() < 0.2 * 200 * 3
    group = load_group(SPEC, seed=3, index=1, model=LoadModel(0.8, 0.1), rounds=4)
    for number, loads in enumerate(group.loads, start=1):
        assert load.loc[number, "mean_load"] == pytest.approx(loads.sum() / 4)


def test_the_same_arguments_give_the_same_rows_and_without_drift_nothing_moves() -> None:
    first, again = _rows(LoadModel(1.1, 0.1)), _rows(LoadModel(1.1, 0.1))
    columns = [c for c in LOAD_COLUMNS if c != "assign_cpu_seconds"]
    pd.testing.assert_frame_equal(first[columns], again[columns])
    still = _rows(LoadModel(1.1, 0.0), rounds=3)
    assert (still["moved"] == 0).all() and (still["rebalances"] == 1).all()
    assert still.groupby("config")["max_load"].nunique().eq(1).all()


def test_a_group_the_spec_cannot_make_is_an_error_row_per_balance_naming_the_key() -> None:
    for spec, key in (
        (GroupSpec(clients=(0, 0)), "clients"),
        (GroupSpec(partitions=(5, 2)), "partitions"),
        (GroupSpec(threads=(0, 2)), "threads"),
    ):
        rows = _rows(LoadModel(1.0), spec=spec)
        assert list(rows["config"]) == ["count", "load"] and list(rows["round"]) == [1, 1]
        assert rows["error"].str.startswith(f"spec {key} ").all() and (rows["members"] == 0).all()


STREAMS = GroupSpec(clients=(4, 4), threads=(1, 2), subtopologies=(2, 2), partitions=(20, 20))


def test_streams_groups_balance_task_load_per_thread_and_move_few_actives() -> None:
    model = LoadModel(0.8, 0.1)
    rows = pd.DataFrame(streams_load_rows(seed=3, index=1, spec=STREAMS, model=model, rounds=4))
    assert list(rows.columns) == list(LOAD_COLUMNS) and (rows["error"] == "").all()
    assert set(rows["kind"]) == {"streams"} and set(rows["assignor"]) == {"high_availability"}
    assert (rows["partitions"] == 40).all() and (rows["members"] == 4).all()
    count, load = (rows[rows["config"] == c].set_index("round") for c in ("count", "load"))
    assert np.allclose(count["bound"], load["bound"])  # the same task loads on both sides
    assert (load["peak_over_bound"] <= 1.02).all()
    assert (load["max_over_mean"] < count["max_over_mean"]).all()
    assert (count["peak_over_bound"] > 1.1).all()  # Kafka's answer counts tasks
    assert rows["rebalances"].between(1, MAX_CALLS).all()
    assert (rows["rebalances"] > 1).any()  # KIP-441's follow-ups honoured
    assert 0 < load.loc[2:, "moved"].sum() < 0.5 * 40 * 3
    group = streams_load_group(STREAMS, seed=3, index=1, model=model, rounds=4)
    capacity = group.capacities.sum()  # stream threads
    for number, loads in enumerate(group.loads, start=1):
        assert load.loc[number, "mean_load"] == pytest.approx(loads.sum() / capacity)
    again = pd.DataFrame(streams_load_rows(seed=3, index=1, spec=STREAMS, model=model, rounds=4))
    columns = [c for c in LOAD_COLUMNS if c != "assign_cpu_seconds"]
    pd.testing.assert_frame_equal(rows[columns], again[columns])
    bad = streams_load_rows(seed=3, index=1, spec=GroupSpec(threads=(0, 1)), model=model, rounds=2)
    assert [r["error"][:13] for r in bad] == ["spec threads "] * 2


def test_streams_load_balancing_stays_sticky_as_task_loads_drift() -> None:
    """10 one-thread clients, 400 tasks caught up on differing clients (the core's eligibility
    classes): after round 1 a 10% drift moves a few actives a round at about the slack, where
    the core's fallback to a placement without owners used to move over half of them."""
    spec = GroupSpec(clients=(10, 10), threads=(1, 1), subtopologies=(4, 4), partitions=(100, 100))
    group = streams_load_group(spec, seed=1, index=2, model=LoadModel(0.8, 0.1), rounds=4)
    step = group.start(Balance.LOAD)
    step(group.loads[0])
    for loads in group.loads[1:]:
        owners, moved, _ = step(loads)
        measures = round_measures(loads, group.capacities, owners, moved=moved, rebalances=1)
        assert moved < 0.1 * 400
        assert measures.max_load <= 1.012 * measures.bound


def _hand_rows() -> pd.DataFrame:
    def row(config: str, group: str, number: int, peak: float, moved: int) -> dict[str, object]:
        return {
            "group_id": group,
            "config": config,
            "round": number,
            "max_over_mean": peak,
            "mean_load": 10.0,
            "bound": 11.0,
            "peak_over_bound": peak * 10 / 11,
            "moved": moved,
            "rebalances": 1,
            "assign_cpu_seconds": 0.002,
            "error": "",
        }

    rows = [
        row("count", "g1", 1, 2.0, 0),
        row("count", "g1", 2, 2.2, 0),
        row("count", "g2", 1, 3.0, 0),
        row("count", "g2", 2, 3.0, 0),
        row("load", "g1", 1, 1.1, 0),
        row("load", "g1", 2, 1.1, 4),
        row("load", "g2", 1, 1.1, 0),
        row("load", "g2", 2, 1.3, 2),
        {**row("load", "g3", 1, 9.0, 99), "error": "InvalidRequest: no"},
    ]
    return pd.DataFrame(rows)


def test_the_report_tables_average_groups_per_round_and_leave_errors_out() -> None:
    rows = _hand_rows()
    peak = per_round_table(rows, "max_over_mean")
    assert list(peak.index) == ["count", "load"] and list(peak.columns) == [1, 2]
    assert peak.loc["count"].tolist() == pytest.approx([2.5, 2.6])
    assert peak.loc["load"].tolist() == pytest.approx([1.1, 1.2])
    summary = load_summary_table(rows)
    assert summary.loc["load", "groups"] == 2 and summary.loc["load", "moved_total"] == 6
    assert summary.loc["load", "moved_per_group"] == 3.0
    assert summary.loc["count", "max_over_mean"] == pytest.approx(2.55)
    assert summary.loc["count", "bound_over_mean"] == pytest.approx(1.1)


def test_the_report_of_a_load_simulation_plots_peak_and_moves_per_round(tmp_path: Path) -> None:
    _hand_rows().to_parquet(tmp_path / "out.parquet")
    page = build_report(tmp_path / "out.parquet", tmp_path / "report").read_text()
    for key in ("load-peak", "load-moves"):
        assert page.count(f'id="plot-{key}"') == 1 and f'id="table-{key}"' in page
    assert 'id="table-load-summary"' in page and "kassign load simulation report" in page
    assert "InvalidRequest: no" in page and 'id="plot-cost"' not in page
    again = build_report(tmp_path / "out.parquet", tmp_path / "again").read_text()
    assert again == page
    assert "Partitions moved per round" in page and "stream thread" not in page
    _hand_rows().assign(kind="streams").to_parquet(tmp_path / "tasks.parquet")
    tasks = build_report(tmp_path / "tasks.parquet", tmp_path / "tasks").read_text()
    assert "Active tasks moved per round" in tasks and "load per stream thread" in tasks
