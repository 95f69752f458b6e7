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

Phases 1, 2 and 6 place replicas from nothing and live in ``ha_phases.py``; phase 5 in
``ha_exchange.py``; the index space they share (``Layout``) in ``ha_layout.py``; the rack steps'
integer form of the holdings (``Replicas``), held from phase 1's trim to the answer wherever no
movement changed the sets, and the conversions to and from it in ``ha_numbering.py``. This
module keeps the order of the phases, the movements and the answer's assembly.

Once the group is balanced and caught up no movement is planned, no follow-up is asked for,
and the same input gives the same output: the assignment converges and then stays put.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from itertools import repeat
from typing import TYPE_CHECKING, TypeAlias

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.ha_layout import Holdings, Layout, catch_up_index, warmup_pairs
from kassign.assignor.streams.ha_load import assign_by_load
from kassign.assignor.streams.ha_phases import (
    rack_aware,
    rack_tables,
    standbys,
    stateful_actives,
    stateless_actives,
)
from kassign.assignor.streams.holders import picked_sorted
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.load_plan import fallback_note, measured_figures
from kassign.assignor.streams.model import ApplicationState, Balance, ProcessId, TaskId
from kassign.assignor.streams.movement import (
    ActiveMoves,
    StandbyMoves,
    move_active_tasks,
    move_standby_tasks,
)
from kassign.assignor.streams.rack import measured_holdings_cost
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    TaskAssignment,
    followup_deadline,
    task_assignment,
)
from kassign.assignor.streams.tags import one_tag_layout
from kassign.assignor.streams.trace import Trace
from kassign.assignor.streams.trace_ha import HaPhases, ha_trace

if TYPE_CHECKING:
    from kassign.assignor.streams.rack.replicas import RackTables, Replicas

__all__ = ["HighAvailabilityTaskAssignor", "assign_high_availability", "explain_high_availability"]


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
    with one_tag_layout(state):
        return _assign_by(state, explain=explain)


def _assign_by(state: ApplicationState, *, explain: bool) -> tuple[TaskAssignment, Trace | None]:
    if state.configs.balance is Balance.LOAD:
        return _by_load(state, explain=explain)
    return _by_count(state, explain=explain)


def _by_load(state: ApplicationState, *, explain: bool) -> tuple[TaskAssignment, Trace | None]:
    """Issue 25's mode (``ha_load``, its own trace with ``explain``); past its budget, the
    count-balanced answer, its figures measured and a note saying why."""
    by_load = assign_by_load(state, explain=explain)
    if not isinstance(by_load, str):
        return by_load
    counted, trace = _by_count(state, explain=explain)
    fallback = Diagnostics(solver_fallback=True, notes=(fallback_note(by_load),))
    figures = Diagnostics(load=measured_figures(state, counted))
    return task_assignment(
        counted.assignments, counted.diagnostics.merged(fallback).merged(figures)
    ), trace


