"""``--format table``: an ``AssignResponse`` as a few lines a person can read.

One row per client (process id, rack, threads, task counts, follow-up), its tasks listed under
it, then the report. Only the response is read, so ``assign`` and ``call`` print the same table.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["deadline_text", "format_table", "task_name", "time_and_notes"]

_WIDTH = 100


def task_name(task: pb.TaskId) -> str:
    """Kafka's spelling: ``1_2``, or ``topology__1_2`` inside a named topology."""
    base = f"{task.subtopology}_{task.partition}"
    return f"{task.named_topology}__{base}" if task.named_topology else base


def deadline_text(ms: int) -> str:
    """A follow-up deadline as a UTC time a person reads (issue 17: raw epoch milliseconds);
    ``-`` for none, ``never`` past any calendar (a saturated ``Long.MAX_VALUE``)."""
    if not ms:
        return "-"
    try:
        when = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return "never"
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}Z"


def _task_lines(label: str, tasks: list[pb.TaskId]) -> list[str]:
    if not tasks:
        return []
    text = " ".join(task_name(t) for t in tasks)
    return textwrap.wrap(
        text, width=_WIDTH, initial_indent=f"    {label:<8} ", subsequent_indent=" " * 13
    )


def _client_rows(response: pb.AssignResponse) -> list[str]:
    header = f"{'PROCESS':<36}  {'RACK':<14} {'THREADS':>7} {'ACTIVE':>6} {'STANDBY':>7}  FOLLOW-UP"
    lines = [header]
    for client in response.clients:
        followup = deadline_text(client.followup_rebalance_deadline_ms)
        lines.append(
            f"{client.process_id:<36}  {client.rack_id or '-':<14} {len(client.member_ids):>7} "
            f"{len(client.active_tasks):>6} {len(client.standby_tasks):>7}  {followup}"
        )
        lines += _task_lines("active", list(client.active_tasks))
        lines += _task_lines("standby", list(client.standby_tasks))
    return lines


def _report_lines(response: pb.AssignResponse) -> list[str]:
    r = response.report
    error = pb.AssignmentError.Name(response.error).removeprefix("ASSIGNMENT_ERROR_")
    lines = [
        f"assignor {r.assignor}: {r.tasks} tasks on {r.clients} clients, error {error}",
        (
            f"moved: {r.active_tasks_moved} active, {r.standby_tasks_moved} standby; "
            f"warm-ups {r.warmups}; follow-up rebalance {'yes' if r.followup_scheduled else 'no'}"
        ),
        (
            f"rack-aware {r.rack_aware_strategy or 'none'}: {r.rack_optimisation or '-'}, cross-rack cost "
            f"{r.cross_rack_cost_before} -> {r.cross_rack_cost_after}"
            + (" (solver fallback)" if r.solver_fallback else "")
        ),
    ]
    return lines + time_and_notes(r)


def time_and_notes(report: pb.AssignmentReport | cpb.ConsumerAssignmentReport) -> list[str]:
    """The report's last lines, alike for both services: timings (unless cleared), then notes."""
    lines = []
    if report.total_seconds:
        assign_ms, total_ms = report.assign_seconds * 1000, report.total_seconds * 1000
        lines.append(f"time: assign {assign_ms:.1f} ms, total {total_ms:.1f} ms")
    return lines + [f"note: {n}" for n in report.notes]


def format_table(response: pb.AssignResponse) -> str:
    """The whole table, newline-terminated."""
    return "\n".join(_client_rows(response) + [""] + _report_lines(response)) + "\n"
