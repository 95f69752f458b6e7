"""Streams tasks as items of the load core (issue 25, ``balance`` ``LOAD``): what both built-in
assignors share when they balance load rather than counts.

Items are every task of the group, stateful ones first then stateless ones (``Layout``'s
order), each with its ``TaskLoads`` load (1 where none was given) and, as the cost of moving
it (``LoadProblem.stay``), its state bytes; members are the clients in process order, each
with its stream threads as capacity. The previous owner of a task is the client that ran it
(``last_wins``: the last in process order, as the sticky assignor reads it; else the first),
else the first that kept state for it. The high-availability assignor adds eligibility
(``caught_up_classes``: KIP-441's caught-up clients); ``affordable`` is the budget's check
before the core runs, ``core_afford`` its price of each step while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, repeat, takewhile

import numpy as np
from kassign.assignor.budget import priced_budget
from kassign.assignor.errors import SolverError
from kassign.assignor.load import LoadProblem, balance, lower_bound, peak_ratio
from kassign.assignor.load.balance import BoolArray
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.load.figures import LoadFigures
from kassign.assignor.streams.ha_layout import Layout
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.load_racks import task_sites, trim_equal_loads
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.rack import CostPhase
from kassign.assignor.streams.result import Diagnostics, TaskAssignment
from kassign.assignor.streams.trace_load import LoadActives

__all__ = [
    "affordable",
    "caught_up_classes",
    "core_afford",
    "eligibility",
    "fallback_note",
    "measured_figures",
    "previous_owners",
    "sticky_actives_by_load",
    "task_costs",
    "too_small",
]

_US_PER_STEP = 0.25
"""Estimated CPU per step of the core (a heap step, log2 of the clients of them per item
placement), about twice the most one took here (2026-12-07, with a counting ``afford``:
0.10-0.12 us at 2,000 tasks on 20 clients, 0.02-0.05 us at 100,000 tasks on 1,000-2,000
clients): the budget's unit for placements."""
_FILLS = 8
"""Item placements per task priced up front: twice the most measured at 100,000 tasks (4: high
availability's two runs; sticky 1). Small groups take more (10 at 2,000 tasks on 20 clients,
up to 51 at 8-20 tasks), which ``core_afford`` then prices step by step."""
_US_PER_CELL = 0.08
"""Estimated CPU per (class, client) cell of eligibility over the whole core (the price of
20 fills at 0.01 of a 0.4 us step each, unchanged: 20,000 tasks on 1,000 clients with 19,611
classes took 1.3-1.4 s)."""
_MAX_CELLS = 20_000_000
"""At most this many (class, client) cells of eligibility (a byte each): past it, counts."""


def task_costs(state: ApplicationState, tasks: Sequence[TaskId]) -> tuple[FloatArray, FloatArray]:
    """Each task's load (1 where none given) and state bytes (0 where unknown), in order."""
    given = state.task_loads
    return _column(given.loads, tasks, 1.0), _column(given.state_bytes, tasks, 0)


def _column(figures: Mapping[TaskId, float], tasks: Sequence[TaskId], default: float) -> FloatArray:
    """``figures`` of ``tasks`` in order, ``default`` where none is given: one ``map`` in C
    rather than a Python call per task (100,000 tasks are read twice a call)."""
    if not figures:
        return np.full(len(tasks), default, dtype=np.float64)
    return np.fromiter(map(figures.get, tasks, repeat(default)), np.float64, len(tasks))


def previous_owners(
    state: ApplicationState,
    clients: Sequence[ProcessId],
    tasks: Sequence[TaskId],
    *,
    last_wins: bool,
) -> IntArray:
    """Per task, the client index that ran it before (``last_wins``: the last such client in
    ``clients``' order, else the first), else the first with state for it; -1: none."""
    row = {t: i for i, t in enumerate(tasks)}
    owners = np.full(len(tasks), -1, dtype=np.int64)
    kept = np.full(len(tasks), -1, dtype=np.int64)
    order = range(len(clients)) if last_wins else range(len(clients) - 1, -1, -1)
    for c in order:
        client = state.clients[clients[c]]
        ran = [row[t] for t in client.previous_active_tasks if t in row]
        owners[ran] = c
    for c in range(len(clients) - 1, -1, -1):
        had = [row[t] for t in state.clients[clients[c]].previous_standby_tasks if t in row]
        kept[had] = c
    return np.where(owners >= 0, owners, kept)


def caught_up_classes(
    index: CatchUpIndex, stateful: int, stateless: int, clients: int
) -> tuple[IntArray, list[tuple[int, ...]]]:
    """Eligibility classes for the core, and each class's clients (``()``: every one): a
    stateful task may run on the clients caught up on it, or where none is, on the least
    lagging ones (those the KIP-441 movements would pick); a stateless one anywhere. Class 0 is
    every client: also each task nobody reported a lag for (every client is then equally
    caught up, or equally behind)."""
    rows: dict[tuple[int, ...], int] = {(): 0}
    classes = np.zeros(stateful + stateless, dtype=np.int64)
    for t in index.reported_among(range(stateful)):
        allowed = index.caught_up(t) or _least_lagging(index, t)
        key = tuple(allowed) if len(allowed) < clients else ()
        classes[t] = rows.setdefault(key, len(rows))
    return classes, list(rows)


