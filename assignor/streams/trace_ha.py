"""The high-availability assignor's phases as a ``Trace``: which rule each phase applies.

``high_availability.py`` hands over the holdings each phase left (it has them anyway) and this
module names the rules, in the order the phases ran:

1. stateful actives: the balanced guess (``BALANCE``), then rack optimisation (``RACK_COST``);
2. standbys: placement, ``TAG_SPREAD`` with KIP-708 tags (``FALLBACK`` for the replicas tags
   could not place, least loaded instead) else ``BALANCE``; balance per thread (``BALANCE``);
   rack optimisation (``RACK_COST``);
3. active movements (KIP-441): a new active went to a caught-up client, ``STICKY`` when it ran
   the task before, else ``CAUGHT_UP``; to the most caught-up client when none was caught up
   (``FALLBACK``); the client it left keeps a standby (``CAUGHT_UP``: the swap) or a warm-up;
4. standby movements: a copy on a caught-up client (``CAUGHT_UP``), else on the most caught-up
   one (``FALLBACK``);
5. the joint rack stage (``RACK_COST``), for actives and standbys;
6. stateless actives: least loaded (``BALANCE``), then rack optimisation (``RACK_COST``).

Warm-ups (``Diagnostics.warmup_replicas``) are ``WARM_UP`` whatever stage last placed them.
Under ``balance`` ``LOAD`` (``ha_load_trace``) the actives' stages are the load core's
(``trace_load``); the standbys' are these, the warm-ups load asked for in step 3's place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.standby import StandbyPlacement
from kassign.assignor.streams.tags import tag_layout
from kassign.assignor.streams.trace import Pair, Phase, Rule, Stage, Trace
from kassign.assignor.streams.trace_load import LoadActives, load_stages, wanted_clients

__all__ = ["HaPhases", "StandbyPhases", "ha_load_trace", "ha_trace"]

_Map = Mapping[ProcessId, AbstractSet[TaskId]]
_Holdings = Sequence[AbstractSet[int]]
"""Per client index (process order), task indices (stateful tasks in task order)."""
_StandbyHoldings = tuple[_Holdings, _Holdings, _Holdings]
"""Standbys rack trimmed, after the active movements (or warm-ups), after the standby ones."""


@dataclass(frozen=True, slots=True)
class StandbyPhases:
    """Phase 2's first steps: the placement, and the holdings after balancing per thread."""

    placement: StandbyPlacement = field(default_factory=lambda: StandbyPlacement({}))
    balanced: _Holdings = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HaPhases:
    """Holdings after each phase, as the assignor keeps them: stateful actives (balanced guess,
    rack trimmed, moved, joint stage), standbys (rack trimmed, after active movements, after
    standby movements, joint stage), stateless actives (least loaded, rack trimmed)."""

    actives: tuple[_Holdings, _Holdings, _Holdings, _Holdings]
    standby_placed: StandbyPhases
    standbys: tuple[_Holdings, _Holdings, _Holdings, _Holdings]
    stateless: tuple[_Map, _Map]


def ha_trace(
    state: ApplicationState,
    phases: HaPhases,
    *,
    clients: Sequence[ProcessId],
    stateful: Sequence[TaskId],
    index: CatchUpIndex,
) -> Trace:
    """The stages of one high-availability assignment (see the module docstring)."""
    named = _namer(clients, stateful)
    balanced, trimmed, moved, joint = map(named, phases.actives)
    standby_joint = named(phases.standbys[3])
    owners = _previous_owners(state)
    caught_up = _caught_up(index, clients, stateful)

    def runner(pair: Pair) -> Rule:
        task, pid = pair
        if pid in owners.get(task, ()):
            return Rule.STICKY
        return Rule.CAUGHT_UP if caught_up(task, pid) else Rule.FALLBACK

    active = TaskType.ACTIVE
    scope = frozenset(stateful)
    stateless = frozenset(state.stateless_tasks)
    stages = (
        Stage(active, Rule.BALANCE, balanced, scope=scope),
        Stage(active, Rule.RACK_COST, trimmed, scope=scope),
        *_standby_stages(state, phases.standby_placed, phases.standbys[:3], named, caught_up),
        Stage(
            active,
            Rule.CAUGHT_UP,
            moved,
            _rules(trimmed, moved, runner),
            scope=scope,
            phase=Phase.MOVEMENT,
        ),
        Stage(active, Rule.RACK_COST, joint, scope=scope),
        Stage(TaskType.STANDBY, Rule.RACK_COST, standby_joint),
        Stage(active, Rule.BALANCE, phases.stateless[0], scope=stateless),
        Stage(active, Rule.RACK_COST, phases.stateless[1], scope=stateless),
    )
    return Trace(stages)


