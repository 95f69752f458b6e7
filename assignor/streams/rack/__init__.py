"""KIP-925 rack-aware optimisation: the one entry point the Streams assignors call.

``trim_actives`` and ``trim_standbys`` pick the caller's costs (``costs.CostPhase``: the configured
ones, else Kafka's defaults for that caller) and re-place tasks at minimum cross-rack cost under
Kafka's built-in cost model (``CostModel.BUILT_IN``: actives count source partitions); the
assignors import only these. ``optimize_active_tasks`` / ``optimize_standby_tasks`` are KIP-924's
utilities for custom assignors, under ``CostModel.TASK_ASSIGNMENT_UTILS`` (actives count all
their partitions), as ``TaskAssignmentUtils`` does. This module loads nothing heavy: the solver (numpy, OR-Tools) is
imported here, on the first rack-aware call, so a request without a strategy never pays for it.

- ``costs``: the defaults by caller and ``resolve_costs``;
- ``optimise``: the two optimisations' entry points (maps of task ids, or integer tables);
- ``outcomes``: their solves within the time budget, checked, and their reports (or fallback);
- ``problems``: the group as arrays (clients, tasks, racks, costs) for the two graphs;
- ``cost_tables``: the per-rack miss tables and KIP-925's enablement rules;
- ``active_flow`` / ``standby_flow``: the two graphs on ``kassign.assignor.flow``;
- ``joint``: actives and standbys together, exchanging which replica of a task is active
  (``joint_replicas`` the same on integers; ``candidates`` the moves it weighs,
  ``circulation`` the solve that picks them);
- ``measure``: Kafka's built-in cross-rack measure of an assignment, and the miss tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.rack.costs import CostModel, CostPhase, resolve_costs
from kassign.assignor.streams.result import Diagnostics

if TYPE_CHECKING:
    from kassign.assignor.streams.rack.joint import Exchange

__all__ = [
    "CostModel",
    "CostPhase",
    "exchange_roles",
    "measured_cost",
    "measured_holdings_cost",
    "optimize_active_tasks",
    "optimize_standby_tasks",
    "relocate_actives",
    "resolve_costs",
    "trim_actives",
    "trim_standbys",
]

_Assignment = Mapping[ProcessId, AbstractSet[TaskId]]
_Trimmed = tuple[dict[ProcessId, frozenset[TaskId]], Diagnostics]


def optimize_active_tasks(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: _Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> _Trimmed:
    """Re-place ``tasks`` (actives) at minimum cost with explicit costs (KIP-924's utility)."""
    return _optimise_actives(
        state, tasks, assignment, (traffic_cost, non_overlap_cost), CostModel.TASK_ASSIGNMENT_UTILS
    )


def optimize_standby_tasks(
    state: ApplicationState,
    active: _Assignment,
    standby: _Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
) -> _Trimmed:
    """Re-place every standby at minimum cost with explicit costs (KIP-924's utility)."""
    return _optimise_standbys(
        state, active, standby, (traffic_cost, non_overlap_cost), CostModel.TASK_ASSIGNMENT_UTILS
    )


def trim_actives(
    state: ApplicationState, tasks: Sequence[TaskId], assignment: _Assignment, phase: CostPhase
) -> _Trimmed:
    """Actives at minimum cost with ``phase``'s costs (the configured ones win), built-in model;
    the sticky assignor's stickiness is to clients with the task's state (``anchor_on_state``)."""
    costs = resolve_costs(state.configs, phase)
    return _optimise_actives(
        state, tasks, assignment, costs, CostModel.BUILT_IN, anchor_on_state=_anchors(phase)
    )


def trim_standbys(
    state: ApplicationState,
    active: _Assignment,
    standby: _Assignment,
    phase: CostPhase,
    *,
    fixed: AbstractSet[tuple[TaskId, ProcessId]] = frozenset(),
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
) -> _Trimmed:
    """Standbys at minimum cost with ``phase``'s costs (the configured ones win), built-in model;
    sticky's stickiness is to clients with the task's state, as for ``trim_actives``. The
    (task, client) pairs in ``fixed`` stay (warm-ups); ``slack`` lets per-client counts move."""
    costs = resolve_costs(state.configs, phase)
    return _optimise_standbys(
        state,
        active,
        standby,
        costs,
        CostModel.BUILT_IN,
        anchor_on_state=_anchors(phase),
        fixed=fixed,
        slack=slack,
        task_spread=True,
    )


def _anchors(phase: CostPhase) -> bool:
    """Where the sticky assignor placed a task on a client without its state (a new task, or
    its owner left), that placement was arbitrary: moving it costs no restore, so only moves
    off a client with the task's state pay ``non_overlap_cost``. Elsewhere, KIP-925's rule."""
    return phase is CostPhase.STICKY


def exchange_roles(
    state: ApplicationState,
    active: _Assignment,
    standby: _Assignment,
    phase: CostPhase,
    *,
    may_lead: Callable[[TaskId, ProcessId], bool] | None = None,
    fixed: AbstractSet[tuple[TaskId, ProcessId]] = frozenset(),
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
) -> Exchange | str:
    """Actives and standbys together: exchange roles where the built-in cost drops (``joint``).

    Stickiness is to each task's previous active clients (``previous_actives``); ``slack`` as
    for ``relocate_actives``. A string says why nothing was tried (no strategy, no racks, no
    candidate). The sticky assignor charges stickiness as a restore (``_anchors``), and an
    exchange restores nothing: both clients keep the task's state, one as its active, the other
    as a standby. So there traffic comes first (``traffic_first``), and stickiness only decides
    between exchanges of equal traffic.
    """
    from kassign.assignor.streams.rack import joint  # the solver, on the first rack-aware call

    traffic, overlap = resolve_costs(state.configs, phase)
    return joint.exchange_roles(
        state,
        active,
        standby,
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        may_lead=may_lead,
        fixed=fixed,
        previous=previous_actives(state),
        slack=slack,
        traffic_first=_anchors(phase),
    )


def relocate_actives(
    state: ApplicationState,
    active: _Assignment,
    standby: _Assignment,
    eligible: Mapping[TaskId, Sequence[ProcessId]],
    phase: CostPhase,
    *,
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
) -> Exchange | str:
    """Actives moved among the clients ``eligible`` to run them, counts kept but for ``slack``
    (``joint``); stickiness is to each task's previous active clients."""
    from kassign.assignor.streams.rack import joint  # the solver, on the first rack-aware call

    traffic, overlap = resolve_costs(state.configs, phase)
    return joint.relocate_actives(
        state,
        active,
        standby,
        eligible,
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        previous=previous_actives(state),
        slack=slack,
    )


def measured_cost(state: ApplicationState, active: _Assignment, standby: _Assignment) -> int | None:
    """The built-in cross-rack cost of a whole assignment (``measure.cross_rack_cost``)."""
    from kassign.assignor.streams.rack import measure  # numpy, on the first rack-aware call

    return measure.cross_rack_cost(state, active, standby)


def measured_holdings_cost(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    active: Sequence[Iterable[int]],
    standby: Sequence[Iterable[int]],
    clients: Sequence[ProcessId],
) -> int | None:
    """``measured_cost`` of holdings given as positions in ``tasks`` per client of ``clients``
    (``measure.holdings_cost``): no map of task ids built to measure them."""
    from kassign.assignor.streams.rack import measure  # numpy, on the first rack-aware call

    return measure.holdings_cost(state, tasks, active, standby, clients)


def previous_actives(state: ApplicationState) -> dict[TaskId, frozenset[ProcessId]]:
    """Each task's previous active clients (several when more than one claims it)."""
    owners: dict[TaskId, set[ProcessId]] = {}
    for pid, client in state.clients.items():
        checkpoint()
        for t in client.previous_active_tasks:
            owners.setdefault(t, set()).add(pid)
    return {t: frozenset(ps) for t, ps in owners.items()}


def _optimise_actives(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: _Assignment,
    costs: tuple[int, int],
    model: CostModel,
    *,
    anchor_on_state: bool = False,
) -> _Trimmed:
    """The one call into the active solver: (traffic, non-overlap) costs under ``model``."""
    from kassign.assignor.streams.rack import optimise  # the solver, on the first rack-aware call

    traffic, overlap = costs
    return optimise.optimize_active_tasks(
        state,
        tasks,
        assignment,
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        cost_model=model,
        anchor_on_state=anchor_on_state,
    )


def _optimise_standbys(
    state: ApplicationState,
    active: _Assignment,
    standby: _Assignment,
    costs: tuple[int, int],
    model: CostModel,
    *,
    anchor_on_state: bool = False,
    fixed: AbstractSet[tuple[TaskId, ProcessId]] = frozenset(),
    slack: Mapping[ProcessId, tuple[int, int]] | None = None,
    task_spread: bool = False,
) -> _Trimmed:
    """The one call into the standby solver: (traffic, non-overlap) costs under ``model``."""
    from kassign.assignor.streams.rack import optimise  # the solver, on the first rack-aware call

    traffic, overlap = costs
    return optimise.optimize_standby_tasks(
        state,
        active,
        standby,
        traffic_cost=traffic,
        non_overlap_cost=overlap,
        cost_model=model,
        anchor_on_state=anchor_on_state,
        fixed=fixed,
        slack=slack,
        task_spread=task_spread,
    )
