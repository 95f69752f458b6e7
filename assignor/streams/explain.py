"""Why each replica went where it went: an assignment explained from its ``Trace``.

Per client its rack, tags and threads; per task its previous owners, the lag of each client
with state for it, and each replica's kind (active, standby, warm-up), the rule that placed it
(the rule of the phase that put it there, ``trace.attribute``) and a one-line reason with this
case's figures; the moves split (``moves.move_counts``). Pure and frozen: the server encodes
it, ``kassign explain`` tells it. Built only when a request asks (docs/explanations.md). Under
``balance`` ``LOAD`` the figures of load (shares of the bound) come from ``explain_load.py``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.explain_load import LoadWords, load_words
from kassign.assignor.streams.lags import is_caught_up
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    KafkaStreamsState,
    ProcessId,
    TaskId,
)
from kassign.assignor.streams.moves import (
    MoveCounts,
    active_moved,
    move_counts,
    previous_owners,
    standby_moved,
)
from kassign.assignor.streams.result import TaskAssignment, TaskType
from kassign.assignor.streams.tags import TagLayout, tag_layout
from kassign.assignor.streams.trace import Pair, Phase, Placed, Rule, Trace, attribute

__all__ = [
    "ClientStory",
    "Explanation",
    "Lag",
    "Placement",
    "ReplicaKind",
    "TaskStory",
    "explain",
]


class ReplicaKind(enum.Enum):
    ACTIVE = "active"
    STANDBY = "standby"
    WARM_UP = "warm-up"


@dataclass(frozen=True, slots=True)
class Lag:
    """One client's lag on a stateful task (-2 running it, -3 unknown)."""

    process_id: ProcessId
    lag: int
    caught_up: bool


@dataclass(frozen=True, slots=True)
class Placement:
    kind: ReplicaKind
    process_id: ProcessId
    rule: Rule
    reason: str
    moved: bool


@dataclass(frozen=True, slots=True)
class TaskStory:
    task: TaskId
    stateful: bool
    previous_active: tuple[ProcessId, ...]
    previous_standby: tuple[ProcessId, ...]
    end_offset_sum: int
    lags: tuple[Lag, ...]
    placements: tuple[Placement, ...]


@dataclass(frozen=True, slots=True)
class ClientStory:
    """A client as the explanation tells it; ``load``: with ``balance`` ``LOAD``, the load of
    its active tasks (its capacity is its threads), else ``None``."""

    process_id: ProcessId
    rack_id: str | None
    tags: tuple[tuple[str, str], ...]
    threads: int
    load: float | None = None


@dataclass(frozen=True, slots=True)
class Explanation:
    clients: tuple[ClientStory, ...]
    tasks: tuple[TaskStory, ...]
    acceptable_recovery_lag: int
    moves: MoveCounts


def explain(state: ApplicationState, assignment: TaskAssignment, trace: Trace) -> Explanation:
    """The explanation of ``assignment`` (of ``state``) from the trace its assignor recorded."""
    words = load_words(state, assignment)
    loads = words.load if words is not None else {}
    clients = tuple(
        ClientStory(
            pid, c.rack_id, tuple(sorted(c.client_tags.items())), c.num_threads, loads.get(pid)
        )
        for pid, c in state.clients.items()
    )
    context = _Context(state, trace, frozenset(assignment.diagnostics.warmup_replicas), words)
    tasks = tuple(context.story(task) for task in sorted(context.tasks(assignment)))
    return Explanation(
        clients, tasks, state.configs.acceptable_recovery_lag, move_counts(state, assignment)
    )


