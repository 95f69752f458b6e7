"""``--format table``: an ``AssignResponse`` as a few lines a person can read.

One row per client (process id, rack, threads, task counts, follow-up), its tasks listed under
it, then the report. Only the response is read, so ``assign`` and ``call`` print the same table.
With an explanation in the response (``kassign -v``, or ``--format table``, which asks for one),
each client's tags are listed and the moves are split by kind (docs/explanations.md);
``reasons=True`` adds each task's story (``table_reasons.py``).
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["deadline_text", "format_table", "moves_text", "task_name", "time_and_notes"]

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


def _warm_ups(response: pb.AssignResponse) -> set[tuple[str, str]]:
    """(process id, task) of each KIP-441 warm-up the explanation names: the answer lists them
    among the standbys (Kafka's wire has no other place), but they are active moves under way,
    and the table shows them as such (issue 27). Empty without an explanation."""
    return {
        (placement.process_id, task_name(task.task))
        for task in response.explanation.tasks
        for placement in task.placements
        if placement.kind == pb.REPLICA_KIND_WARM_UP
    }


def _client_rows(response: pb.AssignResponse) -> list[str]:
    header = (
        f"{'PROCESS':<36}  {'RACK':<14} {'THREADS':>7} {'ACTIVE':>6} {'STANDBY':>7} "
        f"{'WARM-UP':>7}  FOLLOW-UP"
    )
    lines = [header]
    warm = _warm_ups(response)
    for client in response.clients:
        followup = deadline_text(client.followup_rebalance_deadline_ms)
        standbys: list[pb.TaskId] = []
        warm_ups: list[pb.TaskId] = []
        for task in client.standby_tasks:
            is_warm_up = (client.process_id, task_name(task)) in warm
            (warm_ups if is_warm_up else standbys).append(task)
        lines.append(
            f"{client.process_id:<36}  {client.rack_id or '-':<14} {len(client.member_ids):>7} "
            f"{len(client.active_tasks):>6} {len(standbys):>7} {len(warm_ups):>7}  {followup}"
        )
        lines += _tag_lines(response, client.process_id)
        lines += _task_lines("active", list(client.active_tasks))
        lines += _task_lines("standby", standbys)
        lines += _task_lines("warm-up", warm_ups)
    return lines


def _tag_lines(response: pb.AssignResponse, process_id: str) -> list[str]:
    """The client's KIP-708 tags, when the response explains itself (issue 17)."""
    for client in response.explanation.clients:
        if client.process_id == process_id and client.tags:
            text = " ".join(f"{t.key}={t.value}" for t in client.tags)
            return [f"    {'tags':<8} {text}"]
    return []


def moves_text(report: pb.AssignmentReport) -> str:
    """The report's moves: split by kind when it carries the split (one definition each,
    docs/explanations.md), else its two older counts."""
    if report.HasField("moves"):
        m = report.moves
        return (
            f"moved: {m.stateful_actives} stateful active, {m.stateless_actives} stateless active, "
            f"{m.standbys} standby, {m.warmups} warm-up"
        )
    return f"moved: {report.active_tasks_moved} active, {report.standby_tasks_moved} standby; warm-ups {report.warmups}"


def _report_lines(response: pb.AssignResponse) -> list[str]:
    r = response.report
    error = pb.AssignmentError.Name(response.error).removeprefix("ASSIGNMENT_ERROR_")
    lines = [
        f"assignor {r.assignor}: {r.tasks} tasks on {r.clients} clients, error {error}",
        f"{moves_text(r)}; follow-up rebalance {'yes' if r.followup_scheduled else 'no'}",
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


def format_table(response: pb.AssignResponse, *, reasons: bool = False) -> str:
    """The whole table, newline-terminated; ``reasons``: each task's explanation after it."""
    lines = _client_rows(response) + [""] + _report_lines(response)
    if reasons and response.HasField("explanation"):
        from kassign.cli.table_reasons import reason_lines

        lines += [""] + reason_lines(response.explanation)
    return "\n".join(lines) + "\n"
