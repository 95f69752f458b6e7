"""``kassign explain --html OUT``: the answer as one self-contained page, no network needed.

Clients are grouped by zone (a client tag) and rack; each replica is a cell coloured by its
sub-topology: actives solid, standbys outlined, warm-ups striped; a dot marks a move, a red dashed
outline a replica reading or writing across racks. Hovering a cell shows its rule; clicking it
shows the task's whole story (``explain_text.task_story``) beside the grid and marks the task's
other replicas. The counts at the top are the answer's, so a test can compare them with it.
Under balance LOAD the header gives the bound, peak and mean, and each client a bar of its load
per unit of capacity with the bound marked (``explain_load.py``).

Why server-side HTML with a few lines of script: the page must open from a file with no network
(operators attach it to incidents), read the same on every run (same request, same bytes), and be
checked by a browser test cell by cell.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from kassign.cli import explain_load
from kassign.cli.explain_model import (
    CONSUMER,
    ClientView,
    GroupView,
    Kind,
    ReplicaView,
    TaskView,
    changed_replicas,
)
from kassign.cli.explain_text import followup_text, task_story

__all__ = ["FRAME_CSS", "counts_html", "frame", "page", "write_page"]

FRAME_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d232b;background:#f6f7f9}
header{padding:1rem 1.5rem;background:#fff;border-bottom:1px solid #d8dce2}
h1{margin:0 0 .5rem;font-size:1.3rem;overflow-wrap:anywhere}
h1 small{font-weight:400;color:#5a6470;font-size:.9rem}
#counts{display:flex;flex-wrap:wrap;gap:.5rem;margin:0}
#counts div{background:#eef1f5;border-radius:6px;padding:.25rem .6rem}
#counts dt{display:inline;color:#5a6470;margin-right:.3rem}
#counts dd{display:inline;margin:0;font-weight:600}
"""
"""The page's frame: body, header, title and the counts under it (``kassign shadow-report``'s
page wears it too)."""

_CSS = (
    FRAME_CSS
    + """.legend{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin-top:.6rem;color:#5a6470;align-items:center}
.legend span{display:inline-flex;align-items:center;gap:.3rem}
.layout{display:grid;grid-template-columns:minmax(0,1fr) 24rem;gap:1rem;padding:1rem 1.5rem}
@media (max-width:900px){.layout{grid-template-columns:minmax(0,1fr)}}
#grid{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start;min-width:0}
.zone{flex:1 1 24rem;min-width:0}
.zone>h2{font-size:1.05rem;margin:.2rem 0 .5rem}
.racks{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-start}
.rack{flex:1 1 20rem;min-width:0;background:#fff;border:1px solid #d8dce2;border-radius:8px;padding:.5rem}
.rack>h3{margin:0 0 .4rem;font-size:.95rem}
.client{border-top:1px solid #eceff3;padding:.4rem 0}
.client h4{margin:0;font:600 12px ui-monospace,monospace;overflow-wrap:anywhere}
.client p{margin:.1rem 0 .3rem;color:#5a6470;font-size:12px;overflow-wrap:anywhere}
.row{display:flex;gap:.4rem;align-items:flex-start;margin:.15rem 0}
.row>.label{flex:0 0 5rem;color:#5a6470;font-size:12px;padding-top:.15rem}
.cells{display:flex;flex-wrap:wrap;gap:3px;min-width:0}
.cell{position:relative;font:11px ui-monospace,monospace;padding:2px 4px;border-radius:3px;
 border:2px solid transparent;cursor:pointer;color:#111;min-width:2.6rem;text-align:center}
.cell.active{background:hsl(var(--h) 60% 62%)}
.cell.standby{background:hsl(var(--h) 60% 93%);border-color:hsl(var(--h) 55% 45%)}
.cell.warm-up{background:repeating-linear-gradient(135deg,hsl(var(--h) 60% 80%) 0 4px,#fff 4px 8px);
 border:2px dotted hsl(var(--h) 55% 40%)}
.cell.withheld{background:#fff;border:2px dashed #8a949e;color:#5a6470}
.cell.moved::after{content:"";position:absolute;top:-3px;right:-3px;width:7px;height:7px;
 border-radius:50%;background:#1d232b;border:1px solid #fff}
.cell.cross-rack{outline:2px dashed #c62828;outline-offset:1px}
.cell.changed{box-shadow:0 0 0 3px #f9a825}
.cell.same{filter:brightness(.85)}
.cell.selected{box-shadow:0 0 0 3px #1565c0}
.swatch{display:inline-block;width:1rem;height:1rem;border-radius:3px}
#detail{position:sticky;top:1rem;align-self:start;background:#fff;border:1px solid #d8dce2;
 border-radius:8px;padding:.75rem;max-height:calc(100vh - 2rem);overflow:auto}
#detail h2{margin:0 0 .3rem;font-size:1rem}
#detail .replica{margin:0 0 .5rem;font-weight:600;overflow-wrap:anywhere}
#detail pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;margin:0}
.notes{color:#5a6470;font-size:12px;margin:.4rem 0 0;padding-left:1.2rem}
"""
)

