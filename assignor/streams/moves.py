"""Moves split by what they cost: the one set of definitions the response, the table, the
metrics and the pipeline share (docs/explanations.md).

Four kinds:

- a **stateful active** moved when some client ran it before and the client it is on now did
  not (it restores its state, or promotes a standby); a brand-new task has no owner to move from;
- a **stateless active** likewise: cheap, nothing to restore;
- a **standby** (not a warm-up) moved when its client reported no state for it: it restores the
  changelog from the start;
- a **warm-up** (KIP-441) is an active move under way: each one counts, whatever state its
  client has.

``moved.moved_counts`` keeps the report's two older figures: actives (both kinds together), and
every standby on a client without state (warm-ups included).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, KafkaStreamsState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskAssignment

__all__ = [
    "MOVE_KINDS",
    "MoveCounts",
    "active_moved",
    "move_counts",
    "previous_owners",
    "standby_moved",
]

MOVE_KINDS = ("stateful_active", "stateless_active", "standby", "warmup")
"""The kinds' names, in ``MoveCounts``' field order (metric labels, pipeline columns)."""


@dataclass(frozen=True, slots=True)
class MoveCounts:
    """Moves by kind (see the module docstring for each definition)."""

    stateful_actives: int = 0
    stateless_actives: int = 0
    standbys: int = 0
    warmups: int = 0

    @property
    def actives(self) -> int:
        return self.stateful_actives + self.stateless_actives

    def by_kind(self) -> tuple[tuple[str, int], ...]:
        """``(kind, count)`` in ``MOVE_KINDS`` order (metric labels)."""
        counts = (self.stateful_actives, self.stateless_actives, self.standbys, self.warmups)
        return tuple(zip(MOVE_KINDS, counts, strict=True))


def previous_owners(state: ApplicationState) -> dict[TaskId, set[int]]:
    """Per task, the clients (as ``UUID.int``: hashed in C, UUID's hash is not) that ran it."""
    owners: dict[TaskId, set[int]] = {}
    for pid, client in state.clients.items():
        for task in client.previous_active_tasks:
            owners.setdefault(task, set()).add(pid.int)
    return owners


def active_moved(owners: Mapping[TaskId, AbstractSet[int]], task: TaskId, pid: ProcessId) -> bool:
    """An active moved: some client ran it before, and ``pid`` did not."""
    before = owners.get(task)
    return bool(before) and pid.int not in before  # type: ignore[operator]


def standby_moved(client: KafkaStreamsState | None, task: TaskId) -> bool:
    """A standby moved: its client reported no state for it (an unknown client has none)."""
    return client is None or task not in client.previous_tasks


def move_counts(state: ApplicationState, assignment: TaskAssignment) -> MoveCounts:
    """The four kinds of move; warm-ups are those the assignor named
    (``Diagnostics.warmup_replicas``: the built-in assignors name theirs)."""
    owners = previous_owners(state)
    warmups = set(assignment.diagnostics.warmup_replicas)
    stateful = stateless = standbys = 0
    for target in assignment.assignments:
        checkpoint()
        pid = target.process_id
        known = state.clients.get(pid)
        for task in target.active:
            if active_moved(owners, task, pid):
                if state.is_stateless(task):
                    stateless += 1
                else:
                    stateful += 1
        standbys += sum(
            1 for t in target.standby if (t, pid) not in warmups and standby_moved(known, t)
        )
    return MoveCounts(stateful, stateless, standbys, len(warmups))
