"""The high-availability assignor with ``balance`` ``LOAD`` (issue 25): KIP-441's rules, the
load core's balance.

1. actives, stateful and stateless together, by the load core (``load_plan``): each client's
   capacity its threads, each task's load its ``TaskLoads`` figure; a stateful active only on
   a client caught up on it (KIP-441), or where none is, on the least lagging; previous owners
   kept first, the tasks with the least state moving first;
2. the same core with every client eligible, starting from step 1's answer: where it reaches
   a peak more than ``_GAIN`` below step 1's, each stateful task it would run on a client not
   caught up gets a warm-up there (heaviest first, ``max_warmup_replicas`` at most; a standby
   already there becomes one), and a follow-up rebalance is asked for: once caught up, the
   client is eligible in step 1 (the KIP-441 way: actives never wait on a restore);
3. standbys as the count mode places them (``ha_phases.standbys``: never beside their active,
   KIP-708 tags, rack trim of standbys with a strategy), then Kafka's standby movements with
   the warm-up budget left. Standbys carry no load: the peak counts actives only.

With a KIP-925 strategy, step 1's core is given each task's rack-locality
(``load_racks.task_sites``: rack-local clients preferred within its target), then its actives are
rack-trimmed among tasks of one load (``load_racks``: no client's load changes); the active/standby exchange does not run (it
moves load). ``assign_by_load`` returns why (a note) when the core does not fit the budget
(``load_plan.affordable`` before it runs, ``core_afford`` on each of its steps, both runs
of the core); the caller then answers by count. Asked to ``explain``, it also
returns the trace of its steps (``trace_ha.ha_load_trace``); otherwise none is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import numpy as np
from kassign.assignor.errors import SolverError
from kassign.assignor.load import LoadPlan, LoadProblem, balance
from kassign.assignor.load.balance import BoolArray
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.streams.ha_layout import Holdings, Layout, catch_up_index, warmup_pairs
from kassign.assignor.streams.ha_phases import rack_tables, standbys
from kassign.assignor.streams.load_plan import (
    affordable,
    caught_up_classes,
    core_afford,
    eligibility,
    measured_figures,
    previous_owners,
    task_costs,
    too_small,
)
from kassign.assignor.streams.load_racks import task_sites, trim_equal_loads
from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.movement import move_standby_tasks
from kassign.assignor.streams.rack import CostPhase
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    TaskAssignment,
    followup_deadline,
    task_assignment,
)
from kassign.assignor.streams.trace import Trace
from kassign.assignor.streams.trace_ha import ha_load_trace
from kassign.assignor.streams.trace_load import LoadActives

__all__ = ["assign_by_load"]

_GAIN = 0.01
"""Warm-ups are placed only when every client's eligibility would lower the peak by more than
this share (the core's own slack): smaller gains are not worth a restore and a follow-up."""


def assign_by_load(
    state: ApplicationState, *, explain: bool = False
) -> tuple[TaskAssignment, Trace | None] | str:
    """The assignment by load (module docstring) and, with ``explain``, its trace; or why the
    core cannot run (a note)."""
    layout = Layout.of(state)
    items = layout.stateful + layout.stateless
    index = catch_up_index(state, layout)
    classes, keys = caught_up_classes(
        index, len(layout.stateful), len(layout.stateless), len(layout.clients)
    )
    why = affordable(state, len(items), len(layout.clients), len(keys))
    if why is not None:
        return why
    eligible = eligibility(keys, len(layout.clients))
    loads, stay = task_costs(state, items)
    caps = np.array(layout.capacities, dtype=np.float64)
    owners = previous_owners(state, layout.clients, items, last_wins=False)
    sites, local = task_sites(state, items, layout.clients)
    afford = core_afford(state, len(layout.clients), len(keys))
    try:
        plan = balance(
            LoadProblem(loads, caps, owners, classes, eligible, sites, local, stay), afford=afford
        )
        free = balance(LoadProblem(loads, caps, plan.owners, stay=stay), afford=afford)
    except SolverError:
        return too_small(state, len(items), len(layout.clients))
    stateful = len(layout.stateful)
    placed, racks = trim_equal_loads(
        state,
        items,
        (plan.owners, layout.clients),
        loads,
        classes == 0,
        lambda i: CostPhase.HIGH_AVAILABILITY if i < stateful else CostPhase.STATELESS,
    )
    active: Holdings = [set() for _ in layout.clients]
    stateless: list[list[int]] = [[] for _ in layout.clients]
    for t, c in enumerate(placed.tolist()):
        if t < stateful:
            active[c].add(t)
        else:
            stateless[c].append(t - stateful)
    standby, diagnostics, standby_phases, _ = standbys(
        state, layout, active, rack_tables(state, layout), keep=explain
    )
    trimmed = [set(s) for s in standby] if explain else None  # _warm_up adds to standby
    diagnostics = racks.merged(diagnostics)
    wanted = _wanted(loads, stay, (plan, free), (classes, eligible), stateful)
    warm, budget = _warm_up(wanted, placed, standby, state.configs.max_warmup_replicas)
    copied = move_standby_tasks(
        index,
        active,
        standby=standby,
        capacities=layout.capacities,
        warmups=warm,
        warmups_left=budget,
    )
    warm_all = [set(w) for w in warm]
    for t, c in copied.kept:
        warm_all[c].add(t)
    pairs = warmup_pairs(layout, warm_all)
    deadline = None
    if wanted or copied.movements:
        deadline = followup_deadline(state.now_ms, state.configs.probing_rebalance_interval_ms)
    notes = _notes(len(wanted), copied.movements, len(pairs))
    assignment = task_assignment(
        (
            KafkaStreamsAssignment.of(
                client,
                [layout.stateful[t] for t in active[c]]
                + [layout.stateless[t] for t in stateless[c]],
                [layout.stateful[t] for t in copied.standby[c]],
                deadline,
            )
            for c, client in enumerate(layout.clients)
        ),
        diagnostics.merged(Diagnostics(warmups=len(pairs), notes=notes, warmup_replicas=pairs)),
    )
    figures = measured_figures(state, assignment)
    answer = task_assignment(
        assignment.assignments, assignment.diagnostics.merged(Diagnostics(load=figures))
    )
    if trimmed is None:
        return answer, None
    actives = LoadActives(items, layout.clients, owners, plan.owners, placed, dict(wanted))
    holdings = (trimmed, standby, copied.standby)
    trace = ha_load_trace(
        state, actives, (holdings, standby_phases), stateful=layout.stateful, index=index
    )
    return answer, trace


def _wanted(
    loads: FloatArray,
    stay: FloatArray,
    plans: tuple[LoadPlan, LoadPlan],
    eligibility: tuple[IntArray, BoolArray],
    stateful: int,
) -> list[tuple[int, int]]:
    """(task, client) pairs where the core on every client (``free``, run from ``plan``) would
    run a stateful task on a client not caught up on it, when that lowers the peak by more
    than ``_GAIN``: heaviest first, then least state, then task order."""
    plan, free = plans
    if free.peak >= plan.peak * (1 - _GAIN):
        return []
    classes, eligible = eligibility
    moved = [
        t
        for t in np.flatnonzero(free.owners[:stateful] != plan.owners[:stateful]).tolist()
        if not eligible[classes[t], free.owners[t]]
    ]
    moved.sort(key=lambda t: (-loads[t], stay[t], t))
    return [(t, int(free.owners[t])) for t in moved]


def _warm_up(
    wanted: Sequence[tuple[int, int]], owners: IntArray, standby: Holdings, budget: int
) -> tuple[list[AbstractSet[int]], int]:
    """A warm-up on each wanted client, while ``budget`` lasts; a standby already there
    becomes one (kept there: the standby movements would take a lagging standby away).
    ``standby`` gains the warm-ups (never on the task's active client: that one is caught up,
    the wanted one is not)."""
    warm: list[set[int]] = [set() for _ in standby]
    for t, c in wanted:
        if c == owners[t]:
            continue
        if budget <= 0:
            break
        standby[c].add(t)
        warm[c].add(t)
        budget -= 1
    return list(warm), budget


def _notes(wanted: int, standby_moves: int, warmups: int) -> tuple[str, ...]:
    if not wanted and not standby_moves:
        return ()
    note = (
        f"balance LOAD: {wanted} active(s) would balance better on clients not caught up, "
        f"{standby_moves} standby movement(s); {warmups} warm-up replica(s) placed; "
        "follow-up rebalance scheduled (KIP-441)"
    )
    return (note,)