_JS = """
const stories = JSON.parse(document.getElementById('stories').textContent);
const detail = document.getElementById('detail');
function show(cell) {
  document.querySelectorAll('.cell.selected, .cell.same')
    .forEach(c => c.classList.remove('selected', 'same'));
  document.querySelectorAll('#grid .cell').forEach(c => {
    if (c.dataset.task === cell.dataset.task) c.classList.add('same');
  });
  cell.classList.add('selected');
  detail.querySelector('h2').textContent = document.body.dataset.unit + ' ' + cell.dataset.task;
  detail.querySelector('.replica').textContent = cell.title;
  detail.querySelector('pre').textContent = stories[cell.dataset.task].join('\\n');
}
document.addEventListener('click', e => {
  const cell = e.target.closest('#grid .cell');
  if (cell) show(cell);
});
const chosen = document.body.dataset.task;
if (chosen) {
  const first = [...document.querySelectorAll('#grid .cell')].find(c => c.dataset.task === chosen);
  if (first) { show(first); first.scrollIntoView({block: 'center'}); }
}
"""

_GOLDEN_ANGLE = 137.508


def _hues(view: GroupView) -> dict[str, int]:
    """A hue per sub-topology, far apart for neighbours (the golden angle)."""
    subs = list(dict.fromkeys(t.subtopology for t in view.tasks))
    return {s: round(i * _GOLDEN_ANGLE) % 360 for i, s in enumerate(subs)}


def _title(view: GroupView, task: TaskView, r: ReplicaView) -> str:
    label = view.words.active if r.kind is Kind.ACTIVE else r.kind.value
    parts = [f"{task.name} {label} on {r.process_id}"]
    if r.why:
        parts.append(r.why)
    if r.moved:
        parts.append("moved")
    if r.cross_rack:
        parts.append(f"{r.cross_rack} partition(s) cross-rack")
    return "; ".join(parts)


def _cell(view: GroupView, task: TaskView, r: ReplicaView, hue: int, changed: bool) -> str:
    classes = ["cell", r.kind.value]
    classes += [
        c
        for c, on in (("moved", r.moved), ("cross-rack", r.cross_rack), ("changed", changed))
        if on
    ]
    return (
        f'<button type="button" class="{" ".join(classes)}" style="--h:{hue}"'
        f' data-task="{html.escape(task.name)}" data-kind="{r.kind.value}"'
        f' data-pid="{html.escape(r.process_id)}" data-rule="{html.escape(r.rule)}"'
        f' title="{html.escape(_title(view, task, r))}">{html.escape(task.name)}</button>'
    )


