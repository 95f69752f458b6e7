"""``kassign explain``'s words: a task's story, a client's story, and the group in a few lines.

Each story reads in the order a rebalance happens: what the clients reported before (previous
owners, lags), where each replica went now and by which rule, then what comes next (a follow-up
rebalance, as a time and as a duration from the request's time). Under balance LOAD each
member's load stands beside its count, against the bound (``explain_load.py``).
"""

from __future__ import annotations

from kassign.assignor.load.words import amount
from kassign.cli.explain_load import group_line, load_text, text_bar
from kassign.cli.explain_model import (
    CONSUMER,
    ClientView,
    GroupView,
    Kind,
    ReplicaView,
    TaskView,
    lag_text,
)
from kassign.cli.table import deadline_text

__all__ = ["client_story", "duration_text", "followup_text", "group_summary", "task_story"]

_LISTED = 12  # tasks named in a summary line before "and N more"


def duration_text(ms: int) -> str:
    """A span a person reads: ``2 h 5 min``, ``10 min 0 s``, ``1.5 s``, ``250 ms``."""
    ms = abs(ms)
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min"
    return f"{hours // 24} d {hours % 24} h"


def followup_text(deadline_ms: int, now_ms: int) -> str:
    """A follow-up deadline as a UTC time and how far it is from the request's time."""
    when = deadline_text(deadline_ms)
    if when in ("-", "never"):
        return "none" if when == "-" else "never (no deadline)"
    delta = deadline_ms - now_ms
    return (
        f"{when} ({'in ' + duration_text(delta) if delta >= 0 else duration_text(delta) + ' ago'})"
    )


def _listed(names: tuple[str, ...] | list[str]) -> str:
    if not names:
        return "-"
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return " ".join(names[:_LISTED]) + more


def _where(view: GroupView, pid: str) -> str:
    client = view.client(pid)
    place = [f"rack {client.rack}" if client.rack else "no rack"]
    if client.zone:
        place.append(f"zone {client.zone}")
    return f"{pid} ({', '.join(place)})"


def _load_suffix(view: GroupView, client: ClientView) -> str:
    """``, load 13.4 on capacity 2: 0.93 of the bound [####|  ]``, or "" under COUNT."""
    text = load_text(view, client)
    return f", {text} {text_bar(view, client)}" if text else ""


def _load_lines(view: GroupView) -> list[str]:
    return [group_line(view.load)] if view.load is not None else []


def _marks(task: TaskView, r: ReplicaView) -> list[str]:
    """Whether the replica stayed or moved (the answer's definitions), and what crosses racks."""
    if r.kind is Kind.WARM_UP:
        marks = ["move under way"]
    elif r.moved:
        marks = ["moved"]
    elif r.kind is Kind.ACTIVE:
        marks = ["kept" if task.previous_active else "new owner, none before"]
    else:
        marks = ["had state"]
    if r.cross_rack:
        marks.append(f"{r.cross_rack} partition(s) cross-rack")
    return marks


def _label(view: GroupView, kind: Kind) -> str:
    return view.words.active if kind is Kind.ACTIVE else kind.value


def _replica_line(view: GroupView, task: TaskView, r: ReplicaView) -> str:
    where = _where(view, r.process_id)
    line = f"  {_label(view, r.kind):<8} on {where} [{', '.join(_marks(task, r))}]"
    if r.why:
        line += f"\n           why: {r.why}"
    elif not view.explained:
        line += "\n           rule: not told (the answer carries no explanation)"
    return line


def _partition_story(view: GroupView, task: TaskView) -> list[str]:
    """A consumer group's partition: who owned it, who has it now and why."""
    lines = [f"partition {task.name}: topic {task.subtopology}"]
    lines += [f"  {what}" for _, what in task.partitions]
    if task.load is not None:
        lines.append(f"  load {amount(task.load)}")
    lines += ["before:", f"  owned by {', '.join(task.previous_active) or 'no member'}", "now:"]
    if task.withheld:
        lines.append(f"  withheld this round: {task.withheld}")
    return lines + [_replica_line(view, task, r) for r in task.replicas]


def task_story(view: GroupView, name: str) -> list[str]:
    """How one task (a consumer group's partition) got where it is."""
    task = view.task(name)
    if view.words is CONSUMER:
        return _partition_story(view, task)
    kind = "stateful" if task.stateful else "stateless"
    head = f"task {task.name}: {kind}, sub-topology {task.subtopology}"
    if task.stateful:
        head += f", changelog end offset sum {task.end_offset_sum:,}"
    lines = [head]
    lines += [f"  partition {p}: {what}" for p, what in task.partitions]
    lines.append("before:")
    lines.append(f"  active on {', '.join(task.previous_active) or 'no client (new or orphaned)'}")
    if task.previous_standby:
        lines.append(f"  state on {', '.join(task.previous_standby)} (standby or left over)")
    if task.stateful:
        lines.append(f"  lags (caught up within {view.acceptable_recovery_lag:,}):")
        lines += [
            f"    {pid}: {lag_text(lag, view.acceptable_recovery_lag)}" for pid, lag in task.lags
        ]
        lines.append(f"    any other client: no state ({task.end_offset_sum:,} behind)")
    lines.append("now:")
    lines += [_replica_line(view, task, r) for r in task.replicas]
    followups = sorted(
        {r.process_id for r in task.replicas if view.client(r.process_id).followup_ms}
    )
    for pid in followups:
        lines.append(
            f"next: {pid} follow-up {followup_text(view.client(pid).followup_ms, view.now_ms)}"
        )
    return lines


