"""A member's (or client's) load against the bound, as ``kassign explain`` tells it (issue 25): a
line of figures, a text bar, and the page's bar with the bound marked.

Why generic: it reads only ``GroupView.load`` and each ``ClientView``'s load and capacity, which
the consumer view fills from the answer's explanation, and the Streams view fills from
``ClientExplanation.load`` (set under balance LOAD). A share is load per unit of
capacity over the bound: 1 is the bound, below which no answer's peak can be.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from kassign.assignor.load.words import amount, share_of_bound
from kassign.cli.explain_model import ClientView, GroupLoad, GroupView
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "CSS",
    "bar_scale",
    "bar_text",
    "figures_html",
    "group_line",
    "group_load",
    "html_bar",
    "load_text",
    "share",
    "text_bar",
]

WIDTH = 24  # a text bar's characters, the bound's mark not counted

CSS = """
#load{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 0}
#load div{background:#e8f0fe;border-radius:6px;padding:.25rem .6rem}
#load dt{display:inline;color:#5a6470;margin-right:.3rem}
#load dd{display:inline;margin:0;font-weight:600}
.load{margin:.1rem 0 .3rem;font-size:12px;color:#5a6470}
.load .bar{position:relative;height:8px;background:#eceff3;border-radius:4px;margin:.15rem 0}
.load .fill{position:absolute;left:0;top:0;bottom:0;background:#1565c0;border-radius:4px}
.load.peak .fill{background:#ef6c00}
.load .bound{position:absolute;top:-3px;bottom:-3px;width:2px;background:#1d232b}
"""


def group_load(report: pb.AssignmentReport | cpb.ConsumerAssignmentReport) -> GroupLoad | None:
    """The report's load figures, None when it has none (balance COUNT)."""
    if not report.HasField("load"):
        return None
    f = report.load
    return GroupLoad(bound=f.bound, peak=f.peak, mean=f.mean, source=f.source)


def share(view: GroupView, client: ClientView) -> float | None:
    """``client``'s load per unit of capacity over the bound; None without load figures."""
    if view.load is None or client.load is None or client.capacity is None:
        return None
    return share_of_bound(client.load, client.capacity, view.load.bound)


def _peak_share(load: GroupLoad) -> float:
    return load.peak / load.bound if load.bound > 0 else 0.0


def bar_scale(load: GroupLoad, shares: Iterable[float]) -> float:
    """A bar's full length, as a share of the bound: room past the bound, the peak and every
    member, so bars of one group compare."""
    return 1.25 * max([1.0, _peak_share(load), *shares])


def bar_text(s: float, scale: float) -> str:
    """``[#########     |     ]``: share ``s`` filled, ``|`` the bound, on a bar of ``scale``."""
    filled = min(WIDTH, round(WIDTH * s / scale))
    cells = "#" * filled + " " * (WIDTH - filled)
    mark = min(WIDTH, round(WIDTH / scale))
    return f"[{cells[:mark]}|{cells[mark:]}]"


def _scale(view: GroupView) -> float:
    shares = [s for c in view.clients if (s := share(view, c)) is not None]
    return 1.0 if view.load is None else bar_scale(view.load, shares)


def group_line(load: GroupLoad) -> str:
    """The group's figures in one line."""
    source = f"; loads from {load.source}" if load.source else ""
    return (
        f"load per unit of capacity: bound {amount(load.bound)}, peak {amount(load.peak)}"
        f" ({_peak_share(load):.2f} of the bound), mean {amount(load.mean)}{source}"
    )


def load_text(view: GroupView, client: ClientView) -> str:
    """``load 13.4 on capacity 2: 0.93 of the bound``, or "" without load figures."""
    s = share(view, client)
    if s is None or client.load is None or client.capacity is None:
        return ""
    return f"load {amount(client.load)} on capacity {amount(client.capacity)}: {s:.2f} of the bound"


def text_bar(view: GroupView, client: ClientView) -> str:
    """``client``'s bar (``bar_text``), "" without figures."""
    s = share(view, client)
    return "" if s is None else bar_text(s, _scale(view))


def html_bar(view: GroupView, client: ClientView) -> str:
    """The page's bar for ``client``: filled to its share, the bound marked; "" without figures."""
    s = share(view, client)
    if s is None or view.load is None:
        return ""
    scale = _scale(view)
    peak = " peak" if s >= _peak_share(view.load) - 1e-9 else ""
    return (
        f'<div class="load{peak}" data-share="{s:.4f}" data-load="{client.load}"'
        f' data-capacity="{client.capacity}"><div class="bar">'
        f'<span class="fill" style="width:{100 * s / scale:.1f}%"></span>'
        f'<span class="bound" style="left:{100 / scale:.1f}%"></span></div>'
        f"{html.escape(load_text(view, client))}</div>"
    )


def figures_html(view: GroupView) -> str:
    """The group's bound, peak, mean and source for the page's header; "" without figures."""
    load = view.load
    if load is None:
        return ""
    shown = [
        ("bound", amount(load.bound)),
        ("peak", f"{amount(load.peak)} ({_peak_share(load):.2f} of the bound)"),
        ("mean", amount(load.mean)),
    ]
    if load.source:
        shown.append(("source", load.source))
    items = "".join(
        f'<div data-load="{name}"><dt>load {name}</dt><dd>{html.escape(text)}</dd></div>'
        for name, text in shown
    )
    return f'<dl id="load" title="per unit of capacity; the bar\'s mark is the bound">{items}</dl>'
