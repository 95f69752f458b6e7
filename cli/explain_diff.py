"""``kassign explain --diff``: what changed between two answers, and the change that caused it.

Two requests for the same group (before and after a change of configs or of membership) give two
answers; the diff names the configs that differ, the clients that joined, left or changed, then
each task whose replicas moved between the answers, with the rule of the new placement.
"""

from __future__ import annotations

from kassign.cli.explain_model import (
    CONSUMER,
    GroupView,
    Kind,
    ReplicaView,
    TaskView,
    changed_replicas,
)

__all__ = ["diff_lines"]


def _configs(before: GroupView, after: GroupView) -> list[str]:
    old, new = dict(before.configs), dict(after.configs)
    return [
        f"  {key}: {old.get(key, '-')} -> {new.get(key, '-')}"
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key)
    ]


def _membership(before: GroupView, after: GroupView) -> list[str]:
    old = {c.process_id: c for c in before.clients}
    new = {c.process_id: c for c in after.clients}
    lines = []
    for c in after.clients:
        if c.process_id not in old:
            lines.append(f"  joined  {c.process_id} (rack {c.rack or '-'}, {c.threads} thread(s))")
    for c in before.clients:
        if c.process_id not in new:
            lines.append(f"  left    {c.process_id} (rack {c.rack or '-'})")
    for c in after.clients:
        was = old.get(c.process_id)
        if was is None:
            continue
        changes = [
            f"{what} {a} -> {b}"
            for what, a, b in (
                ("rack", was.rack or "-", c.rack or "-"),
                ("threads", was.threads, c.threads),
                ("tags", _tags(was.tags), _tags(c.tags)),
            )
            if a != b
        ]
        if changes:
            lines.append(f"  changed {c.process_id}: {'; '.join(changes)}")
    return lines


def _tags(tags: tuple[tuple[str, str], ...]) -> str:
    return " ".join(f"{k}={v}" for k, v in tags) or "-"


def _by_client(task: TaskView | None) -> dict[str, ReplicaView]:
    return {} if task is None else {r.process_id: r for r in task.replicas}


def _why(r: ReplicaView) -> str:
    return f" ({r.why})" if r.why else ""


def _task_changes(name: str, old: TaskView | None, new: TaskView | None, active: str) -> list[str]:
    was, now = _by_client(old), _by_client(new)
    lines = []
    old_active = next((p for p, r in was.items() if r.kind is Kind.ACTIVE), None)
    new_active = next((p for p, r in now.items() if r.kind is Kind.ACTIVE), None)
    if old_active != new_active:
        why = _why(now[new_active]) if new_active else ""
        lines.append(f"  {name:<10} {active:<8} {old_active or '-'} -> {new_active or '-'}{why}")
    for pid in sorted(now.keys() - was.keys()):
        if now[pid].kind is not Kind.ACTIVE:
            lines.append(f"  {name:<10} {now[pid].kind.value:<8} + {pid}{_why(now[pid])}")
    for pid in sorted(was.keys() - now.keys()):
        if was[pid].kind is not Kind.ACTIVE:
            lines.append(f"  {name:<10} {was[pid].kind.value:<8} - {pid}")
    for pid in sorted(was.keys() & now.keys()):
        a, b = was[pid], now[pid]
        if a.kind is not b.kind and Kind.ACTIVE not in (a.kind, b.kind):
            lines.append(f"  {name:<10} {a.kind.value} -> {b.kind.value} on {pid}{_why(b)}")
    return lines


def diff_lines(
    before: GroupView,
    after: GroupView,
    *,
    task: str | None = None,
    client: str | None = None,
) -> list[str]:
    """The differences from ``before``'s answer to ``after``'s, optionally about one task or one
    client (tasks that were or are on it)."""
    old = {t.name: t for t in before.tasks}
    new = {t.name: t for t in after.tasks}
    names = list(new) + [n for n in old if n not in new]  # after's order, then the gone
    if task is not None:
        names = [n for n in names if n == task]
    if client is not None:
        names = [n for n in names if client in _by_client(old.get(n)) | _by_client(new.get(n))]
    active = after.words.active
    changes = [line for n in names for line in _task_changes(n, old.get(n), new.get(n), active)]
    unit = after.words.unit
    return [
        f"diff: group {before.group_id or '-'} -> {after.group_id or '-'}",
        "configs:",
        *(_configs(before, after) or ["  unchanged"]),
        "clients:",
        *(_membership(before, after) or ["  unchanged"]),
        (
            f"{unit} changed (in the second answer, not in the first):"
            f" {changed_replicas(before, after)}; by {after.words.task}:"
        ),
        *(changes or ["  none"]),
        _moves(before, after),
        f"{unit} cross-rack: {before.cross_rack()} -> {after.cross_rack()}",
    ]


def _moves(before: GroupView, after: GroupView) -> str:
    """Both answers' moves, each against its own request's previous assignment."""
    a, b = before.moves(), after.moves()
    said = f"{after.words.unit} moved (each answer against its own request's previous assignment):"
    if after.words is CONSUMER:
        return f"{said} {a.stateless_actives} -> {b.stateless_actives}"
    return (
        f"{said} stateful active {a.stateful_actives} -> {b.stateful_actives},"
        f" stateless active {a.stateless_actives} -> {b.stateless_actives},"
        f" standby {a.standbys} -> {b.standbys}, warm-up {a.warmups} -> {b.warmups}"
    )
