"""The tables behind the report's plots: pure pandas aggregations of replay or simulate rows.

Rows with an ``error`` are counted (the page says how many, and lists them) but left out of every
mean. Every table has one row per configuration (or per event and configuration), so a grid of
any size grows the tables downwards, never sideways.
"""

from __future__ import annotations

import pandas as pd

__all__ = [
    "EVENT_KINDS",
    "against_none_table",
    "baselines",
    "convergence_table",
    "cost_table",
    "error_table",
    "event_table",
    "movement_table",
    "phase_totals",
    "trajectory_table",
]

_PHASE_KEYS = ["config", "group_id", "phase", "event"]
_MOVES = ["active_moved", "standby_moved", "warmups"]
EVENT_KINDS = ("initial", "join", "leave", "rack_fail", "rack_return")
"""The order of the event breakdown: start-up, then ``kassign.pipeline.events.EventKind``'s."""
_SAME_AXES = ["config_assignor", "config_standbys"]
_COST_AXES = ["config_traffic_cost", "config_non_overlap_cost"]
_ERROR_KEYS = ("request_index", "group_id", "phase", "event", "round")


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
    """Simulation rows per group phase: the moves one event (or start-up) caused, summed over
    its rebalances, whether and after how many rebalances it converged, and the cross-rack
    partitions it ended with."""
    ok = _ok(frame).sort_values("round", kind="stable")
    grouped = ok.groupby(_PHASE_KEYS)
    totals = grouped[_MOVES].sum()
    totals["converged"] = grouped["converged"].first().astype(bool)
    totals["rebalances"] = grouped["rebalances_to_converge"].first().where(totals["converged"])
    totals["cross_rack_partitions"] = grouped["cross_rack_partitions"].last()
    return totals.reset_index().sort_values(_PHASE_KEYS, kind="stable").reset_index(drop=True)


def _units(frame: pd.DataFrame) -> pd.DataFrame:
    """What one movement counts over: a request (replay) or a group phase (simulate)."""
    return phase_totals(frame) if "round" in frame.columns else _ok(frame)


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
    """Group phases by configuration (rows) and rebalances to converge (columns, -1: never)."""
    first = frame[frame["round"] == 1]
    table = pd.crosstab(first["config"], first["rebalances_to_converge"])
    table.columns.name = "rebalances"
    return table.sort_index().sort_index(axis=1)


def trajectory_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean cross-rack partitions per configuration (rows) and round (columns).

    Every group phase counts in every round: one that converged (or failed) earlier keeps its
    last value, so the curve follows one population instead of the slow groups alone.
    """
    ok = _ok(frame)
    last = int(ok["round"].max()) if len(ok) else 0
    wide = ok.pivot_table(
        index=_PHASE_KEYS, columns="round", values="cross_rack_partitions", aggfunc="first"
    )
    wide = wide.reindex(columns=range(1, last + 1)).ffill(axis=1)
    table = wide.groupby(level="config").mean()
    table.columns.name = "round"
    return table.sort_index()


def _event_kind(label: str) -> str:
    """``rack_fail:0`` -> ``rack_fail``: events of one kind are pooled whatever their argument."""
    return label.split(":", 1)[0]


def event_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per event kind and configuration, over group phases: how many, mean moves, share that
    converged, mean rebalances of those that did, and cross-rack partitions at the end."""
    totals = phase_totals(frame)
    totals["event"] = totals["event"].map(_event_kind)
    grouped = totals.groupby(["event", "config"])
    table = pd.DataFrame(
        {
            "phases": grouped.size(),
            **{m: grouped[m].mean() for m in _MOVES},
            "converged_pct": 100 * grouped["converged"].mean(),
            "rebalances": grouped["rebalances"].mean(),
            "cross_rack_partitions": grouped["cross_rack_partitions"].mean(),
        }
    )
    order = {kind: n for n, kind in enumerate(EVENT_KINDS)}
    return table.sort_index(key=lambda level: level.map(lambda v: (order.get(v, 99), v)))


def baselines(frame: pd.DataFrame) -> dict[str, str]:
    """Each configuration's strategy-``none`` twin: same assignor and standbys, the same costs
    where the grid has them (costs do not change an assignment without rack awareness)."""
    configs = frame.drop_duplicates("config").set_index("config").sort_index()
    nones = configs[configs["config_rack_strategy"] == "none"]
    found = {}
    for name, row in configs[configs["config_rack_strategy"] != "none"].iterrows():
        same = nones[(nones[_SAME_AXES] == row[_SAME_AXES]).all(axis=1)]
        exact = same[(same[_COST_AXES] == row[_COST_AXES]).all(axis=1)]
        if len(same):
            found[str(name)] = str((exact if len(exact) else same).index[0])
    return found


def _config_means(frame: pd.DataFrame) -> pd.DataFrame:
    ok, units = _ok(frame), _units(frame)
    means = pd.DataFrame(
        {
            "cross_rack_partitions": ok.groupby("config")["cross_rack_partitions"].mean(),
            "cost_after": ok.groupby("config")["cost_after"].mean(),
            **{m: units.groupby("config")[m].mean() for m in _MOVES},
        }
    )
    if "round" in frame.columns:
        means["rebalances"] = units.groupby("config")["rebalances"].mean()
    return means


def against_none_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration with a ``none`` twin: its means minus the twin's (negative: fewer)."""
    means, twins = _config_means(frame), baselines(frame)
    rows = [name for name in sorted(twins) if name in means.index and twins[name] in means.index]
    base = means.loc[[twins[name] for name in rows]].set_axis(rows)
    table = means.loc[rows] - base
    table.insert(
        1,
        "cross_rack_pct",
        100
        * table["cross_rack_partitions"]
        / base["cross_rack_partitions"].where(base["cross_rack_partitions"] > 0),
    )
    table.insert(0, "baseline", [twins[name] for name in rows])
    table.index.name = "config"
    return table


def error_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with an error, one line per failed request (or simulated rebalance) and error,
    with the configurations it failed under ("all N" when it failed under every one)."""
    keys = [k for k in _ERROR_KEYS if k in frame.columns] + ["error"]
    errors = frame[frame["error"] != ""]
    every = frame["config"].nunique()
    table = errors.groupby(keys, sort=True)["config"].agg(
        lambda c: f"all {every}" if c.nunique() == every else ", ".join(sorted(set(c)))
    )
    return table.rename("configurations").reset_index()
