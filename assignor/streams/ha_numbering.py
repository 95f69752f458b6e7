"""The high-availability assignor's holdings as the rack layer's ``Replicas``, and back.

Why a module: the assignor places replicas as sets of task positions per client (the KIP-441
movements read sets), while every rack step reads and returns ``Replicas``, integer columns in
the rack layer's numbering. Converting between the two was about a tenth of a 10,000-task
``min_traffic`` call (issue 24), so the assignor now holds the rack steps' ``Replicas`` from the
first trim to the answer wherever the sets did not change in between, hands the standby
placement its actives as a column (``active_pairs``), and reads the answer's task lists straight
from its columns; this module is the one place that converts.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol, TypeVar

import numpy as np
from kassign.assignor.flow import IntArray
from kassign.assignor.streams.holders import compact, pairs, picked_runs
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.rack.replicas import Replicas

__all__ = ["HaLayout", "Numbering", "toward_share"]

_T = TypeVar("_T")


class HaLayout(Protocol):
    """The assignor's index space: clients in process order, stateful tasks sorted."""

    @property
    def clients(self) -> tuple[ProcessId, ...]: ...
    @property
    def capacities(self) -> tuple[int, ...]: ...
    @property
    def stateful(self) -> tuple[TaskId, ...]: ...
    @property
    def numbers(self) -> tuple[int, ...]:
        """``0..len(stateful)-1``, one int object each, shared by every holding."""
        ...

    @property
    def state_order(self) -> tuple[int, ...]:
        """Per client, its index in ``state.clients``."""
        ...


class Numbering:
    """The layout's clients as the rack layer numbers them (``state.clients`` order), and
    holdings converted to ``Replicas`` and back."""

    __slots__ = ("layout", "layout_of", "state_of")

    def __init__(self, state: ApplicationState, layout: HaLayout) -> None:
        self.layout = layout
        self.state_of = np.array(layout.state_order, np.int64)
        if self.state_of.size != len(state.clients):
            raise ValueError("the layout's clients are not the state's")
        self.layout_of = np.empty_like(self.state_of)
        self.layout_of[self.state_of] = np.arange(self.state_of.size)

    def replicas(
        self,
        active: Sequence[Collection[int]],
        standby: Sequence[Collection[int]] | None = None,
    ) -> Replicas:
        """``active`` and ``standby`` (``None``: no standbys) as one ``Replicas``."""
        owner = np.full(len(self.layout.stateful), -1, np.int64)
        tasks, clients = self.flat(active)
        owner[tasks] = clients
        empty = np.zeros(0, np.int64)
        numbered = Replicas(self.layout.stateful, owner, empty, empty)
        return numbered if standby is None else self.with_standbys(numbered, standby)

    def with_standbys(self, numbered: Replicas, standby: Sequence[Collection[int]]) -> Replicas:
        """``numbered``'s actives (their column shared, not copied) with ``standby``'s sets."""
        return numbered.with_standbys(*self.flat(standby))

    def holdings(self, replicas: Replicas) -> tuple[list[set[int]], list[set[int]]]:
        """Per layout client, its actives and standbys as sets of the layout's shared ints."""
        return self.actives(replicas), self.standbys(replicas)

    def actives(self, replicas: Replicas) -> list[set[int]]:
        held = np.flatnonzero(replicas.owner >= 0)
        return [compact(p) for p in self._runs(held, replicas.owner[held], self.layout.numbers)]

    def standbys(self, replicas: Replicas) -> list[set[int]]:
        runs = self._runs(replicas.rep_task, replicas.rep_client, self.layout.numbers)
        return [compact(p) for p in runs]

    def lists(
        self, replicas: Replicas
    ) -> tuple[list[tuple[TaskId, ...]], list[tuple[TaskId, ...]]]:
        """Per layout client, its actives and standbys as sorted tuples of the layout's task ids
        (the answer's lists, read from the columns: no set built for them)."""
        held = np.flatnonzero(replicas.owner >= 0)
        stateful = self.layout.stateful
        return (
            self._runs(held, replicas.owner[held], stateful),
            self._runs(replicas.rep_task, replicas.rep_client, stateful),
        )

    def active_counts(self, replicas: Replicas) -> list[int]:
        """Per layout client, how many stateful actives it runs."""
        counts: list[int] = replicas.active_counts(self.state_of.size)[self.state_of].tolist()
        return counts

    def room(self, loads: IntArray) -> tuple[IntArray, IntArray]:
        """``toward_share`` of layout-ordered ``loads``, as (may_lose, may_gain) in state order."""
        lose, take = np.zeros((2, self.state_of.size), np.int64)
        lose[self.state_of], take[self.state_of] = toward_share(self.layout.capacities, loads)
        return lose, take

    def flat(self, holdings: Sequence[Collection[int]]) -> tuple[IntArray, IntArray]:
        """Every held ``(task, client)``, clients in state order (``holders.pairs``)."""
        tasks, ranks = pairs(holdings)
        return tasks, self.state_of[ranks]

    def active_pairs(self, replicas: Replicas) -> tuple[IntArray, IntArray]:
        """Every active as ``(task, layout client)``, by task: the column the standby
        placement reads (issue 24: no set per client made for it)."""
        tasks = np.flatnonzero(replicas.owner >= 0)
        return tasks, self.layout_of[replicas.owner[tasks]]

    def _runs(
        self, tasks: IntArray, clients: IntArray, items: tuple[_T, ...]
    ) -> list[tuple[_T, ...]]:
        """Per layout client, ``items`` at its ``tasks``, ascending (``tasks`` are ascending:
        a stable sort by client keeps them so), every client in one compiled call."""
        by_layout = self.layout_of[clients]
        order = np.argsort(by_layout, kind="stable")
        ends = np.cumsum(np.bincount(by_layout, minlength=self.state_of.size)).tolist()
        return picked_runs(items, tasks[order], ends)


def toward_share(capacities: Sequence[int], loads: IntArray) -> tuple[IntArray, IntArray]:
    """Per layout client: how much it may shed (down to the floor of its thread share of the
    total) and take (up to the ceiling), never further from its share than it is."""
    caps = np.asarray(capacities, np.int64)
    total, threads = int(loads.sum()), int(caps.sum())
    low, high = (total * caps) // threads, -(-total * caps // threads)
    return np.maximum(0, loads - low), np.maximum(0, high - loads)