def _withheld(view: GroupView, hues: dict[str, int]) -> str:
    """A consumer group's partitions no member has this round (cooperative), in a row of their own."""
    cells = [
        f'<button type="button" class="cell withheld" style="--h:{hues[t.subtopology]}"'
        f' data-task="{html.escape(t.name)}" data-kind="withheld" data-pid=""'
        f' title="{html.escape(f"{t.name} withheld this round: {t.withheld}")}">'
        f"{html.escape(t.name)}</button>"
        for t in view.tasks
        if t.withheld
    ]
    if not cells:
        return ""
    return (
        '<section class="zone" data-zone="withheld"><h2>withheld this round</h2>'
        f'<div class="rack"><div class="cells">{"".join(cells)}</div></div></section>'
    )


def _client(
    view: GroupView,
    client: ClientView,
    hues: dict[str, int],
    before: set[tuple[str, str, Kind]] | None,
) -> str:
    held = view.held(client.process_id)
    rows = []
    for kind in Kind:
        cells = [
            _cell(
                view,
                t,
                r,
                hues[t.subtopology],
                before is not None and (t.name, r.process_id, r.kind) not in before,
            )
            for t, r in held
            if r.kind is kind
        ]
        label = view.words.active if kind is Kind.ACTIVE else kind.value
        if cells:
            rows.append(
                f'<div class="row"><span class="label">{label} {len(cells)}</span>'
                f'<div class="cells">{"".join(cells)}</div></div>'
            )
    meta = _meta(view, client)
    bar = explain_load.html_bar(view, client)
    return (
        f'<article class="client" data-pid="{html.escape(client.process_id)}">'
        f"<h4>{html.escape(client.process_id)}</h4><p>{html.escape(meta)}</p>{bar}"
        f"{''.join(rows)}</article>"
    )


def _meta(view: GroupView, client: ClientView) -> str:
    if view.words is CONSUMER:
        return f"owned {len(client.previous_active)} before"
    tags = " ".join(f"{k}={v}" for k, v in client.tags) or "no tags"
    followup = followup_text(client.followup_ms, view.now_ms)
    return f"{client.threads} thread(s) · {tags} · follow-up {followup}"


def _zones(view: GroupView, hues: dict[str, int], before: set[tuple[str, str, Kind]] | None) -> str:
    """Zones by name, then racks by name, each holding its clients in process order; clients
    without a zone or a rack come last."""

    def place(c: ClientView) -> tuple[bool, str, bool, str]:
        return (not c.zone, c.zone, not c.rack, c.rack)

    out = [_withheld(view, hues)]
    ordered = sorted(view.clients, key=place)  # stable: process order within a rack
    for zone, in_zone in groupby(ordered, key=lambda c: c.zone):
        racks = []
        for rack, clients in groupby(in_zone, key=lambda c: c.rack):
            body = "".join(_client(view, c, hues, before) for c in clients)
            racks.append(
                f'<section class="rack" data-rack="{html.escape(rack)}">'
                f"<h3>{html.escape('rack ' + rack if rack else 'no rack')}</h3>{body}</section>"
            )
        title = f"zone {zone}" if zone else ("no zone" if any(c.zone for c in view.clients) else "")
        heading = f"<h2>{html.escape(title)}</h2>" if title else ""
        out.append(
            f'<section class="zone" data-zone="{html.escape(zone)}">{heading}'
            f'<div class="racks">{"".join(racks)}</div></section>'
        )
    return "".join(out)


def _consumer_counts(view: GroupView) -> list[tuple[str, int]]:
    replicas = [r for t in view.tasks for r in t.replicas]
    return [
        ("partitions", len(view.tasks)),
        ("members", len(view.clients)),
        ("assigned", len(replicas)),
        ("partitions withheld", sum(1 for t in view.tasks if t.withheld)),
        ("partitions moved", sum(1 for r in replicas if r.moved)),
        ("partitions cross-rack", view.cross_rack()),
    ]


def _counts(view: GroupView, before: GroupView | None) -> str:
    if view.words is CONSUMER:
        counts = _consumer_counts(view)
    else:
        counts = _streams_counts(view)
    if before is not None:
        counts.append((f"{view.words.unit} changed", changed_replicas(before, view)))
    return counts_html(counts)