def ha_load_trace(
    state: ApplicationState,
    actives: LoadActives,
    standbys: tuple[_StandbyHoldings, StandbyPhases],
    *,
    stateful: Sequence[TaskId],
    index: CatchUpIndex,
) -> Trace:
    """The stages of one high-availability assignment by load (``ha_load``): the load core's
    actives (``trace_load``), then the standbys as the count mode names them, the warm-ups load
    asked for taking the place of the active movements' swaps (``WARM_UP``)."""
    clients = actives.clients
    caught_up = _caught_up(index, clients, stateful)
    count = len(stateful)

    def held(t: int, c: int) -> bool:  # items are stateful tasks, then stateless ones
        return t >= count or index.is_caught_up(c, t)

    stages = (
        *load_stages(actives, held),
        *_standby_stages(state, standbys[1], standbys[0], _namer(clients, stateful), caught_up),
    )
    return Trace(stages, wanted_clients(actives))


def _standby_stages(
    state: ApplicationState,
    placed: StandbyPhases,
    holdings: _StandbyHoldings,
    named: Callable[[_Holdings], _Map],
    caught_up: Callable[[TaskId, ProcessId], bool],
) -> tuple[Stage, ...]:
    """Phase 2 and the movements' standbys: placement (``TAG_SPREAD`` with tags, ``FALLBACK``
    for what tags could not place, else ``BALANCE``), balance per thread, rack trim, the
    copies the active movements leave (``CAUGHT_UP``), the standby movements' copies."""
    trimmed, after_actives, after_standbys = map(named, holdings)
    tag_rule = Rule.TAG_SPREAD if tag_layout(state).tag_aware else Rule.BALANCE

    def copy(pair: Pair) -> Rule:
        return Rule.CAUGHT_UP if caught_up(*pair) else Rule.FALLBACK

    standby = TaskType.STANDBY
    return (
        Stage(
            standby,
            tag_rule,
            placed.placement.standby,
            _each(placed.placement.untagged),
            phase=Phase.PLACEMENT,
        ),
        Stage(standby, Rule.BALANCE, named(placed.balanced)),
        Stage(standby, Rule.RACK_COST, trimmed),
        Stage(standby, Rule.CAUGHT_UP, after_actives, phase=Phase.MOVEMENT),
        Stage(
            standby,
            Rule.CAUGHT_UP,
            after_standbys,
            _rules(after_actives, after_standbys, copy),
            phase=Phase.MOVEMENT,
        ),
    )


def _namer(clients: Sequence[ProcessId], stateful: Sequence[TaskId]) -> Callable[[_Holdings], _Map]:
    def named(holdings: _Holdings) -> _Map:
        return {
            c: frozenset(stateful[t] for t in ts) for c, ts in zip(clients, holdings, strict=False)
        }

    return named


def _caught_up(
    index: CatchUpIndex, clients: Sequence[ProcessId], stateful: Sequence[TaskId]
) -> Callable[[TaskId, ProcessId], bool]:
    task_of = {t: i for i, t in enumerate(stateful)}
    client_of = {c: i for i, c in enumerate(clients)}

    def caught_up(task: TaskId, pid: ProcessId) -> bool:
        return index.is_caught_up(client_of[pid], task_of[task])

    return caught_up


def _each(pairs: AbstractSet[Pair]) -> dict[Pair, Rule]:
    return dict.fromkeys(pairs, Rule.FALLBACK)


def _rules(before: _Map, after: _Map, rule: Callable[[Pair], Rule]) -> dict[Pair, Rule]:
    """The rule of each pair ``after`` holds that ``before`` did not."""
    return {
        (task, pid): rule((task, pid))
        for pid, tasks in after.items()
        for task in tasks
        if task not in before.get(pid, ())
    }


def _previous_owners(state: ApplicationState) -> dict[TaskId, set[ProcessId]]:
    owners: dict[TaskId, set[ProcessId]] = {}
    for pid, client in state.clients.items():
        for task in client.previous_active_tasks:
            owners.setdefault(task, set()).add(pid)
    return owners
