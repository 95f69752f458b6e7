"""``kassign shadow-report JOURNAL...``: what kassign would have changed, per group, in shadow mode.

Why: before an operator lets kassign assign, shadow mode (issue 26, docs/shadow.md) records each
rebalance's two answers, Kafka's (which the group got) and kassign's, with their figures. This
command reads those journal lines (``pipeline/shadow_rows.py``) and tells per group how many
rebalances kassign would have changed and each figure's totals, Kafka's against kassign's; with
``--spark`` the same summary comes from a Spark job over many journals (``pipeline/shadow.py``),
with ``--html`` one self-contained page (``shadow_html.py``), with ``--json`` for machines.

Exit codes, for scripts: 0 a report; 1 no shadow line in what was read (after ``--group`` and
the window), said on stderr; 2 bad input (a missing path, a malformed line named by file and
line, a time that is not one).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kassign.cli.table import deadline_text
from kassign.cli.time_window import Window, add_window_options, window_of, window_text
from kassign.pipeline.shadow_rows import ShadowLineError, ShadowRow, read_rows
from kassign.pipeline.shadow_sums import GroupSummary, summarise, totals_of

__all__ = ["Keep", "add_parser", "number", "overall", "run_shadow_report", "summary_lines"]

EXIT_OK, EXIT_NONE, EXIT_INVALID = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Keep:
    """Which rows a report reads: its groups (empty: all) and its window (picklable, for Spark)."""

    groups: frozenset[str] = frozenset()
    window: Window = Window()  # noqa: RUF009 - frozen, so one shared default is safe

    def __call__(self, row: ShadowRow) -> bool:
        return (not self.groups or row.group in self.groups) and (
            not self.window or self.window.holds(row.time_ms)
        )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``shadow-report``."""
    p = subparsers.add_parser(
        "shadow-report",
        help="what kassign would have changed, per group, from shadow mode's journal lines",
        description="Read shadow mode's lines from kassign journals (a folder: DIR and"
        " DIR/consumer; or one .jsonl file) and print, per group, the rebalances kassign would"
        " have changed and each figure, Kafka's answer against kassign's. Exit 1 when no shadow"
        " line is found, 2 on bad input.",
    )
    p.add_argument("journals", nargs="+", metavar="JOURNAL", help="journal folder or .jsonl file")
    p.add_argument(
        "--group", action="append", default=[], metavar="GROUP", help="only this group (repeatable)"
    )
    add_window_options(p, "only rebalances received")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the summaries as JSON on stdout")
    out.add_argument("--html", metavar="OUT", help="also write one self-contained page here")
    p.add_argument(
        "--spark", action="store_true", help="compute on Spark (many journals; no --html)"
    )
    p.add_argument("--master", metavar="URL", help="with --spark: Spark master (default local[*])")
    p.set_defaults(func=run_shadow_report)


def number(value: float | None, *, signed: bool = False) -> str:
    """A figure as the table shows it: whole numbers bare, others to three places at most (no
    trailing zeros), None ``-``."""
    if value is None:
        return "-"
    text = str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")
    return f"+{text}" if signed and value > 0 else text


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def _group_lines(s: GroupSummary) -> list[str]:
    assignors = ", ".join(s.assignors) or "not named"
    span = f"{deadline_text(s.first_ms)} to {deadline_text(s.last_ms)}"
    lines = [
        (
            f"group {s.group} ({s.kind}; Kafka's assignor {assignors}):"
            f" {_count(s.rebalances, 'rebalance')}, {span}"
        ),
        (
            f"  kassign would have changed {s.changed} of {s.compared} compared"
            f" (members differing, summed: {s.differing_members})"
        ),
    ]
    if s.compared < s.rebalances:
        lines.append(f"  {s.rebalances - s.compared} without kassign's answer: not compared")
    width = max(len(f"{f.label} ({f.how})") for f in s.figures)
    lines.append(f"  {'figure':<{width}}  {'Kafka':>9}  {'kassign':>9}  {'difference':>10}")
    lines += [
        f"  {f'{f.label} ({f.how})':<{width}}  {number(f.kafka):>9}  {number(f.kassign):>9}"
        f"  {number(f.difference, signed=True):>10}"
        for f in s.figures
    ]
    return lines


