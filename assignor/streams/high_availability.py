"""The KIP-441 high-availability assignor: balanced, but never at the price of a long restore.

Kafka's ``HighAvailabilityTaskAssignor``, phase by phase (``assign`` reads as this list):

1. stateful actives: round-robin over clients in process order, balanced per thread
   (``balance.py``), then rack optimisation (KIP-925) when a strategy is set;
2. standbys: ``num_standby_replicas`` per stateful task (``standby.py``: least loaded or
   KIP-708 tag aware), balanced per thread among clients with the same tags, rack optimised;
3. KIP-441 movements (``movement.py``): an active whose balanced client is not caught up goes
   to a caught-up (else the most caught-up) client, the balanced client warms up;
4. standby movements, the same for standbys, sharing the ``max_warmup_replicas`` budget;
5. with a KIP-925 strategy, actives and standbys together (``rack/joint.py``): a task's active
   and one of its standbys on a caught-up client exchange roles where that lowers the cross-rack
   cost; counts, tag spread, warm-ups and the follow-up decision stay as they are;
6. stateless actives, one at a time to the client with the fewest actives per thread, rack
   optimised;
7. a follow-up rebalance at ``now_ms + probing_rebalance_interval_ms`` (at most Java's
   ``Long.MAX_VALUE``) on every client when any movement was planned, so warm-ups can take over
   once caught up (KIP-441 probing).

Once the group is balanced and caught up no movement is planned, no follow-up is asked for,
and the same input gives the same output: the assignment converges and then stays put.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.balance import MoveAllowed, balance_over_threads, round_robin
from kassign.assignor.streams.holders import compact, picked
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import (
    ApplicationState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
)
from kassign.assignor.streams.movement import (
    ActiveMoves,
    StandbyMoves,
    move_active_tasks,
    move_standby_tasks,
)
from kassign.assignor.streams.rack import (
    CostPhase,
    measured_holdings_cost,
    trim_actives,
    trim_standbys,
)
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    TaskAssignment,
    followup_deadline,
    task_assignment,
)
from kassign.assignor.streams.standby import named_placement, place_standby_indexed
from kassign.assignor.streams.tags import tag_layout
from kassign.assignor.streams.trace import Trace
from kassign.assignor.streams.trace_ha import HaPhases, StandbyPhases, ha_trace

if TYPE_CHECKING:
    from kassign.assignor.streams.rack.replicas import RackTables

__all__ = ["HighAvailabilityTaskAssignor", "assign_high_availability", "explain_high_availability"]

_Holdings = list[set[int]]
"""Per client index, a set of task indices: the scratch form of one kind of assignment."""


class HighAvailabilityTaskAssignor:
    """The default assignor (KIP-441); registered as ``high_availability``.

    - actives only on caught-up clients (lag <= ``acceptable_recovery_lag``), else the most
      caught-up one;
    - balanced by tasks per thread, standbys on other clients, warm-ups to move toward balance;
    - deterministic: clients in Java UUID order, tasks in ``TaskId`` order.
    """

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return assign_high_availability(application_state)

    def assign_explained(self, application_state: ApplicationState) -> tuple[TaskAssignment, Trace]:
        """The assignment and the trace of its phases (``api.run(..., explain=True)``)."""
        return explain_high_availability(application_state)


@dataclass(frozen=True, slots=True)
class _Layout:
    """Index space, built once: clients in process order, stateful and stateless tasks sorted."""

    clients: tuple[ProcessId, ...]
    capacities: tuple[int, ...]
    stateful: tuple[TaskId, ...]
    stateless: tuple[TaskId, ...]
    numbers: tuple[int, ...]
    """``0..len(stateful)-1``, one int object each, shared by every holding (issue 16: a
    position made afresh for each holding costs 28 bytes each time)."""

    @staticmethod
    def of(state: ApplicationState) -> _Layout:
        clients = tuple(sorted(state.clients, key=process_key))
        # a client always has a consumer; guard anyway so a load is never a division by zero
        capacities = tuple(max(1, state.clients[c].num_threads) for c in clients)
        stateful = tuple(sorted(state.stateful_tasks))
        stateless = tuple(sorted(state.stateless_tasks))
        return _Layout(clients, capacities, stateful, stateless, tuple(range(len(stateful))))

    def to_map(
        self, holdings: Sequence[Iterable[int]], tasks: Sequence[TaskId]
    ) -> dict[ProcessId, frozenset[TaskId]]:
        return {
            c: frozenset(tasks[t] for t in ts) for c, ts in zip(self.clients, holdings, strict=True)
        }

    def from_map(
        self, assignment: Mapping[ProcessId, AbstractSet[TaskId]], tasks: Sequence[TaskId]
    ) -> _Holdings:
        # One index for the call, let go after it (bisecting each task cost more: issue 24);
        # its values are the layout's shared ints (issue 16).
        number = dict(zip(tasks, self.numbers, strict=True))
        return [compact(map(number.__getitem__, assignment.get(c, ()))) for c in self.clients]


def _settled(
    held: _Holdings, balanced: Sequence[list[int]], before: Sequence[list[int]]
) -> _Holdings:
    """Each client's holdings after balancing: the set ``balance_over_threads`` kept for a
    client it left as it was (most of them, and every one of a fresh group), a compact set of
    the new list for the others (issue 24: not a second set of every task)."""
    return [h if b == a else compact(b) for h, b, a in zip(held, balanced, before, strict=True)]


def assign_high_availability(state: ApplicationState) -> TaskAssignment:
    """The whole HA assignment of ``state``; see the module docstring for the phases."""
    return _assign(state, explain=False)[0]


def explain_high_availability(state: ApplicationState) -> tuple[TaskAssignment, Trace]:
    """The same assignment, and the trace of its phases (``trace.py``) for an explanation."""
    assignment, trace = _assign(state, explain=True)
    return assignment, trace or Trace()


def _assign(state: ApplicationState, *, explain: bool) -> tuple[TaskAssignment, Trace | None]:
    if not state.clients:
        return task_assignment(()), None
    layout = _Layout.of(state)
    tables = _rack_tables(state, layout)
    active, active_diagnostics, balanced = _stateful_actives(state, layout, tables)
    standby, standby_diagnostics, standby_phases = _standbys(
        state, layout, active, tables, keep=explain
    )
    index = _catch_up_index(state, layout)
    # Only a rack-aware pass (``_measured``) or a trace reads the holdings before movements
    # again; otherwise the movements take them over (issue 16: no copy of every task).
    keep = explain or _rack_aware(state)
    moved, copied = _movements(state, layout, index, active, standby, keep=keep)
    warmups = _warmups(moved, copied)
    final_active, final_standby, exchanged = _exchange(
        state, layout, index, (moved.active, copied.standby), warmups, tables
    )
    if _rack_aware(state):
        exchanged = _measured(
            state, layout, (active, standby), (moved.active, copied.standby), exchanged, tables
        )
    stateless, stateless_diagnostics, stateless_balanced = _stateless_actives(
        state, layout, final_active
    )
    movements = moved.movements + copied.movements
    warmup_pairs = _warmup_pairs(layout, warmups)
    diagnostics = (
        Diagnostics(
            warmups=len(warmup_pairs),
            notes=_movement_notes(moved.movements, copied.movements, len(warmup_pairs)),
            warmup_replicas=warmup_pairs,
        )
        .merged(active_diagnostics)
        .merged(standby_diagnostics)
        .merged(exchanged)
        .merged(stateless_diagnostics)
    )
    interval = state.configs.probing_rebalance_interval_ms
    deadline = followup_deadline(state.now_ms, interval) if movements else None
    assignment = task_assignment(
        (
            _client_assignment(
                client,
                layout.stateful,
                (final_active[i], final_standby[i]),
                stateless[client],
                deadline,
            )
            for i, client in enumerate(layout.clients)
        ),
        diagnostics,
    )
    if not explain:
        return assignment, None
    phases = HaPhases(
        actives=(balanced, active, moved.active, final_active),
        standby_placed=standby_phases,
        standbys=(standby, moved.standby, copied.standby, final_standby),
        stateless=(stateless_balanced, stateless),
    )
    return assignment, ha_trace(
        state, phases, clients=layout.clients, stateful=layout.stateful, index=index
    )


def _client_assignment(
    client: ProcessId,
    stateful: Sequence[TaskId],
    held: tuple[AbstractSet[int], AbstractSet[int]],
    stateless: AbstractSet[TaskId],
    deadline: int | None,
) -> KafkaStreamsAssignment:
    """``KafkaStreamsAssignment.of`` from positions: ``stateful`` is sorted, so sorting the
    positions sorts the ids (ints compare faster than ``TaskId`` tuples; issue 24)."""
    checkpoint()
    active, standby = (picked(stateful, sorted(ts)) for ts in held)
    if stateless:
        active = tuple(sorted(active + tuple(stateless)))
    return KafkaStreamsAssignment(client, active, standby, deadline)


def _warmups(moved: ActiveMoves, copied: StandbyMoves) -> list[frozenset[int]]:
    """Per client, every warm-up it holds: the active movements' and the standby movements'
    kept lagging copies (never the same pair: standby movements skip warm-ups). The joint stage
    must keep them all where they are: a warm-up it moved would never catch up, and the next
    rebalance would plan it again, for ever."""
    warm = [set(ws) for ws in moved.warmups]
    for task, client in copied.kept:
        warm[client].add(task)
    return [frozenset(ws) for ws in warm]


def _warmup_pairs(
    layout: _Layout, warmups: Sequence[AbstractSet[int]]
) -> tuple[tuple[TaskId, ProcessId], ...]:
    """Every warm-up replica (``_warmups``) by name (``Diagnostics.warmup_replicas``), sorted
    by task."""
    return tuple(
        sorted((layout.stateful[t], layout.clients[c]) for c, ws in enumerate(warmups) for t in ws)
    )


def _measured(
    state: ApplicationState,
    layout: _Layout,
    phases: tuple[_Holdings, _Holdings],
    moved: tuple[Sequence[AbstractSet[int]], Sequence[AbstractSet[int]]],
    joint: Diagnostics,
    tables: RackTables | None,
) -> Diagnostics:
    """What the KIP-441 movements changed in the cost, added to the report's before and after.

    The phases' figures stop at what phases 1 and 2 left; the movements then send actives back
    to caught-up clients, maybe on other racks, and the joint stage saves from there. Adding
    the movements' change to both figures keeps "before -> after" the optimisation's effect
    while "after" stays the answer's real cost (it once read below zero without it).
    """
    if tables is not None:  # the request's tables (issue 24: two more of them were built here)
        from kassign.assignor.streams.ha_exchange import measured

        before, after = (
            measured(state, layout, phases, tables),
            measured(state, layout, moved, tables),
        )
    else:
        before = measured_holdings_cost(state, layout.stateful, *phases, layout.clients)
        after = measured_holdings_cost(state, layout.stateful, *moved, layout.clients)
    if before is None or after is None:
        return joint
    change = after - before
    return replace(
        joint,
        cross_rack_cost_before=joint.cross_rack_cost_before + change,
        cross_rack_cost_after=joint.cross_rack_cost_after + change,
    )


def _catch_up_index(state: ApplicationState, layout: _Layout) -> CatchUpIndex:
    return CatchUpIndex(
        layout.stateful,
        state.end_offset_sums_of(layout.stateful),
        client_lags=[state.clients[c].task_lags for c in layout.clients],
        acceptable_recovery_lag=state.configs.acceptable_recovery_lag,
    )


def _movements(
    state: ApplicationState,
    layout: _Layout,
    index: CatchUpIndex,
    active: _Holdings,
    standby: _Holdings,
    *,
    keep: bool,
) -> tuple[ActiveMoves, StandbyMoves]:
    """Phases 3 and 4: active, then standby movements, sharing one warm-up budget; without
    ``keep``, the movements take ``active`` and ``standby`` over (changed in place)."""
    caps = layout.capacities
    budget = state.configs.max_warmup_replicas
    moved = move_active_tasks(
        index, active, standby=standby, capacities=caps, warmups_left=budget, taking=not keep
    )
    copied = move_standby_tasks(
        index,
        moved.active,
        standby=moved.standby,
        capacities=caps,
        warmups=moved.warmups,
        warmups_left=moved.warmups_left,
        taking=not keep,
    )
    return moved, copied


def _exchange(
    state: ApplicationState,
    layout: _Layout,
    index: CatchUpIndex,
    held: tuple[Sequence[AbstractSet[int]], Sequence[AbstractSet[int]]],
    warmups: Sequence[AbstractSet[int]],
    tables: RackTables | None,
) -> tuple[Sequence[AbstractSet[int]], Sequence[AbstractSet[int]], Diagnostics]:
    """Phase 5 (``ha_exchange``), only with a strategy: the solver is imported then."""
    if not _rack_aware(state) or not layout.stateful:
        return *held, Diagnostics()
    from kassign.assignor.streams import ha_exchange

    return ha_exchange.exchange(state, layout, index, held, warmups, tables)


def _rack_tables(state: ApplicationState, layout: _Layout) -> RackTables | None:
    """The request's rack tables (``rack.replicas``), built once for every rack step that
    reads integers; ``None`` without a strategy, stateful tasks or a rack on every client."""
    if not _rack_aware(state) or not layout.stateful:
        return None
    from kassign.assignor.streams.rack.replicas import RackTables  # numpy, with a strategy

    return RackTables.of(state, layout.stateful)


def _rack_aware(state: ApplicationState) -> bool:
    return state.configs.rack_aware_strategy is not RackAwareStrategy.NONE


def _stateful_actives(
    state: ApplicationState, layout: _Layout, tables: RackTables | None
) -> tuple[_Holdings, Diagnostics, _Holdings]:
    """Phase 1: Kafka's load-blind balanced guess (movements bring stickiness back); the
    guess before rack optimisation comes third (for an explanation)."""
    guess = round_robin(len(layout.stateful), len(layout.clients), layout.numbers)
    held = [compact(g) for g in guess]
    balanced = balance_over_threads(
        guess, [len(g) for g in guess], capacities=layout.capacities, held=held
    )
    active = _settled(held, balanced, guess)
    if not _rack_aware(state) or not layout.stateful:
        return active, Diagnostics(), active
    if tables is not None:  # integers throughout (issue 24); the maps say why racks cannot help
        from kassign.assignor.streams.ha_exchange import trim_guess

        trimmed, diagnostics = trim_guess(state, layout, active, tables)
        return trimmed, diagnostics, active
    optimised, diagnostics = trim_actives(
        state, layout.stateful, layout.to_map(active, layout.stateful), CostPhase.HIGH_AVAILABILITY
    )
    return layout.from_map(optimised, layout.stateful), diagnostics, active


def _standby_move_allowed(state: ApplicationState, layout: _Layout) -> MoveAllowed | None:
    """Tag-aware standbys only move between clients with the same tag values (Kafka's
    ``isAllowedTaskMovement``), so balancing cannot undo their spread; otherwise any move."""
    tags = tag_layout(state)
    if not tags.tag_aware:
        return None
    values = [tags.values.get(c) for c in layout.clients]
    return lambda source, target: values[source] == values[target]


def _standbys(
    state: ApplicationState,
    layout: _Layout,
    active: _Holdings,
    tables: RackTables | None,
    *,
    keep: bool,
) -> tuple[_Holdings, Diagnostics, StandbyPhases]:
    """Phase 2: place, balance per thread, and rack-optimise the standby replicas; the first
    two steps' holdings come third (for an explanation: with ``keep``)."""
    if state.configs.num_standby_replicas <= 0 or not layout.stateful:
        return [set() for _ in layout.clients], Diagnostics(), StandbyPhases()
    rack_aware = _rack_aware(state)
    indexed = place_standby_indexed(
        state, layout.clients, active, layout.stateful, numbers=layout.numbers
    )
    placed = [compact(ts) for ts in indexed.placed]
    diagnostics = Diagnostics(notes=indexed.notes)
    # only a trace reads the placement by id (issue 16: not held on otherwise)
    kept = named_placement(state, layout.clients, layout.stateful, indexed) if keep else None
    del indexed
    movable = [sorted(s) for s in placed]
    counts = [len(a) + len(s) for a, s in zip(active, placed, strict=True)]
    balanced = balance_over_threads(
        movable,
        counts,
        capacities=layout.capacities,
        held=placed,  # updated in place; the actives, which never move here, checked beside
        fixed=active,
        allowed=_standby_move_allowed(state, layout),
    )
    standby = _settled(placed, balanced, movable)
    del movable, placed
    phases = StandbyPhases(kept, standby) if kept is not None else StandbyPhases()
    if not rack_aware:
        return standby, diagnostics, phases
    if tables is not None:  # integers throughout (issue 24); the maps say why racks cannot help
        from kassign.assignor.streams.ha_exchange import trim_placed

        trimmed, rack_diagnostics = trim_placed(state, layout, (active, standby), tables)
        return trimmed, diagnostics.merged(rack_diagnostics), phases
    active_map = layout.to_map(active, layout.stateful)  # the rack pass reads it many times
    optimised, rack_diagnostics = trim_standbys(
        state, active_map, layout.to_map(standby, layout.stateful), CostPhase.HIGH_AVAILABILITY
    )
    return (
        layout.from_map(optimised, layout.stateful),
        diagnostics.merged(rack_diagnostics),
        phases,
    )


