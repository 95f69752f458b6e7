"""``kassign report``: one static HTML page of plots and tables from replay or simulate output.

Why: the question an operator asks ("what does min_traffic save, what moves, how long until it
settles, what happens when a rack fails") fits on one page. Each plot is followed by the table it
was drawn from; plots are inline SVG (``kassign.pipeline.report_plots``), so the page is one
self-contained file. Everything is laid out for grids of any size: one row per configuration,
tables that grow downwards. Aggregation is pandas on the driver: outputs are one row per
assignment, small next to the work that made them.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from kassign.pipeline import report_plots as plots
from kassign.pipeline.report_loads import (
    is_load_output,
    load_kind,
    load_summary_table,
    per_round_table,
)
from kassign.pipeline.report_tables import (
    against_none_table,
    convergence_table,
    cost_table,
    error_table,
    event_table,
    movement_table,
    phase_totals,
    trajectory_table,
)

__all__ = ["MAX_ERRORS", "Section", "build_report", "load_output"]

log = logging.getLogger("kassign.pipeline")
MAX_ERRORS = 1000
"""Error lines listed on the page; the output's ``error`` column keeps every one."""
_STYLE = (
    "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:0 16px}"
    "svg.plot{display:block;width:100%;height:auto;margin:1em 0}"
    ".table{overflow-x:auto;margin:0 0 2em}"
    "table{border-collapse:collapse;font-size:85%}"
    "td,th{border:1px solid #ccc;padding:2px 6px}"
    "td{text-align:right;font-variant-numeric:tabular-nums}th{text-align:left}"
    "table.errors td{text-align:left;overflow-wrap:anywhere}"
    "</style>"
)
_AGAINST_NONE = (
    ("cross_rack_partitions", "cross-rack partitions"),
    ("active_moved", "active moved"),
)
_EVENT_MEASURES = (
    ("active_moved", "active tasks moved per phase"),
    ("rebalances", "rebalances to converge"),
)


@dataclass(frozen=True, slots=True)
class Section:
    key: str
    title: str
    note: str
    table: pd.DataFrame
    svg: str = ""
    number_format: str = "{:.2f}"


def load_output(path: str | Path) -> pd.DataFrame:
    """A replay or simulate output folder (Parquet) as one pandas frame."""
    return pd.read_parquet(path)


def _overview(frame: pd.DataFrame, units: pd.DataFrame, simulated: bool) -> list[Section]:
    cost = cost_table(frame)
    per = "group phase (summed over its rebalances)" if simulated else "request"
    sections = [
        Section(
            "cost",
            "Cross-rack cost per configuration",
            "Mean KIP-925 solver cost before and after rack optimisation, and the "
            "partitions actives read with no replica in their rack.",
            cost,
            plots.cost_plot(cost),
        )
    ]
    against = against_none_table(frame)
    if len(against):
        measures = _AGAINST_NONE + ((("rebalances", "rebalances"),) if simulated else ())
        sections.append(
            Section(
                "against-none",
                "Against rack strategy none",
                "Each configuration's means minus those of its twin with rack strategy none "
                "(same assignor and standbys, the same costs where the grid has them): negative "
                f"is fewer. Moves are per {per}; cross_rack_pct is the change in percent.",
                against,
                plots.against_none_plot(against, measures),
                "{:+.2f}",
            )
        )
    sections.append(
        Section(
            "movement",
            "Active task movements",
            f"Per {per}; boxes show quartiles, whiskers 1.5 IQR.",
            movement_table(units),
            plots.movement_plot(units),
        )
    )
    return sections


def _simulation(frame: pd.DataFrame) -> list[Section]:
    events = event_table(frame)
    convergence = convergence_table(frame)
    trajectory = trajectory_table(frame)
    return [
        Section(
            "events",
            "Breakdown by event",
            "Group phases by the event that started them (initial: convergence from the "
            "generated start): moves summed over the phase's rebalances, the share that "
            "converged within --rounds, the mean rebalances of those that did, and the "
            "cross-rack partitions the phase ended with. Plots: means per phase.",
            events,
            plots.event_plot(events, _EVENT_MEASURES),
        ),
        Section(
            "convergence",
            "Rebalances to converge",
            "Group phases (initial convergence and one per event) by how many rebalances ran "
            "until no follow-up was scheduled.",
            convergence,
            plots.convergence_plot(convergence),
        ),
        Section(
            "trajectory",
            "Cost trajectory over rounds",
            "Mean cross-rack partitions at each round of a phase; a phase that converged "
            "earlier keeps its last value.",
            trajectory,
            plots.trajectory_plot(trajectory),
            "{:.1f}",
        ),
    ]