def overall(summaries: Sequence[GroupSummary]) -> dict[str, Any]:
    """All groups together: counts, and each total figure summed (means are per group only)."""
    totals: dict[str, dict[str, float]] = {}  # whole numbers stay int in the JSON
    for s in summaries:
        for f in s.figures:
            if f.how == "total" and f.kafka is not None and f.kassign is not None:
                both = totals.setdefault(f.label, {"kafka": 0, "kassign": 0})
                both["kafka"] += f.kafka
                both["kassign"] += f.kassign
    return {
        "groups": len(summaries),
        "rebalances": sum(s.rebalances for s in summaries),
        "compared": sum(s.compared for s in summaries),
        "changed": sum(s.changed for s in summaries),
        "totals": totals,
    }


def _overall_line(summaries: Sequence[GroupSummary]) -> str:
    o = overall(summaries)
    share = f" ({100 * o['changed'] / o['compared']:.0f}%)" if o["compared"] else ""
    figures = "".join(
        f"; {label} {number(v['kafka'])} -> {number(v['kassign'])}"
        f" ({number(v['kassign'] - v['kafka'], signed=True)})"
        for label, v in o["totals"].items()
    )
    return (
        f"all: {_count(o['groups'], 'group')}, {_count(o['rebalances'], 'rebalance')}, kassign"
        " would have changed"
        f" {o['changed']} of {o['compared']} compared{share}{figures}"
    )


def summary_lines(summaries: Sequence[GroupSummary]) -> list[str]:
    """The report as text: each group's table, then the one line over all groups."""
    lines: list[str] = []
    for s in summaries:
        lines += [*_group_lines(s), ""]
    return [*lines, _overall_line(summaries)]


def _as_json(s: GroupSummary) -> dict[str, Any]:
    data = asdict(s)
    data["figures"] = [{**asdict(f), "difference": f.difference} for f in s.figures]
    return data


def _spark_summaries(args: argparse.Namespace, keep: Keep) -> list[GroupSummary]:
    from kassign.cli.spark_jobs import command_spark
    from kassign.pipeline.progress import command_progress

    with command_progress("shadow-report", started=time.monotonic(), doing="loading") as progress:
        from kassign.pipeline.shadow import shadow_summaries

        with command_spark(args.master, "shadow-report", progress) as spark:
            return shadow_summaries(spark, args.journals, keep)


def _nothing(args: argparse.Namespace, keep: Keep) -> str:
    said = [f" of group(s) {', '.join(sorted(keep.groups))}"] if keep.groups else []
    if keep.window:
        said.append(f" received in {window_text(keep.window)}")
    return f"kassign: no shadow-mode line{''.join(said)} in {' '.join(args.journals)}"


def run_shadow_report(args: argparse.Namespace) -> int:
    if args.spark and args.html:
        print(
            "kassign: --html draws each rebalance: read locally, without --spark", file=sys.stderr
        )
        return EXIT_INVALID
    rows: list[ShadowRow] = []
    try:
        keep = Keep(frozenset(args.group), window_of(args.since, args.until))
        if args.spark:
            summaries = _spark_summaries(args, keep)
        else:
            rows = read_rows(args.journals, keep)
            summaries = [summarise(t) for t in totals_of(rows)]
    except argparse.ArgumentTypeError as exc:
        print(f"kassign: --since/--until: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except (ShadowLineError, FileNotFoundError) as exc:
        print(f"kassign: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if not summaries:
        print(_nothing(args, keep), file=sys.stderr)
        return EXIT_NONE
    if args.json:
        data = {"groups": [_as_json(s) for s in summaries], "all": overall(summaries)}
        sys.stdout.write(json.dumps(data, sort_keys=True, indent=1) + "\n")
        return EXIT_OK
    lines = summary_lines(summaries)
    if args.html is not None:
        from kassign.cli.shadow_html import write_page

        write_page(args.html, summaries, rows, window=keep.window)
        lines.append(f"page: {args.html}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
