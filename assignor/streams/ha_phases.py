"""The high-availability assignor's placing phases: stateful actives (1), standbys (2) and
stateless actives (6), each balanced per thread and then rack-optimised when a strategy is set.

Why apart from ``high_availability``: these phases place replicas from nothing; the assignor's
module keeps the order of the phases, the KIP-441 movements and the answer's assembly.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from kassign.assignor.streams.balance import MoveAllowed, balance_over_threads, round_robin
from kassign.assignor.streams.ha_layout import Holdings, Layout, settled
from kassign.assignor.streams.holders import compact, pairs, picked_sorted
from kassign.assignor.streams.model import ApplicationState, ProcessId, RackAwareStrategy, TaskId
from kassign.assignor.streams.rack import CostPhase, trim_actives, trim_standbys
from kassign.assignor.streams.result import Diagnostics
from kassign.assignor.streams.standby import (
    client_tag_values,
    named_placement,
    place_standby_indexed,
)
from kassign.assignor.streams.tags import tag_layout
from kassign.assignor.streams.trace_ha import StandbyPhases

if TYPE_CHECKING:
    from kassign.assignor.flow import IntArray
    from kassign.assignor.streams.rack.replicas import RackTables, Replicas

__all__ = ["rack_aware", "rack_tables", "standbys", "stateful_actives", "stateless_actives"]


def rack_tables(state: ApplicationState, layout: Layout) -> RackTables | None:
    """The request's rack tables (``rack.replicas``), built once for every rack step that
    reads integers; ``None`` without a strategy, stateful tasks or a rack on every client."""
    if not rack_aware(state) or not layout.stateful:
        return None
    from kassign.assignor.streams.rack.replicas import RackTables  # numpy, with a strategy

    return RackTables.of(state, layout.stateful)


def rack_aware(state: ApplicationState) -> bool:
    return state.configs.rack_aware_strategy is not RackAwareStrategy.NONE


def stateful_actives(
    state: ApplicationState, layout: Layout, tables: RackTables | None, *, sets: bool = True
) -> tuple[Holdings, Diagnostics, Holdings, Replicas | None]:
    """Phase 1: Kafka's load-blind balanced guess (movements bring stickiness back); the
    guess before rack optimisation comes third (for an explanation), the actives as the rack
    steps' ``Replicas`` fourth where a rack step on integers ran (``None`` otherwise). Without
    ``sets`` the caller reads only that fourth where it is given (the first is then an empty
    list: issue 24, no set per client made only to be read as a column again)."""
    guess = round_robin(len(layout.stateful), len(layout.clients), layout.numbers)
    # Only the rack step on integers reads the guess when the caller takes no sets: it reads
    # the balanced lists, and the balance makes sets only where a move visits (issue 24).
    lists = not sets and tables is not None and rack_aware(state)
    held = None if lists else [compact(g) for g in guess]
    balanced = balance_over_threads(
        guess, [len(g) for g in guess], capacities=layout.capacities, held=held
    )
    if held is None:
        from kassign.assignor.streams.ha_exchange import trim_guess

        assert tables is not None  # as ``lists`` says
        _, numbered, diagnostics = trim_guess(state, layout, balanced, tables, sets=False)
        return [], diagnostics, [], numbered
    active = settled(held, balanced, guess)
    if not rack_aware(state) or not layout.stateful:
        return active, Diagnostics(), active, None
    if tables is not None:  # integers throughout (issue 24); the maps say why racks cannot help
        from kassign.assignor.streams.ha_exchange import trim_guess

        trimmed, numbered, diagnostics = trim_guess(state, layout, active, tables, sets=sets)
        return trimmed, diagnostics, active, numbered
    optimised, diagnostics = trim_actives(
        state, layout.stateful, layout.to_map(active, layout.stateful), CostPhase.HIGH_AVAILABILITY
    )
    return layout.from_map(optimised, layout.stateful), diagnostics, active, None


def standby_move_allowed(state: ApplicationState, layout: Layout) -> MoveAllowed | None:
    """Tag-aware standbys only move between clients with the same tag values (Kafka's
    ``isAllowedTaskMovement``), so balancing cannot undo their spread; otherwise any move."""
    tags = tag_layout(state)
    if not tags.tag_aware:
        return None
    values = client_tag_values(state, layout.clients)
    return lambda source, target: values[source] == values[target]


def standbys(
    state: ApplicationState,
    layout: Layout,
    active: Holdings,
    tables: RackTables | None,
    *,
    keep: bool,
    numbered: Replicas | None = None,
    sets: bool = True,
) -> tuple[Holdings, Diagnostics, StandbyPhases, Replicas | None]:
    """Phase 2: place, balance per thread, and rack-optimise the standby replicas; the first
    two steps' holdings come third (for an explanation: with ``keep``); fourth, with
    ``numbered`` (phase 1's ``Replicas``: the actives are read from its column, and ``active``
    may be empty), both kinds as ``Replicas`` after the rack step on integers (``None`` where
    none ran). Without ``sets`` the caller reads only that fourth where it is given (the first
    is then an empty list: no set per client)."""
    if state.configs.num_standby_replicas <= 0 or not layout.stateful:
        return [set() for _ in layout.clients], Diagnostics(), StandbyPhases(), numbered
    optimise = rack_aware(state)
    held = _active_pairs(state, layout, active, numbered)
    owner = np.full(len(layout.stateful), -1, np.int64)
    owner[held[0]] = held[1]
    active_counts = np.bincount(held[1], minlength=len(layout.clients)).tolist()
    indexed = place_standby_indexed(
        state,
        layout.clients,
        held,
        layout.stateful,
        counts=active_counts,
        capacities=layout.capacities,
    )
    # each client's standbys sorted, as the layout's shared ints (issue 16), in one call
    movable = picked_sorted(layout.numbers, indexed.placed)
    # the balance's scratch, kept as the standbys' sets (without ``sets``, made only where a
    # move visits a client, and the rack step reads the lists: issue 24)
    placed = [compact(ts) for ts in movable] if sets else None
    diagnostics = Diagnostics(notes=indexed.notes)
    # only a trace reads the placement by id (issue 16: not held on otherwise)
    kept = named_placement(state, layout.clients, layout.stateful, indexed) if keep else None
    del indexed
    counts = [a + len(s) for a, s in zip(active_counts, movable, strict=True)]
    balanced = balance_over_threads(
        movable,
        counts,
        capacities=layout.capacities,
        held=placed,  # updated in place; the actives, which never move here, checked beside
        fixed=owner.tolist(),
        allowed=standby_move_allowed(state, layout),
    )
    standby = settled(placed, balanced, movable) if placed is not None else []
    del movable, placed
    phases = StandbyPhases(kept, standby) if kept is not None else StandbyPhases()
    if not optimise:
        return standby, diagnostics, phases, None
    if tables is not None:  # integers throughout (issue 24); the maps say why racks cannot help
        from kassign.assignor.streams.ha_exchange import trim_placed

        trimmed, numbered, rack_diagnostics = trim_placed(
            state, layout, (active, standby if sets else balanced), tables, numbered, sets=sets
        )
        return trimmed, diagnostics.merged(rack_diagnostics), phases, numbered
    active_map = layout.to_map(active, layout.stateful)  # the rack pass reads it many times
    optimised, rack_diagnostics = trim_standbys(
        state, active_map, layout.to_map(standby, layout.stateful), CostPhase.HIGH_AVAILABILITY
    )
    return (
        layout.from_map(optimised, layout.stateful),
        diagnostics.merged(rack_diagnostics),
        phases,
        None,
    )


def _active_pairs(
    state: ApplicationState, layout: Layout, active: Holdings, numbered: Replicas | None
) -> tuple[IntArray, IntArray]:
    """Every stateful active as ``(task, layout client)`` columns: from phase 1's ``Replicas``
    where it has them (issue 24: its sets are then not made), else from the sets."""
    if numbered is None:
        return pairs(active)
    from kassign.assignor.streams.ha_numbering import Numbering  # numpy, with a strategy

    return Numbering(state, layout).active_pairs(numbered)


def stateless_actives(
    state: ApplicationState, layout: Layout, stateful_counts: Sequence[int]
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics, dict[ProcessId, frozenset[TaskId]]]:
    """Phase 6: each stateless task to the client with the fewest actives per thread (before
    rack optimisation: third, for an explanation).

    Kafka's ``ConstrainedPrioritySet`` keyed by ``activeTaskLoad`` then process id: a heap.
    """
    if not layout.stateless:  # nothing to place: one shared empty set, not one per client
        none = dict.fromkeys(layout.clients, frozenset[TaskId]())
        return none, Diagnostics(), none
    counts = list(stateful_counts)  # per client, its stateful actives
    heap = [(counts[i] / cap, i) for i, cap in enumerate(layout.capacities)]
    heapq.heapify(heap)
    placed: list[set[int]] = [set() for _ in layout.clients]
    for task in range(len(layout.stateless)):
        _, client = heapq.heappop(heap)
        placed[client].add(task)
        counts[client] += 1
        heapq.heappush(heap, (counts[client] / layout.capacities[client], client))
    assignment = layout.to_map(placed, layout.stateless)
    if not rack_aware(state) or not layout.stateless:
        return assignment, Diagnostics(), assignment
    optimised, diagnostics = trim_actives(state, layout.stateless, assignment, CostPhase.STATELESS)
    return {c: frozenset(optimised.get(c, ())) for c in layout.clients}, diagnostics, assignment
