"""The tables of a load simulation's report (``kassign simulate --loads``): pure pandas.

Rows are one per group (consumer or Kafka Streams, ``kind``), balance (``config``: ``count`` or ``load``) and round
(``kassign.pipeline.load_rows``). Rows with an error are left out of every mean, as in the rest
of the report. Tables have one row per configuration and a column per round, so they grow
downwards with the configurations and sideways only with ``--rounds``.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["is_load_output", "load_kind", "load_summary_table", "per_round_table"]


def is_load_output(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is ``simulate --loads`` output (it has load columns, not Streams')."""
    return "max_over_mean" in frame.columns


def load_kind(frame: pd.DataFrame) -> str:
    """``consumer`` or ``streams``: the groups a load simulation ran (outputs written before
    Streams groups were simulated have no ``kind`` column: consumer groups)."""
    kinds = set(frame["kind"]) if "kind" in frame.columns else set()
    return "streams" if kinds == {"streams"} else "consumer"


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["error"] == ""]


def per_round_table(frame: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Mean of ``measure`` over groups, per configuration (rows) and round (columns)."""
    table = _ok(frame).pivot_table(index="config", columns="round", values=measure, aggfunc="mean")
    table.columns.name = "round"
    return table.sort_index()


def load_summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: groups, the means over every group's rounds of max/mean and of the
    peak over the bound (1 is optimal), the bound over the mean (the least max/mean any
    assignment has), moves per group over all rounds and in all, and time per rebalance."""
    ok = _ok(frame)
    grouped = ok.groupby("config")
    moves = ok.groupby(["config", "group_id"])["moved"].sum().groupby(level="config")
    table = pd.DataFrame(
        {
            "groups": grouped["group_id"].nunique(),
            "max_over_mean": grouped["max_over_mean"].mean(),
            "bound_over_mean": (ok["bound"] / ok["mean_load"]).groupby(ok["config"]).mean(),
            "peak_over_bound": grouped["peak_over_bound"].mean(),
            "worst_peak_over_bound": grouped["peak_over_bound"].max(),
            "moved_per_group": moves.mean(),
            "moved_total": moves.sum(),
            "rebalances": grouped["rebalances"].sum(),
            "assign_cpu_ms": 1000 * grouped["assign_cpu_seconds"].mean(),
        }
    )
    return table.sort_index()
