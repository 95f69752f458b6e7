"""``kassign shadow-report --html OUT``: the report as one self-contained page, no network needed.

Per group: its counts, the table of figures (Kafka's answer against kassign's) and, for each
figure, a small inline SVG plot of its value per rebalance, Kafka's line against kassign's, in
call order. The page wears ``explain --html``'s frame (``explain_html.frame``, its header and
counts), so both read alike and both open from a file attached to an incident.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from kassign.cli.explain_html import FRAME_CSS, counts_html, frame
from kassign.cli.shadow_report import number, overall
from kassign.cli.time_window import Window, window_text
from kassign.pipeline.shadow_rows import ShadowRow
from kassign.pipeline.shadow_sums import FigureLine, GroupSummary

__all__ = ["KAFKA_COLOUR", "KASSIGN_COLOUR", "page", "plot", "write_page"]

KAFKA_COLOUR, KASSIGN_COLOUR = "#ef6c00", "#1565c0"
_W, _H, _PAD = 280, 110, 24  # a plot's size and its margin, SVG units

_CSS = """
main{padding:1rem 1.5rem;display:flex;flex-direction:column;gap:1rem}
.group{background:#fff;border:1px solid #d8dce2;border-radius:8px;padding:.75rem 1rem}
.group h2{margin:0 0 .4rem;font-size:1.1rem;overflow-wrap:anywhere}
.group h2 small{font-weight:400;color:#5a6470;font-size:.85rem}
.group dl{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 .6rem}
.group dl div{background:#eef1f5;border-radius:6px;padding:.25rem .6rem}
.group dt{display:inline;color:#5a6470;margin-right:.3rem}
.group dd{display:inline;margin:0;font-weight:600}
table{border-collapse:collapse;margin:.3rem 0 .8rem}
th,td{padding:.2rem .7rem;border-bottom:1px solid #eceff3;text-align:right}
th:first-child,td:first-child{text-align:left}
.better{color:#2e7d32}.worse{color:#c62828}
.plots{display:flex;flex-wrap:wrap;gap:.75rem}
.plots figure{margin:0}
.plots figcaption{font-size:12px;color:#5a6470}
svg.shadow{display:block;background:#fafbfc;border:1px solid #eceff3;border-radius:4px}
.key{display:inline-flex;gap:1rem;color:#5a6470;margin-top:.4rem}
.key i{display:inline-block;width:1.2rem;height:3px;vertical-align:middle;margin-right:.3rem}
"""


def _series(rows: Sequence[ShadowRow], name: str) -> tuple[list[float | None], list[float | None]]:
    """A figure's values per compared rebalance: Kafka's and kassign's (None where unknown)."""
    kept = [r for r in rows if r.compared]

    def value(r: ShadowRow, side: str) -> float | None:
        v = getattr(getattr(r, side), name)
        return None if v is None else float(v)

    return [value(r, "kafka") for r in kept], [value(r, "kassign") for r in kept]


def _points(values: Sequence[float | None], top: float) -> list[tuple[float, float]]:
    n = len(values)
    step = (_W - 2 * _PAD) / max(1, n - 1)
    return [
        (_PAD + i * step, _H - _PAD - (_H - 2 * _PAD) * v / top)
        for i, v in enumerate(values)
        if v is not None
    ]


def plot(label: str, kafka: Sequence[float | None], kassign: Sequence[float | None]) -> str:
    """One figure per rebalance as an inline SVG: x the rebalance (1..n), y from 0 to the most."""
    top = max([v for v in (*kafka, *kassign) if v is not None], default=0.0) or 1.0
    lines = []
    for who, colour, values in (
        ("kafka", KAFKA_COLOUR, kafka),
        ("kassign", KASSIGN_COLOUR, kassign),
    ):
        points = _points(values, top)
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.2"/>' for x, y in points)
        lines.append(
            f'<g data-series="{who}" fill="{colour}" stroke="{colour}">'
            f'<polyline points="{path}" fill="none" stroke-width="1.6"/>{dots}</g>'
        )
    axis = (
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#8a949e"/>'
        f'<text x="2" y="{_PAD - 6}" font-size="10" fill="#5a6470">{number(top)}</text>'
        f'<text x="2" y="{_H - _PAD + 4}" font-size="10" fill="#5a6470">0</text>'
        f'<text x="{_W - _PAD}" y="{_H - 6}" font-size="10" fill="#5a6470"'
        f' text-anchor="end">rebalance {len(kafka)}</text>'
        f'<text x="{_PAD}" y="{_H - 6}" font-size="10" fill="#5a6470">1</text>'
    )
    title = html.escape(label)
    return (
        f'<figure><svg class="shadow" role="img"'
        f' viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" aria-label="{title}">'
        f"<title>{title}</title>{axis}{''.join(lines)}</svg>"
        f"<figcaption>{title} per compared rebalance</figcaption></figure>"
    )


def _row(f: FigureLine) -> str:
    d = f.difference
    tone = "" if not d else (' class="better"' if d < 0 else ' class="worse"')
    if f.name == "min_per_member" and d:  # more on the least loaded member is the better way
        tone = ' class="better"' if d > 0 else ' class="worse"'
    return (
        f'<tr data-figure="{f.name}"><td>{html.escape(f.label)} ({f.how})</td>'
        f"<td>{number(f.kafka)}</td><td>{number(f.kassign)}</td>"
        f"<td{tone}>{number(d, signed=True)}</td></tr>"
    )


def _group(s: GroupSummary, rows: Sequence[ShadowRow]) -> str:
    mine = [r for r in rows if (r.group, r.kind) == (s.group, s.kind)]
    counts = counts_html(
        [
            ("rebalances", s.rebalances),
            ("compared", s.compared),
            ("kassign would have changed", s.changed),
            ("members differing, summed", s.differing_members),
        ]
    )
    table = "".join(_row(f) for f in s.figures)
    drawn = [(f.label, *_series(mine, f.name)) for f in s.figures]
    plots = "".join(  # a figure no rebalance has (max load without loads) is left out
        plot(label, kafka, kassign)
        for label, kafka, kassign in drawn
        if any(v is not None for v in (*kafka, *kassign))
    )
    assignors = html.escape(", ".join(s.assignors) or "not named")
    return (
        f'<section class="group" data-group="{html.escape(s.group)}" data-kind="{s.kind}">'
        f"<h2>group {html.escape(s.group)} <small>{s.kind} · Kafka's assignor {assignors}</small>"
        f"</h2><dl>{counts}</dl>"
        "<table><thead><tr><th>figure</th><th>Kafka</th><th>kassign</th><th>difference</th>"
        f"</tr></thead><tbody>{table}</tbody></table>"
        f'<div class="plots">{plots}</div></section>'
    )


def page(
    summaries: Sequence[GroupSummary],
    rows: Sequence[ShadowRow],
    *,
    window: Window = Window(),  # noqa: B008 - frozen, so one shared default is safe
) -> str:
    """The whole page: the counts over all groups, then each group's table and plots."""
    o = overall(summaries)
    counts = counts_html(
        [
            ("groups", o["groups"]),
            ("rebalances", o["rebalances"]),
            ("compared", o["compared"]),
            ("kassign would have changed", o["changed"]),
            *(
                (f"{label}: Kafka → kassign", f"{number(v['kafka'])} → {number(v['kassign'])}")
                for label, v in o["totals"].items()
            ),
        ]
    )
    span = f" · received in {window_text(window)}" if window else ""
    key = (
        f'<div class="key"><span><i style="background:{KAFKA_COLOUR}"></i>Kafka\'s answer (the'
        f" group's)</span><span><i style=\"background:{KASSIGN_COLOUR}\"></i>kassign's</span></div>"
    )
    content = (
        f"<header><h1>shadow mode: what kassign would have changed <small>{len(summaries)}"
        f' group(s){html.escape(span)}</small></h1><dl id="counts">{counts}</dl>{key}</header>'
        f"<main>{''.join(_group(s, rows) for s in summaries)}</main>"
    )
    return frame("kassign shadow-report", FRAME_CSS + _CSS, "<body>", content)


def write_page(
    out: str | Path,
    summaries: Sequence[GroupSummary],
    rows: Sequence[ShadowRow],
    *,
    window: Window = Window(),  # noqa: B008 - frozen, so one shared default is safe
) -> Path:
    """Write ``page(...)`` to ``out`` (its folder created); returns the path."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(summaries, rows, window=window), encoding="utf-8")
    return path
