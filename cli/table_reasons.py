"""``kassign -v``'s table: each task's story after the report (issue 17).

Per task: who ran it and who had its state, each client's lag (``*``: caught up), then each
replica with its kind, client and reason (the reason starts with its rule's name).
"""

from __future__ import annotations

import textwrap

from kassign.cli.table import task_name
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["consumer_reason_lines", "lag_text", "reason_lines"]

_KIND = {
    pb.REPLICA_KIND_ACTIVE: "active",
    pb.REPLICA_KIND_STANDBY: "standby",
    pb.REPLICA_KIND_WARM_UP: "warm-up",
}
_WIDTH = 100


def lag_text(lag: pb.CandidateLag) -> str:
    """A client's lag as a person reads it: ``running`` for -2, ``unknown`` for -3."""
    value = {-2: "running", -3: "unknown"}.get(lag.lag, str(lag.lag))
    return f"{lag.process_id} {value}{'*' if lag.caught_up else ''}"


def reason_lines(explanation: pb.Explanation) -> list[str]:
    bound = explanation.acceptable_recovery_lag
    lines = [f"reasons (acceptable_recovery_lag {bound}; lags of clients with state, * caught up)"]
    for story in explanation.tasks:
        lines.append(f"{task_name(story.task)}{'' if story.stateful else ' (stateless)'}")
        history = []
        if story.previous_active:
            history.append("ran on " + ", ".join(story.previous_active))
        if story.previous_standby:
            history.append("state on " + ", ".join(story.previous_standby))
        if history:
            lines += _wrapped("; ".join(history))
        if story.lags:
            lines += _wrapped("lags: " + ", ".join(lag_text(lag) for lag in story.lags))
        for p in story.placements:
            lines += _wrapped(f"{_KIND.get(p.kind, '?'):<8} {p.process_id}  {p.reason}")
    return lines


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, width=_WIDTH, initial_indent="    ", subsequent_indent=" " * 8)


def consumer_reason_lines(explanation: cpb.ConsumerExplanation) -> list[str]:
    """A consumer group's partitions, each with its member (``-``: withheld) and reason."""
    lines = ["reasons (partition, member, previous owners; replicas' racks)"]
    for story in explanation.partitions:
        tp = f"{story.partition.topic}-{story.partition.partition}"
        before = ", ".join(story.previous_owners) or "-"
        racks = ", ".join(story.replica_racks) or "-"
        lines.append(f"{tp}  {story.member_id or '-'}  (owned by {before}; racks {racks})")
        lines += _wrapped(story.reason)
    return lines