class _Context:
    """Scratch, private to one ``explain``: who held what, and who placed what."""

    def __init__(
        self,
        state: ApplicationState,
        trace: Trace,
        warmups: frozenset[Pair],
        words: LoadWords | None,
    ) -> None:
        self.state = state
        self.words = words  # balance LOAD's figures (issue 25), None under COUNT
        self.wanted = trace.wanted
        self.warmups = warmups  # as move_counts reads them: the placements' marks add up
        self.placed = {k: attribute(trace, k) for k in (TaskType.ACTIVE, TaskType.STANDBY)}
        self.owners = previous_owners(state)
        self.ran = _by_task(state, lambda c: c.previous_active_tasks)
        self.kept = _by_task(state, lambda c: c.previous_standby_tasks)
        self.replicas: dict[TaskId, list[tuple[TaskType, ProcessId]]] = {}
        self.acceptable = state.configs.acceptable_recovery_lag
        self._layout: TagLayout | None = None

    def tasks(self, assignment: TaskAssignment) -> list[TaskId]:
        for target in assignment.assignments:
            for kind, held in (
                (TaskType.ACTIVE, target.active),
                (TaskType.STANDBY, target.standby),
            ):
                for task in held:
                    self.replicas.setdefault(task, []).append((kind, target.process_id))
        return sorted(self.state.tasks.keys() | self.replicas.keys())

    def story(self, task: TaskId) -> TaskStory:
        checkpoint()
        info = self.state.tasks.get(task)
        stateful = info is not None and info.stateful
        end = info.changelog_end_offset_sum if info is not None else 0
        holders = self.replicas.get(task, [])
        ran = self.ran.get(task, ())
        kept = self.kept.get(task, ())
        lags: tuple[Lag, ...] = ()
        if stateful:
            listed = _sorted({*ran, *kept, *(p for _, p in holders)})
            lags = tuple(
                Lag(p, lag, self._caught_up(lag)) for p in listed for lag in [self._lag(task, p)]
            )
        placements = tuple(
            self._placement(task, kind, pid, stateful=stateful)
            for kind, pid in sorted(
                holders, key=lambda h: (h[0] is TaskType.STANDBY, process_key(h[1]))
            )
        )
        return TaskStory(task, stateful, ran, kept, end, lags, placements)

    def _lag(self, task: TaskId, pid: ProcessId) -> int:
        client = self.state.clients.get(pid)
        if client is None:
            return self.state.tasks[task].changelog_end_offset_sum
        try:
            return client.lag_for(task)
        except KeyError:
            return self.state.tasks[task].changelog_end_offset_sum

    def _caught_up(self, lag: int) -> bool:
        return is_caught_up(lag, self.acceptable)

    def _placement(
        self, task: TaskId, kind: TaskType, pid: ProcessId, *, stateful: bool
    ) -> Placement:
        pair: Pair = (task, pid)
        if kind is TaskType.ACTIVE:
            replica = ReplicaKind.ACTIVE
            moved = active_moved(self.owners, task, pid)
        elif pair in self.warmups:
            replica, moved = ReplicaKind.WARM_UP, True
        else:
            replica = ReplicaKind.STANDBY
            moved = standby_moved(self.state.clients.get(pid), task)
        placed = self.placed[kind].get(pair, Placed(Rule.UNSPECIFIED))
        rule = Rule.WARM_UP if replica is ReplicaKind.WARM_UP else placed.rule
        reason = self._reason(task, replica, pid, replace(placed, rule=rule), stateful=stateful)
        if self.words is not None and rule is not Rule.LOAD:
            wanted = self.wanted.get(task)
            active = kind is TaskType.ACTIVE
            reason += self.words.suffix(rule, task, pid, wanted, active=active)
        return Placement(replica, pid, rule, reason, moved)

    def _reason(
        self, task: TaskId, kind: ReplicaKind, pid: ProcessId, placed: Placed, *, stateful: bool
    ) -> str:
        """The rule in a sentence, with this case's figures."""
        lag = _lag_text(self._lag(task, pid)) if stateful else "-"
        took = self._source_text(task, placed.source, stateful=stateful)
        bound = f"acceptable_recovery_lag {self.acceptable}"
        client = self.state.clients.get(pid)
        match placed.rule:
            case Rule.STICKY if client is not None and task in client.previous_active_tasks:
                return f"sticky: ran it before{took}"
            case Rule.STICKY:
                return f"sticky: had its state (lag {lag}){took}"
            case Rule.CAUGHT_UP if kind is ReplicaKind.ACTIVE:
                return f"caught-up: lag {lag} within {bound}{took}"
            case Rule.CAUGHT_UP if self._caught_up(self._lag(task, pid)):
                return f"caught-up: a copy on a caught-up client (lag {lag}, {bound})"
            case Rule.CAUGHT_UP:
                return "caught-up: kept here as a standby when a caught-up client took the active"
            case Rule.BALANCE if client is not None and task in client.previous_active_tasks:
                return f"balance: where balancing tasks per thread put it (it ran it before){took}"
            case Rule.BALANCE:
                return f"balance: where balancing tasks per thread put it{took}"
            case Rule.WARM_UP:
                return f"warm-up: lag {lag} beyond {bound}; restoring to take the active over"
            case Rule.RACK_COST:
                rack = (client.rack_id if client else None) or "-"
                return f"rack cost: KIP-925 put it on rack {rack}, cutting cross-rack traffic{took}"
            case Rule.TAG_SPREAD if self._spread(task, pid):
                return f"tag spread: KIP-708, its tags ({_tags(client)}) differ from the other replicas'"
            case Rule.TAG_SPREAD:
                return (
                    f"tag spread: KIP-708, its tags ({_tags(client)}) repeat another replica's: "
                    "every value of a key was taken, so the least loaded client"
                )
            case Rule.FALLBACK if kind is ReplicaKind.ACTIVE:
                return f"fallback: no client caught up ({bound}); the most caught-up one, lag {lag}{took}"
            case Rule.FALLBACK if placed.phase is Phase.PLACEMENT:
                return (
                    "fallback: tags could not spread this replica; the least loaded client instead"
                )
            case Rule.FALLBACK:
                return f"fallback: no caught-up client was free; the most caught-up one, lag {lag}"
            case Rule.LOAD if self.words is not None:
                return self.words.placed(task, pid, self.ran.get(task, ()))
            case _:
                return f"unspecified: assignor {self.state.configs.assignor!r} records no rules"

    def _spread(self, task: TaskId, pid: ProcessId) -> bool:
        """Whether ``pid`` differs on every tag key from each other client holding ``task``."""
        if self._layout is None:
            self._layout = tag_layout(self.state)
        values = self._layout.values
        mine = values.get(pid, ())
        others = [values.get(p, ()) for _, p in self.replicas.get(task, ()) if p != pid]
        return all(a != b for theirs in others for a, b in zip(mine, theirs, strict=False))

    def _source_text(self, task: TaskId, source: ProcessId | None, *, stateful: bool) -> str:
        """Where the task came from: a client named only if it really held the task before
        this rebalance (issue 27: "taken from ...003 (lag 1000000)" named a client that an
        earlier step of this assignment had put it on, and that never ran it)."""
        if source is None:
            return ""
        owner = self.state.clients.get(source)
        held = owner is not None and (
            task in owner.previous_active_tasks
            or task in owner.previous_standby_tasks
            or task in owner.task_lags
        )
        if not held:
            return "; balanced away from where an earlier step of this assignment put it"
        if not stateful:
            return f"; taken from {source}"
        return f"; taken from {source} (lag {_lag_text(self._lag(task, source))})"


def _tags(client: KafkaStreamsState | None) -> str:
    if client is None:
        return "-"
    if client.client_tags:
        return ", ".join(f"{k}={v}" for k, v in sorted(client.client_tags.items()))
    return f"rack={client.rack_id or '-'}"


def _by_task(
    state: ApplicationState, tasks_of: Callable[[KafkaStreamsState], AbstractSet[TaskId]]
) -> dict[TaskId, tuple[ProcessId, ...]]:
    """Per task, the clients whose ``tasks_of`` holds it, in process order (clients already are)."""
    found: dict[TaskId, list[ProcessId]] = {}
    for pid, client in state.clients.items():
        for task in tasks_of(client):
            found.setdefault(task, []).append(pid)
    return {task: tuple(pids) for task, pids in found.items()}


def _sorted(pids: object) -> tuple[ProcessId, ...]:
    return tuple(sorted(pids, key=process_key))  # type: ignore[call-overload]


def _lag_text(lag: int) -> str:
    if lag == LATEST_OFFSET:
        return "0, running"
    if lag == UNKNOWN_OFFSET_SUM:
        return "unknown"
    return str(lag)