_LOAD_WORDS = {
    "consumer": (
        (
            "count: Kafka's cooperative-sticky; load: the same assignor balancing load per "
            "unit of capacity"
        ),
        "member's load per unit of capacity",
        "partitions",
        "follow-up rebalances included (round 1 starts from nothing owned: none move)",
        "round 1 starts from nothing owned",
    ),
    "streams": (
        (
            "count: Kafka Streams' high_availability; load: the same assignor balancing task "
            "load per stream thread"
        ),
        "client's load per stream thread",
        "active tasks",
        (
            "KIP-441's follow-up rebalances included (round 1 starts from the generated "
            "group's previous owners)"
        ),
        "round 1 starts from the generated group's previous owners and lagging stores",
    ),
}
"""What a load simulation's page says of each kind of group (``load_rows``' ``kind``)."""


def _loads(frame: pd.DataFrame) -> list[Section]:
    """A load simulation's sections (``simulate --loads``): count against load balancing."""
    peak = per_round_table(frame, "max_over_mean")
    ok = frame[frame["error"] == ""]
    floor = (ok["bound"] / ok["mean_load"]).groupby(ok["round"]).mean()
    moves = per_round_table(frame, "moved")
    configs, busiest, items, followups, first = _LOAD_WORDS[load_kind(frame)]
    return [
        Section(
            "load-summary",
            "Count against load balancing",
            f"Per configuration ({configs}), over every group's rounds: the busiest "
            f"{busiest} over the mean (max over mean), the least any "
            "assignment reaches (bound over mean), the peak over that bound (1 is optimal), "
            f"the {items} moved per group over all rounds and in all, and the CPU time per round.",
            load_summary_table(frame),
            number_format="{:.3f}",
        ),
        Section(
            "load-peak",
            "Max over mean load per round",
            f"Mean over groups, per round, of the busiest {busiest} "
            "over the mean; dashed: the bound over the mean, below which no assignment goes. "
            f"Loads drift between rounds; {first}.",
            peak,
            plots.per_round_plot("load-peak", peak, "max / mean load", floor),
            "{:.3f}",
        ),
        Section(
            "load-moves",
            f"{items.capitalize()} moved per round",
            f"Mean over groups of the {items} each round moved from their previous owner, "
            f"{followups}.",
            moves,
            plots.per_round_plot("load-moves", moves, f"{items} moved"),
            "{:.1f}",
        ),
    ]


def _errors(frame: pd.DataFrame) -> list[Section]:
    errors = error_table(frame)
    if not len(errors):
        return []
    shown = errors.head(MAX_ERRORS)
    more = (
        f" The first {MAX_ERRORS} of {len(errors)} are listed." if len(errors) > len(shown) else ""
    )
    return [
        Section(
            "errors",
            "Errors",
            "Rows without an assignment, left out of every figure above: one line per "
            f"failed input and error, with the configurations it failed under.{more}",
            shown,
        )
    ]


def _sections(frame: pd.DataFrame) -> list[Section]:
    if (frame["error"] != "").all():  # nothing was assigned: nothing to plot, only the errors
        return _errors(frame)
    if is_load_output(frame):
        return _loads(frame) + _errors(frame)
    simulated = "round" in frame.columns
    units = phase_totals(frame) if simulated else frame[frame["error"] == ""]
    sections = _overview(frame, units, simulated)
    if simulated:
        sections += _simulation(frame)
    return sections + _errors(frame)


def _table_html(section: Section) -> str:
    index = section.key != "errors"
    table = section.table.rename(columns=lambda c: str(c).replace("_", " "))  # headers wrap
    return table.to_html(
        float_format=section.number_format.format,
        na_rep="–",
        border=0,
        index=index,
        sparsify=False,
        table_id=f"table-{section.key}",
        classes=section.key,
    )


def _page(frame: pd.DataFrame, sections: list[Section], source: str) -> str:
    kind = "simulation" if "round" in frame.columns else "replay"
    kind = "load simulation" if is_load_output(frame) else kind
    errors = int((frame["error"] != "").sum())
    listed = " (listed <a href='#errors'>below</a>)" if errors else ""
    contents = " · ".join(f"<a href='#{s.key}'>{html.escape(s.title)}</a>" for s in sections)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>kassign report</title>",
        _STYLE,
        "</head><body>",
        f"<h1>kassign {kind} report</h1>",
        (
            f"<p id='summary'>Source: <code>{html.escape(Path(source).name)}</code>; "
            f"{len(frame)} rows, {frame['config'].nunique()} configurations, "
            f"{errors} with an error{listed}.</p>"
        ),
        f"<p>{contents}</p>",
    ]
    for section in sections:
        parts += [
            f"<section id='{section.key}'><h2>{html.escape(section.title)}</h2>",
            f"<p>{html.escape(section.note)}</p>",
            section.svg,
            f"<div class='table'>{_table_html(section)}</div></section>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts)


def build_report(source: str | Path, directory: str | Path) -> Path:
    """Write ``directory/index.html`` (plots inline) from the output folder ``source``."""
    frame = load_output(source)
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    sections = _sections(frame)
    index = target / "index.html"
    index.write_text(_page(frame, sections, str(source)), encoding="utf-8")
    log.info("report: %d rows -> %s (%d sections)", len(frame), index, len(sections))
    return index
