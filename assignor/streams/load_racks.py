"""KIP-925 racks under ``balance`` ``LOAD`` (issue 25): cross-rack traffic lowered only where
that cannot raise any client's load.

``task_sites`` gives the load core each task's rack-locality (``LoadProblem.sites``/``local``):
a task is local on a client without a rack, or whose rack holds a replica of each of its source
partitions (its misses there are 0, ``rack.cost_tables.misses_per_rack``). The core's last fill
then prefers rack-local clients within its target and ``racks.settle`` brings cross-rack tasks
home by moves and swaps within it, so the peak stays the core's (within its slack).

After the core, the rack solver (``rack.trim_actives``) re-places a set of actives keeping each client's
number of them. Given tasks of one load, a number kept is a load kept: so the load core's
answer is trimmed group by group, each group the tasks of one load (and one cost phase) that
may run on every client (a task KIP-441 holds to its caught-up clients is left where it is:
the solver knows nothing of lags). With no loads given every task weighs 1 and this is the
count mode's trim of the actives; with loads all distinct there is nothing to trim, and the
report's cross-rack figures say what the answer costs. At most ``_MAX_GROUPS`` groups (the
largest) are solved, each priced against the budget as any rack solve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from kassign.assignor.load.balance import BoolArray
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.streams.model import ApplicationState, ProcessId, RackAwareStrategy, TaskId
from kassign.assignor.streams.rack import CostPhase, trim_actives
from kassign.assignor.streams.rack.cost_tables import misses_per_rack
from kassign.assignor.streams.rack.costs import CostModel, counted_partitions
from kassign.assignor.streams.result import Diagnostics, TaskType

__all__ = ["task_sites", "trim_equal_loads"]

_MAX_GROUPS = 32
_Mask = np.ndarray[Any, np.dtype[np.bool_]]


def task_sites(
    state: ApplicationState, tasks: Sequence[TaskId], clients: Sequence[ProcessId]
) -> tuple[IntArray, BoolArray] | tuple[None, None]:
    """Each task's site (the set of racks holding a replica of each of its source partitions,
    numbered as first met) and whether each site is rack-local on each client (the client has
    no rack, or one of the site's); nothing without a strategy, without a client's rack, or
    where a partition's racks are unknown (the rack solver then says why)."""
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE or not tasks:
        return None, None
    rack_of = [state.clients[c].rack_id for c in clients]
    racks = sorted({str(r) for r in rack_of if r})
    if not racks:
        return None, None
    sources = counted_partitions(CostModel.BUILT_IN, TaskType.ACTIVE)
    misses = misses_per_rack(state, list(tasks), racks, counted=sources, required=sources)
    if isinstance(misses, str):
        return None, None
    home, sites = np.unique(misses == 0, axis=0, return_inverse=True)
    column = {r: i for i, r in enumerate(racks)}
    local = np.array(
        [[not r or bool(row[column[str(r)]]) for r in rack_of] for row in home], dtype=np.bool_
    ).reshape(len(home), len(clients))
    return sites.reshape(-1).astype(np.int64), local


def trim_equal_loads(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    placed: tuple[IntArray, Sequence[ProcessId]],
    loads: FloatArray,
    movable: _Mask,
    phase_of: Callable[[int], CostPhase],
) -> tuple[IntArray, Diagnostics]:
    """``placed`` (a client index per task, and the clients) after the rack trim of each
    group of ``movable`` tasks sharing a load and a phase (module docstring)."""
    owners, clients = placed
    if state.configs.rack_aware_strategy is RackAwareStrategy.NONE:
        return owners, Diagnostics()
    groups: dict[tuple[str, float], list[int]] = {}
    for i in np.flatnonzero(movable).tolist():
        groups.setdefault((phase_of(i).name, float(loads[i])), []).append(i)
    spread = {k: g for k, g in groups.items() if len({int(owners[i]) for i in g}) > 1}
    chosen = sorted(spread, key=lambda k: (-len(spread[k]), k))[:_MAX_GROUPS]
    owners = owners.copy()
    index = {c: i for i, c in enumerate(clients)}
    diagnostics = Diagnostics()
    for key in sorted(chosen):
        members = spread[key]
        assignment: dict[ProcessId, set[TaskId]] = {}
        for i in members:
            assignment.setdefault(clients[owners[i]], set()).add(tasks[i])
        trimmed, more = trim_actives(
            state, [tasks[i] for i in members], assignment, phase_of(members[0])
        )
        diagnostics = diagnostics.merged(more)
        where = {t: index[c] for c, ts in trimmed.items() for t in ts}
        for i in members:
            owners[i] = where[tasks[i]]
    return owners, replace(diagnostics, notes=tuple(dict.fromkeys(diagnostics.notes)))
