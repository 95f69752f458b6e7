"""``--format table`` for ``--kind consumer``: a ``ConsumerAssignResponse`` a person can read.

One row per member (partition and revoked counts), its partitions under it in Kafka's spelling
(``orders-3``), then the report. Only the response is read, so ``assign`` and ``call`` print
the same table. Under balance LOAD the report adds the bound, peak and mean, and with an
explanation (``-v``) each member's load, capacity and share of the bound, with a bar.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from kassign.assignor.load.words import amount, share_of_bound
from kassign.cli.explain_load import bar_scale, bar_text, group_line, group_load
from kassign.cli.table import time_and_notes
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

__all__ = ["format_consumer_table"]

_WIDTH = 100


def _partition_lines(label: str, partitions: Iterable[tuple[str, int]]) -> list[str]:
    text = " ".join(f"{topic}-{partition}" for topic, partition in partitions)
    if not text:
        return []
    return textwrap.wrap(
        text, width=_WIDTH, initial_indent=f"    {label:<11} ", subsequent_indent=" " * 16
    )


def _member_rows(response: cpb.ConsumerAssignResponse) -> list[str]:
    width = max([len("MEMBER"), *(len(m.member_id) for m in response.members)])
    lines = [f"{'MEMBER':<{width}}  {'PARTITIONS':>10} {'REVOKED':>7}"]
    for m in consumer.answers(response):  # either form (issue 24's runs, or v1's lists)
        lines.append(f"{m.member_id:<{width}}  {len(m.partitions):>10} {len(m.revoked):>7}")
        lines += _partition_lines("partitions", m.partitions)
        lines += _partition_lines("revoke", m.revoked)
    return lines


def _report_lines(response: cpb.ConsumerAssignResponse) -> list[str]:
    r = response.report
    kafka = "rack-aware" if r.kafka_rack_aware else "not rack-aware"
    lines = [
        (
            f"assignor {r.assignor}: {r.partitions} partitions on {r.members} members, "
            f"{r.min_partitions_per_member}-{r.max_partitions_per_member} each"
        ),
        (
            f"moved {r.moved_partitions}, revoked {r.revoked_partitions}, "
            f"withheld {r.withheld_partitions}"
        ),
        (
            f"cross-rack partitions {r.cross_rack_partitions_before} -> "
            f"{r.cross_rack_partitions_after}; Kafka {kafka}: {r.kafka_rack_reason or '-'}"
            + (f" (solver fallback: {r.rack_reason})" if r.solver_fallback else "")
        ),
    ]
    load = group_load(r)
    if load is not None:
        lines.append(group_line(load))
    return lines + time_and_notes(r)


def _load_rows(response: cpb.ConsumerAssignResponse) -> list[str]:
    """Each member's load against the bound (balance LOAD, with an explanation), else none."""
    load = group_load(response.report)
    told = [m for m in response.explanation.members if m.HasField("load")]
    if load is None or not told:
        return []
    shares = [share_of_bound(m.load, m.capacity, load.bound) for m in told]
    scale = bar_scale(load, shares)
    width = max([len("MEMBER"), *(len(m.member_id) for m in told)])
    lines = [f"{'MEMBER':<{width}}  {'LOAD':>10} {'CAPACITY':>8} {'OF BOUND':>8}  (| the bound)"]
    for m, s in zip(told, shares, strict=True):
        lines.append(
            f"{m.member_id:<{width}}  {amount(m.load):>10} {amount(m.capacity):>8} {s:>8.2f}"
            f"  {bar_text(s, scale)}"
        )
    return lines + [""]


def format_consumer_table(response: cpb.ConsumerAssignResponse) -> str:
    """The whole table, newline-terminated."""
    rows = _member_rows(response) + [""] + _load_rows(response)
    return "\n".join(rows + _report_lines(response)) + "\n"
