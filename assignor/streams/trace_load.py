"""The load mode's actives as trace stages (issue 25, ``balance`` ``LOAD``): which rule placed
each active, for both built-in assignors, built only when an explanation is asked for.

1. the load core's answer (``load_plan``): a task on the client the core kept it with (its
   previous owner: ran it, else had its state) is ``STICKY``; one the high-availability
   assignor holds on an eligible client while load would put it on a client not caught up
   (KIP-441 bars that one; it gets a warm-up while the budget lasts) is ``CAUGHT_UP`` (else
   ``FALLBACK``: no client was caught up); every other is ``LOAD``;
2. the rack trim among tasks of one load (``load_racks``): ``RACK_COST``.

The figures a reason gives (shares of the bound) are read from the answer at explanation time
(``explain_load.py``); the trace carries rules, and which client load wanted for a held task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kassign.assignor.load.bound import IntArray
from kassign.assignor.streams.model import ProcessId, TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.trace import Pair, Rule, Stage

__all__ = ["LoadActives", "load_stages", "wanted_clients"]


@dataclass(frozen=True, slots=True)
class LoadActives:
    """The core's placement of ``items`` on ``clients`` (a client index per item): ``previous``
    the owner the core started from (-1: none), ``core`` its answer, ``placed`` after the rack
    trim; ``wanted``: item -> the client load wanted that KIP-441 barred (high availability)."""

    items: Sequence[TaskId]
    clients: Sequence[ProcessId]
    previous: IntArray
    core: IntArray
    placed: IntArray
    wanted: Mapping[int, int] = field(default_factory=dict)


def load_stages(
    actives: LoadActives, caught_up: Callable[[int, int], bool] = lambda t, c: True
) -> tuple[Stage, Stage]:
    """The two active stages (module docstring); ``caught_up(item, client)`` tells a held
    task's ``CAUGHT_UP`` from its ``FALLBACK``."""
    items, clients = actives.items, actives.clients
    previous = actives.previous.tolist()
    rules: dict[Pair, Rule] = {}
    for t, c in enumerate(actives.core.tolist()):
        if t in actives.wanted:
            rules[items[t], clients[c]] = Rule.CAUGHT_UP if caught_up(t, c) else Rule.FALLBACK
        elif previous[t] == c:
            rules[items[t], clients[c]] = Rule.STICKY
    return (
        Stage(TaskType.ACTIVE, Rule.LOAD, _named(actives, actives.core), rules),
        Stage(TaskType.ACTIVE, Rule.RACK_COST, _named(actives, actives.placed)),
    )


def wanted_clients(actives: LoadActives) -> dict[TaskId, ProcessId]:
    """Per held task, the client load wanted (the explanation names it)."""
    return {actives.items[t]: actives.clients[c] for t, c in actives.wanted.items()}


def _named(actives: LoadActives, owners: IntArray) -> dict[ProcessId, frozenset[TaskId]]:
    held: list[list[TaskId]] = [[] for _ in actives.clients]
    for t, c in enumerate(owners.tolist()):
        held[c].append(actives.items[t])
    return {pid: frozenset(ts) for pid, ts in zip(actives.clients, held, strict=True)}
