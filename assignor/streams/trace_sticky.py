"""The sticky assignor's phases as a ``Trace``: which rule each phase applies.

1. actives (``ClientBook``): on a client with the task's state, previous active or standby
   owner, ``STICKY`` (the quota passes and ``find_client``'s "previous owner unless balance says
   otherwise"); anywhere else ``BALANCE`` (the least loaded client);
2. rack optimisation of the actives (``RACK_COST``);
3. standbys: with KIP-708 tags or KIP-925 racks the shared placement (``TAG_SPREAD``, and
   ``FALLBACK`` for what tags could not place); else Kafka's legacy pass, ``STICKY`` on a
   client with state, ``BALANCE`` elsewhere;
4. rack optimisation of the standbys, then the joint exchange of roles (``RACK_COST``).

Under ``balance`` ``LOAD`` steps 1 and 2 are the load core's (``trace_load``: ``STICKY`` kept
with its previous owner, ``LOAD`` placed by load, ``RACK_COST``); the standbys' are these.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.trace import Pair, Phase, Rule, Stage, Trace
from kassign.assignor.streams.trace_load import LoadActives, load_stages

__all__ = ["StickyPhases", "sticky_trace"]

_Map = Mapping[ProcessId, AbstractSet[TaskId]]


@dataclass(frozen=True, slots=True, kw_only=True)
class StickyPhases:
    """Holdings after each phase: actives (sticky pass, rack trimmed, joint exchange), standbys
    (placed, rack trimmed, joint exchange); ``untagged`` is ``None`` for the legacy standby pass;
    ``load``: the load core's steps under ``balance`` ``LOAD`` (else ``None``)."""

    actives: tuple[_Map, _Map, _Map]
    standbys: tuple[_Map, _Map, _Map]
    untagged: AbstractSet[Pair] | None
    load: LoadActives | None = None


def sticky_trace(state: ApplicationState, phases: StickyPhases) -> Trace:
    """The stages of one sticky assignment (see the module docstring)."""
    sticky, trimmed, joint = phases.actives
    placed, standby_trimmed, standby_joint = phases.standbys
    if phases.untagged is None:
        standby_rule, standby_rules = Rule.BALANCE, _by_state(state, placed)
    else:
        standby_rule, standby_rules = Rule.TAG_SPREAD, dict.fromkeys(phases.untagged, Rule.FALLBACK)
    active, standby = TaskType.ACTIVE, TaskType.STANDBY
    first = (
        load_stages(phases.load)
        if phases.load is not None
        else (
            Stage(active, Rule.BALANCE, sticky, _by_state(state, sticky)),
            Stage(active, Rule.RACK_COST, trimmed),
        )
    )
    stages = (
        *first,
        Stage(standby, standby_rule, placed, standby_rules, phase=Phase.PLACEMENT),
        Stage(standby, Rule.RACK_COST, standby_trimmed),
        Stage(active, Rule.RACK_COST, joint),
        Stage(standby, Rule.RACK_COST, standby_joint),
    )
    return Trace(stages)


def _by_state(state: ApplicationState, holdings: _Map) -> dict[Pair, Rule]:
    """``STICKY`` for each pair whose client had state for the task (ran it or a standby)."""
    rules: dict[Pair, Rule] = {}
    for pid, tasks in holdings.items():
        client = state.clients.get(pid)
        had = client.previous_tasks if client is not None else frozenset()
        rules.update(((task, pid), Rule.STICKY) for task in tasks if task in had)
    return rules
