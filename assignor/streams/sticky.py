"""The sticky assignor: tasks stay where they ran, as far as capacity-proportional balance allows.

Kafka's ``LegacyStickyTaskAssignor`` semantics, in one pass and with no follow-up rebalance:

- each client may keep ``threads * (tasks // total threads)`` of its previous actives;
- tasks still open go to a previous standby owner under the same quota;
- the rest, in task order, go to their previous owner unless that client is full (``assigned >=
  threads``) while another has more room, else to the least loaded client that gains a new task
  pair (spreading co-located tasks), else to the least loaded client;
- standbys, replica by replica in task order, go through the same choice among the clients not
  holding the task (so previous standby owners keep theirs and no two clients end up with the
  same task set); with KIP-708 tags or KIP-925 racks configured, the shared tag-aware
  ``standby.place_standby_tasks`` places them instead, which Kafka's legacy assignor lacks;
- with a KIP-925 strategy, ``rack.py`` then trims cross-rack traffic (costs default 1/10, sticky
  over traffic; stateless tasks 1/0), actives before standbys, as Kafka orders it; then actives
  and standbys together (``rack/joint.py``): a task's active and a standby exchange roles where
  that saves more traffic than the two moves cost.

Kafka walks ``HashMap``/``HashSet`` orders in several places; we walk tasks in ``TaskId`` order and
clients in Java UUID order, and where a task was previous active on several clients the last of
them (in that order) is its previous owner, as Kafka's map overwrite leaves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.ordering import sorted_processes
from kassign.assignor.streams.load_plan import (
    fallback_note,
    measured_figures,
    sticky_actives_by_load,
)
from kassign.assignor.streams.model import (
    ApplicationState,
    Balance,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.rack import CostPhase, exchange_roles, trim_actives, trim_standbys
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    TaskAssignment,
    TaskType,
    task_assignment,
)
from kassign.assignor.streams.standby import place_standby_tasks
from kassign.assignor.streams.sticky_ledger import ClientBook, find_client
from kassign.assignor.streams.tags import tag_layout
from kassign.assignor.streams.trace import Trace
from kassign.assignor.streams.trace_sticky import StickyPhases, sticky_trace

__all__ = ["StickyTaskAssignor", "sticky_actives"]


@dataclass(frozen=True, slots=True)
class StickyTaskAssignor:
    """KIP-924 ``TaskAssignor``: sticky actives, shared standby placement, optional rack trim."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return _assign(application_state, explain=False)[0]

    def assign_explained(self, application_state: ApplicationState) -> tuple[TaskAssignment, Trace]:
        """The assignment and the trace of its phases (``api.run(..., explain=True)``)."""
        assignment, phases = _assign(application_state, explain=True)
        return assignment, sticky_trace(application_state, phases) if phases else Trace()


_Map = Mapping[ProcessId, AbstractSet[TaskId]]


def _assign(
    state: ApplicationState, *, explain: bool
) -> tuple[TaskAssignment, StickyPhases | None]:
    active: _Map
    standby: _Map
    sticky: _Map
    load = state.configs.balance is Balance.LOAD
    by_load = sticky_actives_by_load(state, explain=explain) if load else None
    diagnostics = Diagnostics()
    steps = None
    if isinstance(by_load, tuple):  # issue 25: its own rack trim (``load_racks``)
        active, diagnostics, steps = by_load
        sticky = active
        book = ClientBook(state, active)
    else:
        if by_load is not None:
            diagnostics = Diagnostics(solver_fallback=True, notes=(fallback_note(by_load),))
        book = ClientBook(state)
        _assign_actives(state, book)
        active = sticky = book.handed(book.active)  # the standbys below never change the actives
    if rack_aware(state) and not isinstance(by_load, tuple):
        active, more = _optimise_actives(state, active)
        diagnostics = diagnostics.merged(more)
        book = ClientBook(state, active)
    optimised = active
    untagged: frozenset[tuple[TaskId, ProcessId]] | None = None
    if tag_layout(state).tag_aware:
        placement = place_standby_tasks(state, active)
        standby = dict(placement.standby)
        untagged = placement.untagged
        diagnostics = diagnostics.merged(Diagnostics(notes=placement.notes))
    else:
        short = _assign_standbys(state, book)
        standby = book.handed(book.standby)
        if short:
            diagnostics = diagnostics.merged(Diagnostics(notes=(_short_note(state, short),)))
    placed: _Map = standby
    trimmed: _Map = standby
    if (
        state.configs.rack_aware_strategy is not RackAwareStrategy.NONE
        and state.configs.num_standby_replicas > 0
    ):
        standby, more = _optimise_standbys(state, active, standby)
        trimmed = standby
        diagnostics = diagnostics.merged(more)
        if not isinstance(by_load, tuple):  # an exchange moves actives: not by load
            active, standby, joint = _exchange(state, active, standby)
            diagnostics = diagnostics.merged(joint)
    assignment = task_assignment(
        (KafkaStreamsAssignment.of(pid, active[pid], standby[pid]) for pid in state.clients),
        diagnostics,
    )
    if by_load is not None:
        figures = Diagnostics(load=measured_figures(state, assignment))
        assignment = task_assignment(assignment.assignments, diagnostics.merged(figures))
    if not explain:
        return assignment, None
    phases = StickyPhases(
        actives=(sticky, optimised, active),
        standbys=(placed, trimmed, standby),
        untagged=untagged,
        load=steps,
    )
    return assignment, phases