def _stateless_actives(
    state: ApplicationState, layout: _Layout, stateful_active: Sequence[AbstractSet[int]]
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics, dict[ProcessId, frozenset[TaskId]]]:
    """Phase 6: each stateless task to the client with the fewest actives per thread (before
    rack optimisation: third, for an explanation).

    Kafka's ``ConstrainedPrioritySet`` keyed by ``activeTaskLoad`` then process id: a heap.
    """
    counts = [len(a) for a in stateful_active]
    heap = [(counts[i] / cap, i) for i, cap in enumerate(layout.capacities)]
    heapq.heapify(heap)
    placed: list[set[int]] = [set() for _ in layout.clients]
    for task in range(len(layout.stateless)):
        _, client = heapq.heappop(heap)
        placed[client].add(task)
        counts[client] += 1
        heapq.heappush(heap, (counts[client] / layout.capacities[client], client))
    assignment = layout.to_map(placed, layout.stateless)
    if not _rack_aware(state) or not layout.stateless:
        return assignment, Diagnostics(), assignment
    optimised, diagnostics = trim_actives(state, layout.stateless, assignment, CostPhase.STATELESS)
    return {c: frozenset(optimised.get(c, ())) for c in layout.clients}, diagnostics, assignment


def _movement_notes(active_moves: int, standby_moves: int, warmups: int) -> tuple[str, ...]:
    if active_moves + standby_moves == 0:
        return ()
    note = (
        f"KIP-441: {active_moves} active and {standby_moves} standby movement(s) planned, "
        f"{warmups} warm-up replica(s) placed; follow-up rebalance scheduled"
    )
    return (note,)
