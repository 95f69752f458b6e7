"""``--format table`` for ``--kind consumer``: a ``ConsumerAssignResponse`` a person can read.

One row per member (partition and revoked counts), its partitions under it in Kafka's spelling
(``orders-3``), then the report. Only the response is read, so ``assign`` and ``call`` print
the same table.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

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
    return lines + time_and_notes(r)


def format_consumer_table(response: cpb.ConsumerAssignResponse) -> str:
    """The whole table, newline-terminated."""
    return "\n".join(_member_rows(response) + [""] + _report_lines(response)) + "\n"
