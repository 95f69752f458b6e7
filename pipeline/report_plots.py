"""The report's plots, as SVG for the page to inline: one row per configuration, so any grid fits.

Why: a grid of 36 configurations (docs/pipeline.md's example) has 36 names of up to 40
characters. Put side by side on an x axis they collide whatever the size; stacked down a y axis,
each on a row of its own (``ROW``), they cannot, and the figure grows with the grid. Text stays
text (``svg.fonttype: none``), so the browser draws it at the page's scale and a test can measure
it; series that would need a 36-entry legend (rounds, rebalances) are heatmaps with one row per
configuration instead of lines. Output is deterministic (fixed ids, no date).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "ROW",
    "WIDTH",
    "against_none_plot",
    "convergence_plot",
    "cost_plot",
    "event_plot",
    "movement_plot",
    "per_round_plot",
    "trajectory_plot",
]

WIDTH = 12.5
"""Inches (900 SVG units): at the page's 1,200 px column a point is a CSS pixel and a third."""
ROW = 0.25
"""Inches per configuration: 18 points for a 10 point label."""
_FRAME = 1.4  # inches: legend or titles above, the x axis and its label below
_SVG_SIZE = re.compile(r'<svg([^>]*?) width="[^"]*" height="[^"]*"')
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)


def _figure(name: str, rows: int, panels: int = 1) -> tuple[Figure, list[Axes]]:
    """A figure as tall as its configurations need; its plot areas are marked for the tests."""
    fig = Figure(figsize=(WIDTH, max(2.8, _FRAME + ROW * rows)), layout="constrained")
    axes = list(fig.subplots(1, panels, sharey=True, squeeze=False)[0])
    for n, ax in enumerate(axes):
        ax.patch.set_gid(f"plot-area-{name}-{n}")
    return fig, axes


def _svg(draw: Callable[[], Figure], name: str) -> str:
    """Draw under the report's style and return the ``<svg>`` element, sized by the page."""
    with matplotlib.rc_context(
        {
            "svg.fonttype": "none",  # text stays text: drawn by the browser, measurable
            "svg.hashsalt": "kassign-report",  # fixed ids: the same rows give the same page
            "font.family": "DejaVu Sans",
            "font.size": 10,
        }
    ):
        fig = draw()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = _METADATA.sub("", text[text.index("<svg") :], count=1)
    return _SVG_SIZE.sub(rf'<svg\1 class="plot" id="plot-{name}" role="img"', text, count=1)


def _configs_axis(ax: Axes, names: Sequence[str]) -> None:
    ax.set_yticks(range(len(names)), [str(n) for n in names])
    ax.set_ylim(len(names) - 0.5, -0.5)  # first configuration on top, as in the tables


def _thin_xticks(ax: Axes, labels: Sequence[str]) -> None:
    """Every k-th column label, so labels at least 6 inches apart in all never touch."""
    widest = max((len(label) for label in labels), default=1)
    fits = max(1, int(6 * 72 / (widest * 7 + 10)))
    step = math.ceil(len(labels) / fits)
    ax.set_xticks(range(0, len(labels), step), [labels[i] for i in range(0, len(labels), step)])


def _heatmap(ax: Axes, table: pd.DataFrame, *, annotate: bool = False) -> None:
    """Configurations down, ``table``'s columns across. Annotated: a few named columns (event
    kinds), each labelled on at most two lines, values written in the cells; otherwise many
    numbered columns (rounds), labels thinned, values read from a colour bar."""
    values = table.to_numpy(dtype=float)
    image = ax.imshow(values, aspect="auto", cmap="viridis", interpolation="nearest")
    _configs_axis(ax, list(table.index))
    if not annotate:
        _thin_xticks(ax, [str(c) for c in table.columns])
        ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.01)
        return
    ax.set_xticks(range(len(table.columns)), [str(c).replace("_", "\n", 1) for c in table.columns])
    middle = np.nanmean(values) if np.isfinite(values).any() else 0.0
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            colour = "white" if value < middle else "black"
            ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=9, color=colour)


def cost_plot(table: pd.DataFrame) -> str:
    """Mean solver cost before and after, and cross-rack partitions, per configuration."""

    def draw() -> Figure:
        fig, (ax,) = _figure("cost", len(table))
        y = np.arange(len(table))
        ax.barh(y - 0.2, table["cross_rack_before"], height=0.4, label="solver cost before")
        ax.barh(y + 0.2, table["cross_rack_after"], height=0.4, label="solver cost after")
        ax.plot(table["cross_rack_partitions"], y, "ko", label="cross-rack partitions")
        _configs_axis(ax, list(table.index))
        ax.set_xlabel("mean per assignment")
        fig.legend(loc="outside upper center", ncols=3)
        return fig

    return _svg(draw, "cost")


