"""The high-availability assignor's index space and the scratch form of its holdings.

Why apart from the phases: every phase (``high_availability``, ``ha_phases``, ``ha_exchange``)
reads clients and tasks by position, so the numbering is built once, here, and shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.holders import compact
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId, TaskTable

__all__ = ["Holdings", "Layout", "catch_up_index", "settled", "warmup_pairs"]

Holdings = list[set[int]]
"""Per client index, a set of task indices: the scratch form of one kind of assignment."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Index space, built once: clients in process order, stateful and stateless tasks sorted."""

    clients: tuple[ProcessId, ...]
    capacities: tuple[int, ...]
    stateful: tuple[TaskId, ...]
    stateless: tuple[TaskId, ...]
    numbers: tuple[int, ...]
    """``0..len(stateful)-1``, one int object each, shared by every holding (issue 16: a
    position made afresh for each holding costs 28 bytes each time)."""
    state_order: tuple[int, ...]
    """Per client, its index in ``state.clients`` (the rack layer's numbering)."""

    @staticmethod
    def of(state: ApplicationState) -> Layout:
        pids, kinds = list(state.clients), list(state.clients.values())
        keys = list(map(process_key, pids))
        order = tuple(sorted(range(len(pids)), key=keys.__getitem__))
        clients = tuple(pids[i] for i in order)  # read by index: no UUID hashed (issue 24)
        # a client always has a consumer; guard anyway so a load is never a division by zero
        capacities = tuple(max(1, kinds[i].num_threads) for i in order)
        stateful, stateless = _in_order(state, True), _in_order(state, False)
        numbers = tuple(range(len(stateful)))
        return Layout(clients, capacities, stateful, stateless, numbers, order)

    def to_map(
        self, holdings: Sequence[Iterable[int]], tasks: Sequence[TaskId]
    ) -> dict[ProcessId, frozenset[TaskId]]:
        return {
            c: frozenset(tasks[t] for t in ts) for c, ts in zip(self.clients, holdings, strict=True)
        }

    def from_map(
        self, assignment: Mapping[ProcessId, AbstractSet[TaskId]], tasks: Sequence[TaskId]
    ) -> Holdings:
        # One index for the call, let go after it (bisecting each task cost more: issue 24);
        # its values are the layout's shared ints (issue 16).
        number = dict(zip(tasks, self.numbers, strict=True))
        return [compact(map(number.__getitem__, assignment.get(c, ()))) for c in self.clients]


def _in_order(state: ApplicationState, stateful: bool) -> tuple[TaskId, ...]:
    """The stateful (or stateless) tasks sorted: a ``TaskTable`` gives them in task order
    already (issue 24: a sort of every task, a comparison each, saved)."""
    tasks = state.stateful_tasks if stateful else state.stateless_tasks
    return tasks if isinstance(state.tasks, TaskTable) else tuple(sorted(tasks))


def settled(
    held: Holdings, balanced: Sequence[Sequence[int]], before: Sequence[Sequence[int]]
) -> Holdings:
    """Each client's holdings after balancing: the set ``balance_over_threads`` kept for a
    client it left as it was (most of them, and every one of a fresh group), a compact set of
    the new list for the others (issue 24: not a second set of every task)."""
    return [
        h if b is a or b == a else compact(b)
        for h, b, a in zip(held, balanced, before, strict=True)
    ]


def catch_up_index(state: ApplicationState, layout: Layout) -> CatchUpIndex:
    """Who is caught up on which stateful task, in the layout's index space (each client read
    by its position in ``state.clients``: no ``UUID`` hashed)."""
    kinds = list(state.clients.values())
    return CatchUpIndex(
        layout.stateful,
        state.end_offset_sums_of(layout.stateful),
        client_lags=[kinds[i].task_lags for i in layout.state_order],
        acceptable_recovery_lag=state.configs.acceptable_recovery_lag,
    )


def warmup_pairs(
    layout: Layout, warmups: Sequence[AbstractSet[int]]
) -> tuple[tuple[TaskId, ProcessId], ...]:
    """Every warm-up replica (per client, task positions) by name
    (``Diagnostics.warmup_replicas``), sorted by task."""
    return tuple(
        sorted((layout.stateful[t], layout.clients[c]) for c, ws in enumerate(warmups) for t in ws)
    )
