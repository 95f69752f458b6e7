"""``kassign report``: a static HTML page of plots (matplotlib PNGs) from replay or simulate output.

Why: the question an operator asks ("what does min_traffic save, what moves, how long until it
settles") fits on one page. Each plot is followed by the table it was drawn from; the page links
only its own PNGs, so the folder can be copied or committed as it is. Aggregation is pandas on
the driver: outputs are one row per assignment, small next to the work that made them.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from kassign.pipeline.report_tables import (
    convergence_table,
    cost_table,
    movement_table,
    phase_totals,
    trajectory_table,
)
from matplotlib.figure import Figure

__all__ = ["Section", "build_report", "load_output"]

log = logging.getLogger("kassign.pipeline")
_STYLE = (
    "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
    "table{border-collapse:collapse;font-size:80%}td,th{border:1px solid #ccc;padding:2px 6px}"
    "</style></head><body>"
)
_DPI = 72
_SIZE = (6.4, 3.4)


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    png: str
    table: pd.DataFrame
    note: str


def load_output(path: str | Path) -> pd.DataFrame:
    """A replay or simulate output folder (Parquet) as one pandas frame."""
    return pd.read_parquet(path)


def _save(fig: Figure, target: Path) -> None:
    fig.tight_layout()
    fig.savefig(target, dpi=_DPI)
    plt.close(fig)


def _cost_plot(table: pd.DataFrame, target: Path) -> None:
    fig, ax = plt.subplots(figsize=_SIZE)
    x = range(len(table))
    ax.bar([i - 0.2 for i in x], table["cross_rack_before"], width=0.4, label="solver cost before")
    ax.bar([i + 0.2 for i in x], table["cross_rack_after"], width=0.4, label="solver cost after")
    ax.plot(list(x), table["cross_rack_partitions"], "ko", label="cross-rack partitions")
    ax.set_xticks(list(x), table.index, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("mean per assignment")
    ax.legend(fontsize=7)
    _save(fig, target)


def _movement_plot(frame: pd.DataFrame, target: Path) -> None:
    configs = sorted(frame["config"].unique())
    fig, ax = plt.subplots(figsize=_SIZE)
    ax.boxplot([frame.loc[frame["config"] == c, "active_moved"] for c in configs], showfliers=False)
    ax.set_xticks(range(1, len(configs) + 1), configs, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("active tasks moved")
    _save(fig, target)


def _convergence_plot(table: pd.DataFrame, target: Path) -> None:
    fig, ax = plt.subplots(figsize=_SIZE)
    table.plot.bar(ax=ax, width=0.8)
    ax.set_xlabel("rebalances to converge (-1: not within --rounds)")
    ax.set_ylabel("group phases")
    ax.legend(fontsize=7)
    _save(fig, target)


def _trajectory_plot(table: pd.DataFrame, target: Path) -> None:
    fig, ax = plt.subplots(figsize=_SIZE)
    table.plot(ax=ax, marker="o")
    ax.set_xlabel("round")
    ax.set_ylabel("mean cross-rack partitions")
    ax.legend(fontsize=7)
    _save(fig, target)


def _sections(frame: pd.DataFrame, directory: Path) -> list[Section]:
    simulated = "round" in frame.columns
    units = phase_totals(frame) if simulated else frame
    sections = []
    cost = cost_table(frame)
    _cost_plot(cost, directory / "cost.png")
    sections.append(
        Section(
            "Cross-rack cost per configuration",
            "cost.png",
            cost,
            "Mean KIP-925 solver cost before and after rack optimisation, and the "
            "partitions actives read with no replica in their rack.",
        )
    )
    _movement_plot(units, directory / "movement.png")
    sections.append(
        Section(
            "Active task movements",
            "movement.png",
            movement_table(units),
            "Per "
            + ("group phase (summed over its rebalances)" if simulated else "request")
            + "; boxes show quartiles, whiskers 1.5 IQR.",
        )
    )
    if simulated:
        convergence = convergence_table(frame)
        _convergence_plot(convergence, directory / "convergence.png")
        sections.append(
            Section(
                "Rebalances to converge",
                "convergence.png",
                convergence,
                "Group phases (initial convergence and one per event) by how many "
                "rebalances ran until no follow-up was scheduled.",
            )
        )
        trajectory = trajectory_table(frame)
        _trajectory_plot(trajectory, directory / "trajectory.png")
        sections.append(
            Section(
                "Cost trajectory over rounds",
                "trajectory.png",
                trajectory,
                "Mean cross-rack partitions at each round of a phase; a phase that converged "
                "earlier "
                "keeps its last value.",
            )
        )
    return sections


def _page(frame: pd.DataFrame, sections: list[Section], source: str) -> str:
    kind = "simulation" if "round" in frame.columns else "replay"
    errors = int((frame["error"] != "").sum())
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kassign report</title>",
        _STYLE,
        f"<h1>kassign {kind} report</h1>",
        (
            f"<p>Source: <code>{html.escape(Path(source).name)}</code>; {len(frame)} rows, "
            f"{errors} with an error.</p>"
        ),
    ]
    for section in sections:
        parts += [
            f"<h2>{html.escape(section.title)}</h2>",
            f"<p>{html.escape(section.note)}</p>",
            f"<img src='{section.png}' alt='{html.escape(section.title)}'>",
            section.table.to_html(float_format=lambda v: f"{v:.2f}", border=0),
        ]
    parts.append("</body></html>")
    return "\n".join(parts)


def build_report(source: str | Path, directory: str | Path) -> Path:
    """Write ``directory/index.html`` and its PNGs from the output folder ``source``."""
    frame = load_output(source)
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    sections = _sections(frame, target)
    index = target / "index.html"
    index.write_text(_page(frame, sections, str(source)), encoding="utf-8")
    log.info("report: %d rows -> %s (%d plots)", len(frame), index, len(sections))
    return index