def movement_plot(units: pd.DataFrame) -> str:
    """Active tasks moved per request or group phase: a box per configuration."""
    configs = sorted(units["config"].unique())

    def draw() -> Figure:
        fig, (ax,) = _figure("movement", len(configs))
        data = [units.loc[units["config"] == c, "active_moved"].to_numpy() for c in configs]
        ax.boxplot(
            data,
            positions=range(len(configs)),
            orientation="horizontal",
            showfliers=False,
            widths=0.6,
        )
        _configs_axis(ax, configs)
        ax.set_xlabel("active tasks moved")
        return fig

    return _svg(draw, "movement")


def against_none_plot(table: pd.DataFrame, measures: Sequence[tuple[str, str]]) -> str:
    """Each configuration minus its strategy-``none`` twin, one panel per measure."""

    def draw() -> Figure:
        fig, axes = _figure("against-none", len(table), panels=len(measures))
        y = np.arange(len(table))
        for ax, (column, title) in zip(axes, measures, strict=True):
            values = table[column].fillna(0)
            ax.barh(y, values, height=0.6, color=np.where(values <= 0, "tab:green", "tab:red"))
            ax.axvline(0, color="black", linewidth=0.8)
            ax.set_title(title)
        _configs_axis(axes[0], list(table.index))
        fig.supxlabel("difference from the same configuration with rack strategy none")
        return fig

    return _svg(draw, "against-none")


def event_plot(table: pd.DataFrame, measures: Sequence[tuple[str, str]]) -> str:
    """Per configuration (rows) and event kind (columns): one annotated heatmap per measure."""

    def draw() -> Figure:
        configs = sorted(table.index.get_level_values("config").unique())
        fig, axes = _figure("events", len(configs), panels=len(measures))
        for ax, (column, title) in zip(axes, measures, strict=True):
            wide = table[column].unstack("event").reindex(configs)
            kinds = [k for k in table.index.get_level_values("event").unique()]
            _heatmap(ax, wide[kinds], annotate=True)
            ax.set_title(title)
        return fig

    return _svg(draw, "events")


def _heatmap_plot(name: str, table: pd.DataFrame, xlabel: str) -> str:
    def draw() -> Figure:
        fig, (ax,) = _figure(name, len(table))
        _heatmap(ax, table)
        ax.set_xlabel(xlabel)
        return fig

    return _svg(draw, name)


def convergence_plot(table: pd.DataFrame) -> str:
    """Share of group phases per configuration by rebalances to converge."""
    shares = 100 * table.div(table.sum(axis=1), axis=0)
    label = "rebalances to converge (-1: not within --rounds); colour: % of group phases"
    return _heatmap_plot("convergence", shares, label)


def trajectory_plot(table: pd.DataFrame) -> str:
    """Mean cross-rack partitions per configuration and round."""
    return _heatmap_plot("trajectory", table, "round; colour: mean cross-rack partitions")


def per_round_plot(
    name: str, table: pd.DataFrame, ylabel: str, floor: pd.Series | None = None
) -> str:
    """A line per configuration (a load simulation has two: count and load) across rounds;
    ``floor``, if given, dashed: the least value any assignment reaches (the bound), and the
    axis then fits the lines (a ratio near 30 would flatten against a zero); otherwise (counts)
    it starts at zero."""

    def draw() -> Figure:
        fig = Figure(figsize=(WIDTH, 3.6), layout="constrained")
        ax = fig.subplots()
        ax.patch.set_gid(f"plot-area-{name}-0")
        for config, values in table.iterrows():
            ax.plot(table.columns, values.to_numpy(dtype=float), marker="o", label=str(config))
        if floor is not None:
            ax.plot(floor.index, floor.to_numpy(dtype=float), "k--", label="bound / mean")
        ax.set_xticks(list(table.columns))
        ax.set_xlabel("round")
        ax.set_ylabel(ylabel)
        if floor is None:
            ax.set_ylim(bottom=0)
        fig.legend(loc="outside upper center", ncols=len(table) + (floor is not None))
        return fig

    return _svg(draw, name)