def _by_count(state: ApplicationState, *, explain: bool) -> tuple[TaskAssignment, Trace | None]:
    """Kafka's mode: the phases of the module docstring."""
    layout = Layout.of(state)
    tables = rack_tables(state, layout)
    index = catch_up_index(state, layout)
    # Without a reported lag no movement can be planned, and where the rack steps hold the
    # holdings as ``Replicas`` whether one can is read from them: neither kind is made sets
    # unless it can (issue 24: a fresh group, and a settled group's next round).
    quiet = not explain and (tables is not None or not index.reports_any())
    active, active_diagnostics, balanced, numbered = stateful_actives(
        state, layout, tables, sets=not quiet
    )
    still = numbered is not None and quiet
    standby, standby_diagnostics, standby_phases, numbered = standbys(
        state, layout, active, tables, keep=explain, numbered=numbered, sets=not still
    )
    if still and numbered is not None and _may_move(state, layout, index, numbered):
        from kassign.assignor.streams.ha_numbering import Numbering

        active, standby = Numbering(state, layout).holdings(numbered)
        still = False
    # The phases' cost is measured now, so only a trace reads the holdings before movements
    # again; otherwise the movements take them over (issues 16 and 24: no copy of every task).
    held: Held = (active, standby) if numbered is None else numbered
    before = _cost(state, layout, held, tables) if rack_aware(state) else None
    moved, copied = (
        _unmoved(len(layout.clients), state.configs.max_warmup_replicas)
        if still
        else _movements(state, layout, index, active, standby, keep=explain)
    )
    warmups = _warmups(moved, copied)
    movements = moved.movements + copied.movements
    if movements or numbered is None:  # the movements changed the sets: the rack steps' form
        held = (moved.active, copied.standby)  # is no longer theirs (none planned: it stands)
    final, exchanged = _exchange(state, layout, index, held, warmups, tables)
    if rack_aware(state):  # no movement planned: the holdings are the phases' (fresh groups)
        after = _cost(state, layout, held, tables) if movements else before
        exchanged = _measured(before, after, exchanged)
    final_active, final_standby, counts, lists = _final(state, layout, final, explain=explain)
    stateless, stateless_diagnostics, stateless_balanced = stateless_actives(state, layout, counts)
    pairs = warmup_pairs(layout, warmups)
    diagnostics = (
        Diagnostics(
            warmups=len(pairs),
            notes=_movement_notes(moved.movements, copied.movements, len(pairs)),
            warmup_replicas=pairs,
        )
        .merged(active_diagnostics)
        .merged(standby_diagnostics)
        .merged(exchanged)
        .merged(stateless_diagnostics)
    )
    interval = state.configs.probing_rebalance_interval_ms
    deadline = followup_deadline(state.now_ms, interval) if movements else None
    # without stateless tasks every client's are the one empty set: not looked up by process id
    extra = map(stateless.__getitem__, layout.clients) if layout.stateless else repeat(_NONE)
    assignment = TaskAssignment(  # ``layout.clients`` is in process order already
        tuple(
            _client_assignment(client, (mine, spare), more, deadline)
            for (client, mine, spare), more in zip(zip(layout.clients, *lists, strict=True), extra)
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


_NONE = frozenset[TaskId]()

Held: TypeAlias = "tuple[Sequence[AbstractSet[int]], Sequence[AbstractSet[int]]] | Replicas"
"""The stateful holdings (actives, standbys) as sets per client, or as the rack steps'
``Replicas`` once a rack step on integers has run and no movement changed them since (issue 24:
converted only where the sets changed)."""


def _final(
    state: ApplicationState, layout: Layout, final: Held, *, explain: bool
) -> tuple[
    Sequence[AbstractSet[int]],
    Sequence[AbstractSet[int]],
    list[int],
    tuple[list[tuple[TaskId, ...]], list[tuple[TaskId, ...]]],
]:
    """The final holdings as sets (only a trace reads them: empty otherwise, from ``Replicas``),
    each client's stateful active count, and the answer's sorted (active, standby) lists."""
    if isinstance(final, tuple):
        active, standby = final
        lists = (picked_sorted(layout.stateful, active), picked_sorted(layout.stateful, standby))
        return active, standby, [len(a) for a in active], lists
    from kassign.assignor.streams.ha_numbering import Numbering

    numbering = Numbering(state, layout)
    sets = numbering.holdings(final) if explain else ((), ())
    return *sets, numbering.active_counts(final), numbering.lists(final)


def _client_assignment(
    client: ProcessId,
    held: Sequence[tuple[TaskId, ...]],
    stateless: AbstractSet[TaskId],
    deadline: int | None,
) -> KafkaStreamsAssignment:
    """``KafkaStreamsAssignment.of`` from sorted stateful (active, standby) lists."""
    checkpoint()
    active, standby = held
    if stateless:
        active = tuple(sorted(active + tuple(stateless)))
    return KafkaStreamsAssignment(client, active, standby, deadline)


def _warmups(moved: ActiveMoves, copied: StandbyMoves) -> list[frozenset[int]]:
    """Per client, every warm-up it holds: the active movements' and the standby movements'
    kept lagging copies (never the same pair: standby movements skip warm-ups). The joint stage
    must keep them all where they are: a warm-up it moved would never catch up, and the next
    rebalance would plan it again, for ever."""
    warm = [ws if isinstance(ws, frozenset) else frozenset(ws) for ws in moved.warmups]
    kept: dict[int, set[int]] = {}  # at most the warm-up budget: a set only where one is kept
    for task, client in copied.kept:
        kept.setdefault(client, set()).add(task)
    for client, tasks in kept.items():
        warm[client] = warm[client] | tasks
    return warm


def _cost(
    state: ApplicationState, layout: Layout, held: Held, tables: RackTables | None
) -> int | None:
    """The cross-rack cost of ``held``; ``None`` where racks are unknown."""
    if tables is not None:  # the request's tables (issue 24: two more of them were built here)
        from kassign.assignor.streams.ha_exchange import measured

        return measured(state, layout, held, tables)
    assert isinstance(held, tuple)  # without tables no rack step on integers ran
    return measured_holdings_cost(state, layout.stateful, *held, layout.clients)


def _measured(before: int | None, after: int | None, joint: Diagnostics) -> Diagnostics:
    """What the KIP-441 movements changed in the cost (``after`` them against ``before``),
    added to the report's before and after.

    The phases' figures stop at what phases 1 and 2 left; the movements then send actives back
    to caught-up clients, maybe on other racks, and the joint stage saves from there. Adding
    the movements' change to both figures keeps "before -> after" the optimisation's effect
    while "after" stays the answer's real cost (it once read below zero without it).
    """
    if before is None or after is None:
        return joint
    change = after - before
    return replace(
        joint,
        cross_rack_cost_before=joint.cross_rack_cost_before + change,
        cross_rack_cost_after=joint.cross_rack_cost_after + change,
    )


def _movements(
    state: ApplicationState,
    layout: Layout,
    index: CatchUpIndex,
    active: Holdings,
    standby: Holdings,
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


def _may_move(state: ApplicationState, layout: Layout, index: CatchUpIndex, held: Replicas) -> bool:
    """Whether phase 3 or 4 can plan a movement on ``held``: some active or standby on a
    client not caught up on it while another client lags less (``CatchUpIndex.movable``).
    Without one the active pass moves nothing and places no warm-up, so the standby pass
    looks at the same standbys, and neither changes anything."""
    if not index.reports_any():
        return False
    from kassign.assignor.streams.ha_numbering import Numbering

    numbering = Numbering(state, layout)
    tasks, clients = numbering.active_pairs(held)
    if index.movable(clients, tasks).any():
        return True
    return bool(index.movable(numbering.layout_of[held.rep_client], held.rep_task).any())


def _unmoved(clients: int, budget: int) -> tuple[ActiveMoves, StandbyMoves]:
    """What phases 3 and 4 give when they can plan none (no client reported a lag, or no pair
    may move: ``_may_move``): no movement, no warm-up, the budget untouched; neither kind's sets are read (nor made)."""
    none = (frozenset[int](),) * clients  # one shared empty set
    return ActiveMoves((), (), none, 0, budget), StandbyMoves((), 0, 0, budget)


def _exchange(
    state: ApplicationState,
    layout: Layout,
    index: CatchUpIndex,
    held: Held,
    warmups: Sequence[AbstractSet[int]],
    tables: RackTables | None,
) -> tuple[Held, Diagnostics]:
    """Phase 5 (``ha_exchange``), only with a strategy and the request's rack tables (without
    a rack on every client no step can weigh racks): the solver is imported then."""
    if not rack_aware(state) or not layout.stateful or tables is None:
        return held, Diagnostics()
    from kassign.assignor.streams import ha_exchange
    from kassign.assignor.streams.ha_numbering import Numbering

    numbered = held if not isinstance(held, tuple) else Numbering(state, layout).replicas(*held)
    return ha_exchange.exchange(state, layout, index, numbered, warmups, tables)


def _movement_notes(active_moves: int, standby_moves: int, warmups: int) -> tuple[str, ...]:
    if active_moves + standby_moves == 0:
        return ()
    note = (
        f"KIP-441: {active_moves} active and {standby_moves} standby movement(s) planned, "
        f"{warmups} warm-up replica(s) placed; follow-up rebalance scheduled"
    )
    return (note,)