def _held(view: GroupView, pid: str, kind: Kind) -> list[tuple[TaskView, ReplicaView]]:
    return [(t, r) for t, r in view.held(pid) if r.kind is kind]


def _client_head(view: GroupView, client: ClientView) -> list[str]:
    load = [f"  {text} {text_bar(view, client)}" for text in [load_text(view, client)] if text]
    if view.words is CONSUMER:
        return [
            f"member {_where(view, client.process_id)}",
            *load,
            "before:",
            f"  owned   {_listed(client.previous_active)}",
            "now:",
        ]
    tags = " ".join(f"{k}={v}" for k, v in client.tags) or "-"
    return [
        f"client {_where(view, client.process_id)}: {client.threads} thread(s), tags {tags}",
        f"  members {_listed(list(client.members))}",
        *load,
        "before:",
        f"  active  {_listed(client.previous_active)}",
        f"  state   {_listed(client.previous_standby)}",
        "now:",
    ]


def _lost(view: GroupView, client: ClientView) -> list[str]:
    """What the client ran before and does not now, and where it went."""
    now_active = {t.name for t, _ in _held(view, client.process_id, Kind.ACTIVE)}
    lines = []
    for name in client.previous_active:
        if name in now_active:
            continue
        task = view.task(name)
        active = next((r for r in task.replicas if r.kind is Kind.ACTIVE), None)
        where = f"now on {active.process_id}" if active else f"withheld: {task.withheld}"
        lines.append(f"  lost     {name:<10} {where}")
    return lines


def client_story(view: GroupView, pid: str) -> list[str]:
    """What one client (a consumer group's member) had, got and lost, each with its reason."""
    client = view.client(pid)
    lines = _client_head(view, client)
    for kind in Kind:
        for task, r in _held(view, pid, kind):
            why = r.why
            if r.moved and kind is Kind.ACTIVE and task.previous_active:
                why = f"from {', '.join(task.previous_active)}; {why}".rstrip("; ")
            marks = ", ".join(_marks(task, r))
            lines.append(f"  {_label(view, kind):<8} {task.name:<10} [{marks}] {why}".rstrip())
    lines += _lost(view, client)
    if view.words is not CONSUMER:
        lines.append(f"next: follow-up {followup_text(client.followup_ms, view.now_ms)}")
    return lines


def _consumer_summary(view: GroupView) -> list[str]:
    withheld = [t.name for t in view.tasks if t.withheld]
    replicas = [(t, r) for t in view.tasks for r in t.replicas]
    moved = [t.name for t, r in replicas if r.moved]
    lines = [
        (
            f"group {view.group_id or '-'}: {len(view.tasks)} partitions on {len(view.clients)}"
            f" members, assignor {view.assignor}"
        ),
        f"assigned: {len(replicas)}, withheld this round: {len(withheld)}",
        f"partitions moved: {len(moved)} to another member, {len(withheld)} withheld",
        f"partitions cross-rack: {view.cross_rack()}",
        *_load_lines(view),
    ]
    lines += [
        f"  {_where(view, c.process_id)}: {len(view.held(c.process_id))} partition(s)"
        + _load_suffix(view, c)
        for c in view.clients
    ]
    lines += [f"partitions moved: {_listed(moved)}", f"partitions withheld: {_listed(withheld)}"]
    return (
        lines
        + [f"note: {n}" for n in view.notes]
        + ["explain one: --task PARTITION (e.g. orders-3) or --client MEMBER_ID"]
    )


def group_summary(view: GroupView) -> list[str]:
    """The group at a glance: clients by rack, moves by kind, the tasks that moved."""
    if view.words is CONSUMER:
        return _consumer_summary(view)
    moves = view.moves()
    counts = {
        kind: sum(1 for t in view.tasks for r in t.replicas if r.kind is kind) for kind in Kind
    }
    lines = [
        (
            f"group {view.group_id or '-'}: {len(view.tasks)} tasks on {len(view.clients)} clients,"
            f" assignor {view.assignor}"
        ),
        f"placed: {counts[Kind.ACTIVE]} active, {counts[Kind.STANDBY]} standby,"
        f" {counts[Kind.WARM_UP]} warm-up"
        + ("" if view.explained else " (warm-ups not told apart: no explanation)"),
        (
            f"replicas moved (against the previous assignment): {moves.stateful_actives} stateful"
            f" active, {moves.stateless_actives} stateless active, {moves.standbys} standby,"
            f" {moves.warmups} warm-up"
        ),
        (
            "replicas cross-rack (a partition with no replica in the client's rack):"
            f" {view.cross_rack()}"
        ),
        *_load_lines(view),
    ]
    for client in view.clients:
        lines.append(
            f"  {_where(view, client.process_id)}: {len(_held(view, client.process_id, Kind.ACTIVE))}"
            f" active, follow-up {followup_text(client.followup_ms, view.now_ms)}"
            + _load_suffix(view, client)
        )
    moved = [t.name for t in view.tasks for r in t.replicas if r.moved and r.kind is Kind.ACTIVE]
    lines.append(f"tasks whose active moved: {_listed(moved)}")
    lines += [f"note: {n}" for n in view.notes]
    lines.append("explain one: --task NAME or --client PROCESS_ID")
    return lines
