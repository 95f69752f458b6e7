"""The tables behind the report's plots: pure pandas aggregations of replay or simulate rows.

Rows with an ``error`` are counted (the page says how many) but left out of every mean.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["convergence_table", "cost_table", "movement_table", "phase_totals", "trajectory_table"]

_PHASE_KEYS = ["config", "group_id", "phase", "event"]


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["error"] == ""]


def cost_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: mean solver cost before/after, saving, and cross-rack partitions."""
    grouped = _ok(frame).groupby("config")
    table = pd.DataFrame(
        {
            "assignments": grouped.size(),
            "cross_rack_before": grouped["cost_before"].mean(),
            "cross_rack_after": grouped["cost_after"].mean(),
            "cross_rack_partitions": grouped["cross_rack_partitions"].mean(),
        }
    )
    table["saved"] = table["cross_rack_before"] - table["cross_rack_after"]
    table["saved_pct"] = (
        100 * table["saved"] / table["cross_rack_before"].where(table["cross_rack_before"] > 0)
    ).fillna(0)
    return table.sort_index()


def phase_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Simulation rows summed per group phase: the movements one event (or start-up) caused."""
    ok = _ok(frame)
    totals = ok.groupby(_PHASE_KEYS, as_index=False)[
        ["active_moved", "standby_moved", "warmups"]
    ].sum()
    return totals.sort_values(_PHASE_KEYS, kind="stable").reset_index(drop=True)


def movement_table(units: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: mean, median, 95th percentile and max of active and standby moves."""
    grouped = units.groupby("config")
    columns = {}
    for measure in ("active_moved", "standby_moved"):
        values = grouped[measure]
        columns[f"{measure}_mean"] = values.mean()
        columns[f"{measure}_p50"] = values.quantile(0.5)
        columns[f"{measure}_p95"] = values.quantile(0.95)
        columns[f"{measure}_max"] = values.max()
    return pd.DataFrame(columns).sort_index()


def convergence_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Group phases by rebalances to converge (rows) and configuration (columns)."""
    first = frame[frame["round"] == 1]
    table = pd.crosstab(first["rebalances_to_converge"], first["config"])
    table.index.name = "rebalances"
    return table.sort_index()


def trajectory_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean cross-rack partitions per round (rows) and configuration (columns).

    Every group phase counts in every round: one that converged (or failed) earlier keeps its
    last value, so the curve follows one population instead of the slow groups alone.
    """
    ok = _ok(frame)
    last = int(ok["round"].max()) if len(ok) else 0
    wide = ok.pivot_table(
        index=_PHASE_KEYS, columns="round", values="cross_rack_partitions", aggfunc="first"
    )
    wide = wide.reindex(columns=range(1, last + 1)).ffill(axis=1)
    table = wide.groupby(level="config").mean().T
    table.index.name = "round"
    return table.sort_index()