def counts_html(counts: Iterable[tuple[str, object]]) -> str:
    """The header's counts, each a ``data-count`` item a test can read (no ``<dl>`` around)."""
    return "".join(
        f'<div data-count="{html.escape(name)}"><dt>{html.escape(name)}</dt>'
        f"<dd>{html.escape(str(value))}</dd></div>"
        for name, value in counts
    )


def frame(title: str, css: str, body: str, content: str) -> str:
    """A whole page: ``title`` (escaped here), ``css`` inline, ``body`` the opening tag."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{css}</style></head>"
        f"{body}{content}</body></html>\n"
    )


def _streams_counts(view: GroupView) -> list[tuple[str, int]]:
    replicas = [(t, r) for t in view.tasks for r in t.replicas]
    moves = view.moves()
    return [
        ("tasks", len(view.tasks)),
        ("clients", len(view.clients)),
        *((kind.value, sum(1 for _, r in replicas if r.kind is kind)) for kind in Kind),
        ("replicas moved: stateful active", moves.stateful_actives),
        ("replicas moved: stateless active", moves.stateless_actives),
        ("replicas moved: standby", moves.standbys),
        ("replicas moved: warm-up", moves.warmups),
        ("replicas cross-rack", view.cross_rack()),
    ]


def _legend(view: GroupView, hues: dict[str, int]) -> str:
    family = html.escape(view.words.family)
    subs = "".join(
        f'<span><i class="swatch" style="background:hsl({h} 60% 62%)"></i>{family} {html.escape(s)}</span>'
        for s, h in hues.items()
    )
    kinds = [("active", view.words.active), ("moved active", "moved")]
    kinds += [("cross-rack active", "cross-rack")]
    if view.words is CONSUMER:
        kinds.append(("withheld", "withheld"))
    else:
        kinds[1:1] = [("standby", "standby"), ("warm-up", "warm-up")]
    keys = "".join(
        f'<span><i class="cell {c}" style="--h:210">{name[0]}</i>{name}</span>' for c, name in kinds
    )
    if view.load is not None:
        keys += "<span>bar: load per unit of capacity, | the bound, orange the peak</span>"
    return f'<div class="legend">{keys}{subs}</div>'


def page(view: GroupView, *, before: GroupView | None = None, task: str | None = None) -> str:
    """The whole page; ``before`` (a diff's first answer) rings the replicas it did not have;
    ``task`` (``--task``) opens with that task's story shown."""
    hues = _hues(view)
    was = (
        None
        if before is None
        else {(t.name, r.process_id, r.kind) for t in before.tasks for r in t.replicas}
    )
    stories = {t.name: task_story(view, t.name) for t in view.tasks}
    data = json.dumps(stories, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in view.notes)
    group = html.escape(view.group_id or "-")
    chosen = "" if task is None else f' data-task="{html.escape(task)}"'
    body = f'<body data-unit="{view.words.task}"{chosen}>'
    explained = "" if view.explained else " · no explanation in the answer: rules not told"
    load_css = "" if view.load is None else explain_load.CSS  # a COUNT page keeps its bytes
    content = (
        f"<header><h1>group {group} <small>{len(view.tasks)} {view.words.tasks} · assignor"
        f" {html.escape(view.assignor)}{explained}</small></h1>"
        f'<dl id="counts">{_counts(view, before)}</dl>{explain_load.figures_html(view)}'
        f"{_legend(view, hues)}"
        f'<ul class="notes">{notes}</ul></header>'
        f'<div class="layout"><main id="grid">{_zones(view, hues, was)}</main>'
        f'<aside id="detail"><h2>click a {view.words.task}</h2><p class="replica">where it is'
        " and why show here, then its whole story</p><pre></pre></aside></div>"
        f'<script type="application/json" id="stories">{data}</script>'
        f"<script>{_JS}</script>"
    )
    return frame(f"kassign explain: {view.group_id or '-'}", _CSS + load_css, body, content)


def write_page(
    out: str | Path, view: GroupView, *, before: GroupView | None = None, task: str | None = None
) -> Path:
    """Write ``page(view, ...)`` to ``out`` (its folder created); returns the path."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(view, before=before, task=task), encoding="utf-8")
    return path