def eligibility(keys: Sequence[tuple[int, ...]], clients: int) -> BoolArray:
    """The core's ``eligible`` matrix of ``caught_up_classes``' classes."""
    eligible = np.zeros((len(keys), clients), dtype=np.bool_)
    eligible[0] = True
    for r, key in enumerate(keys):
        if key:
            eligible[r, list(key)] = True
    return eligible


def _least_lagging(index: CatchUpIndex, task: int) -> list[int]:
    ranked = list(index.by_lag(task))
    least = index.lag(ranked[0], task)
    return sorted(takewhile(lambda c: index.lag(c, task) == least, ranked))


def affordable(state: ApplicationState, items: int, clients: int, classes: int) -> str | None:
    """Why the core may not run within ``assignment_time_budget_ms`` (or memory), or ``None``.

    No clock is read (the answer must not depend on the machine's speed): the work is priced
    before it starts, as the rack solver's arcs are (``rack/outcomes.py``)."""
    if classes * clients > _MAX_CELLS:
        return f"{classes} eligibility classes x {clients} clients exceed {_MAX_CELLS} cells"
    us = _FILLS * items * math.log2(clients + 1) * _US_PER_STEP + classes * clients * _US_PER_CELL
    budget = state.configs.assignment_time_budget_ms
    if budget is not None and us / 1000 > budget:
        return too_small(state, items, clients)
    return None


def too_small(state: ApplicationState, items: int, clients: int) -> str:
    """The note's reason when the core does not fit ``assignment_time_budget_ms``."""
    budget = state.configs.assignment_time_budget_ms
    return f"time budget of {budget} ms too small for {items} tasks on {clients} clients"


def core_afford(
    state: ApplicationState, clients: int, classes: int
) -> Callable[[int], object] | None:
    """The core's ``afford`` (``balance``): each item placement it announces priced as a step
    of ``affordable``'s (``_US_PER_STEP`` times log2 of the clients; the cells paid first), so
    that what the core actually runs (the search's bisection, the sticky and loose fills, up
    to 192 improvement rounds, a second run) stays within the budget. ``affordable``'s
    ``_FILLS`` placements per task are the usual case at 100,000 tasks; past the budget this
    raises ``SolverError`` (``TIME_BUDGET``)."""
    budget = state.configs.assignment_time_budget_ms
    if budget is None or not clients:  # no clients: the core places nothing
        return None
    per_item = math.log2(clients + 1) * _US_PER_STEP / 1000
    afford = priced_budget(budget / 1000, per_item, "item placements")
    afford(math.ceil(classes * clients * _US_PER_CELL / 1000 / per_item))
    return afford


def fallback_note(reason: str) -> str:
    return f"balance LOAD: {reason}; the count-balanced answer stands (its load figures reported)"


def measured_figures(state: ApplicationState, assignment: TaskAssignment) -> LoadFigures:
    """The bound, peak and mean of ``assignment``'s actives, per stream thread, measured on the
    answer itself (whatever placed it: the core, or the count-balanced fallback)."""
    clients = [a.process_id for a in assignment.assignments]
    caps = np.array([max(1, state.clients[c].num_threads) for c in clients], dtype=np.float64)
    tasks = list(state.tasks)
    loads, _ = task_costs(state, tasks)
    row = dict(zip(tasks, range(len(tasks))))
    actives = [a.active for a in assignment.assignments]
    rows = np.fromiter(map(row.get, chain.from_iterable(actives), repeat(-1)), np.int64)
    clients_of = np.repeat(np.arange(len(actives)), [len(a) for a in actives])
    known = rows >= 0  # a task the group does not hold is left out (validation names it)
    owners = np.zeros(len(tasks), dtype=np.int64)
    owners[rows[known]] = clients_of[known]
    mean = float(loads.sum() / caps.sum()) if len(caps) else 0.0
    return LoadFigures(lower_bound(loads, caps), peak_ratio(loads, caps, owners), mean)


def sticky_actives_by_load(
    state: ApplicationState, *, explain: bool = False
) -> tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics, LoadActives | None] | str:
    """The sticky assignor's actives by load: every task may go to any client (Kafka's sticky
    assignor knows no caught-up rule), previous owners kept first, the tasks with the least
    state moving first, rack-local clients preferred within the target with a KIP-925 strategy
    (``load_racks.task_sites``), then rack-trimmed among tasks of one load; or why the
    core cannot run (``affordable``). With ``explain``, the steps' placements for a trace."""
    layout = Layout.of(state)
    items = layout.stateful + layout.stateless
    why = affordable(state, len(items), len(layout.clients), 1)
    if why is not None:
        return why
    loads, stay = task_costs(state, items)
    caps = np.array(layout.capacities, dtype=np.float64)
    owners = previous_owners(state, layout.clients, items, last_wins=True)
    sites, local = task_sites(state, items, layout.clients)
    problem = LoadProblem(loads, caps, owners, sites=sites, local=local, stay=stay)
    try:
        plan = balance(problem, afford=core_afford(state, len(layout.clients), 1))
    except SolverError:
        return too_small(state, len(items), len(layout.clients))
    placed, racks = trim_equal_loads(
        state,
        items,
        (plan.owners, layout.clients),
        loads,
        np.ones(len(items), dtype=np.bool_),
        lambda _: CostPhase.STICKY,
    )
    held: list[list[TaskId]] = [[] for _ in layout.clients]
    for t, c in enumerate(placed.tolist()):
        held[c].append(items[t])
    steps = LoadActives(items, layout.clients, owners, plan.owners, placed) if explain else None
    return {client: frozenset(held[c]) for c, client in enumerate(layout.clients)}, racks, steps