def rack_aware(state: ApplicationState) -> bool:
    return state.configs.rack_aware_strategy is not RackAwareStrategy.NONE


def sticky_actives(state: ApplicationState) -> dict[ProcessId, frozenset[TaskId]]:
    """Every task's active client, sticky to previous owners (see the module docstring)."""
    book = ClientBook(state)
    _assign_actives(state, book)
    return book.frozen(book.active)


def _assign_actives(state: ApplicationState, book: ClientBook) -> None:
    """Previous actives within quota, then previous standbys within quota, then ``_find_client``."""
    quota = len(state.tasks) // max(1, sum(book.capacity.values()))
    owner = _previous_active_owner(state)
    standby_owners = _previous_standby_owners(state)
    open_tasks: list[TaskId] = []
    for task in _in_task_order(state.tasks):
        previous = owner.get(task)
        if previous is not None and book.under_quota(previous, quota):
            book.give(task, previous, TaskType.ACTIVE)
        else:
            open_tasks.append(task)
    remaining: list[TaskId] = []
    for task in open_tasks:
        keeper = next((p for p in standby_owners.get(task, ()) if book.under_quota(p, quota)), None)
        if keeper is None:
            remaining.append(task)
        else:
            book.give(task, keeper, TaskType.ACTIVE)
    for task in remaining:
        chosen = find_client(book, task, owner.get(task), standby_owners.get(task, ()))
        book.give(task, chosen, TaskType.ACTIVE)


def _assign_standbys(state: ApplicationState, book: ClientBook) -> list[TaskId]:
    """Kafka's legacy standby pass: each replica to ``_find_client`` among clients without the task."""
    owner = _previous_active_owner(state)
    standby_owners = _previous_standby_owners(state)
    short: list[TaskId] = []
    for task in _in_task_order(state.stateful_tasks):
        for _ in range(state.configs.num_standby_replicas):
            if book.holder_count(task) >= len(book.tasks):
                short.append(task)
                break
            chosen = find_client(book, task, owner.get(task), standby_owners.get(task, ()))
            book.give(task, chosen, TaskType.STANDBY)
    return short


def _short_note(state: ApplicationState, short: Sequence[TaskId]) -> str:
    replicas = state.configs.num_standby_replicas
    first = ", ".join(str(t) for t in short[:5])
    return f"{len(short)} task(s) got fewer than {replicas} standby replica(s): not enough clients (first: {first})"


def _in_task_order(tasks: Iterable[TaskId]) -> list[TaskId]:
    """Tasks in ``TaskId`` order, whatever order the state's mappings came in."""
    return sorted(tasks)


def _previous_active_owner(state: ApplicationState) -> dict[TaskId, ProcessId]:
    owner: dict[TaskId, ProcessId] = {}
    for pid in sorted_processes(state.clients):
        for task in state.clients[pid].previous_active_tasks:
            owner[task] = pid
    return owner


def _previous_standby_owners(state: ApplicationState) -> dict[TaskId, tuple[ProcessId, ...]]:
    owners: dict[TaskId, list[ProcessId]] = {}
    for pid in sorted_processes(state.clients):
        for task in state.clients[pid].previous_standby_tasks:
            owners.setdefault(task, []).append(pid)
    return {task: tuple(pids) for task, pids in owners.items()}


def _optimise_actives(
    state: ApplicationState, active: Mapping[ProcessId, AbstractSet[TaskId]]
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    """Stateful and stateless actives in one flow, each client's total kept.

    Kafka trims the two kinds apart, so each client keeps the split of stateful and stateless
    tasks its sticky placement happened to give it. One flow keeps only what the sticky
    assignor balances (tasks per client) and lets a stateless task trade places with a stateful
    one. A stateless task has no state (``holds_state``), so it moves for any traffic saved, as
    Kafka's 1/0 stateless costs let it; a stateful one pays ``non_overlap_cost`` to leave a
    client with its state.
    """
    tasks = _in_task_order(state.tasks)
    result, diagnostics = trim_actives(state, tasks, active, CostPhase.STICKY)
    return {pid: frozenset(result.get(pid, ())) for pid in state.clients}, diagnostics


def _optimise_standbys(
    state: ApplicationState,
    active: Mapping[ProcessId, AbstractSet[TaskId]],
    standby: Mapping[ProcessId, AbstractSet[TaskId]],
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]:
    result, diagnostics = trim_standbys(state, active, standby, CostPhase.STICKY)
    return {pid: frozenset(result.get(pid, ())) for pid in state.clients}, diagnostics


def _exchange(
    state: ApplicationState, active: _Map, standby: _Map
) -> tuple[_Map, _Map, Diagnostics]:
    """Exchange active and standby roles where the traffic strictly drops: an exchange moves no
    state, so it pays no ``non_overlap_cost`` here (``rack.exchange_roles``)."""
    outcome = exchange_roles(state, active, standby, CostPhase.STICKY)
    if isinstance(outcome, str) or not outcome.exchanged:
        return active, standby, Diagnostics()
    note = (
        f"rack: {outcome.exchanged} tasks exchanged active and standby roles, "
        f"cross-rack partitions {-outcome.saved:+d}"
    )
    return (
        outcome.active,
        outcome.standby,
        Diagnostics(cross_rack_cost_after=-outcome.saved, notes=(note,)),
    )
