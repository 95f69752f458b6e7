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

Warm-ups (``Trace.warmups``) are ``WARM_UP`` whatever stage last placed them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.standby import StandbyPlacement
from kassign.assignor.streams.tags import tag_layout
from kassign.assignor.streams.trace import Pair, Phase, Rule, Stage, Trace

__all__ = ["HaPhases", "StandbyPhases", "ha_trace"]

_Map = Mapping[ProcessId, AbstractSet[TaskId]]


def _no_holdings() -> _Map:
    return {}


@dataclass(frozen=True, slots=True)
class StandbyPhases:
    """Phase 2's first steps: the placement, and (built only when asked) the balanced holdings."""

    placement: StandbyPlacement = field(default_factory=lambda: StandbyPlacement({}))
    balanced: Callable[[], _Map] = _no_holdings


@dataclass(frozen=True, slots=True, kw_only=True)
class HaPhases:
    """Holdings after each phase: actives (balanced guess, rack trimmed, moved, joint stage),
    standbys (rack trimmed, after active movements, after standby movements, joint stage),
    stateless actives (least loaded, rack trimmed)."""

    actives: tuple[_Map, _Map, _Map, _Map]
    standby_placed: StandbyPhases
    standbys: tuple[_Map, _Map, _Map, _Map]
    stateless: tuple[_Map, _Map]
    warmups: frozenset[Pair]


def ha_trace(
    state: ApplicationState, phases: HaPhases, *, caught_up: Callable[[TaskId, ProcessId], bool]
) -> Trace:
    """The stages of one high-availability assignment (see the module docstring)."""
    stateful = frozenset(state.stateful_tasks)
    stateless = frozenset(state.stateless_tasks)
    balanced, trimmed, moved, joint = phases.actives
    placed = phases.standby_placed
    standby_trimmed, after_actives, after_standbys, standby_joint = phases.standbys
    tag_rule = Rule.TAG_SPREAD if tag_layout(state).tag_aware else Rule.BALANCE
    owners = _previous_owners(state)

    def runner(pair: Pair) -> Rule:
        task, pid = pair
        if pid in owners.get(task, ()):
            return Rule.STICKY
        return Rule.CAUGHT_UP if caught_up(task, pid) else Rule.FALLBACK

    def copy(pair: Pair) -> Rule:
        return Rule.CAUGHT_UP if caught_up(*pair) else Rule.FALLBACK

    active, standby = TaskType.ACTIVE, TaskType.STANDBY
    stages = (
        Stage(active, Rule.BALANCE, balanced, scope=stateful),
        Stage(active, Rule.RACK_COST, trimmed, scope=stateful),
        Stage(
            standby,
            tag_rule,
            placed.placement.standby,
            _each(placed.placement.untagged),
            phase=Phase.PLACEMENT,
        ),
        Stage(standby, Rule.BALANCE, placed.balanced()),
        Stage(standby, Rule.RACK_COST, standby_trimmed),
        Stage(
            active,
            Rule.CAUGHT_UP,
            moved,
            _rules(trimmed, moved, runner),
            scope=stateful,
            phase=Phase.MOVEMENT,
        ),
        Stage(standby, Rule.CAUGHT_UP, after_actives, phase=Phase.MOVEMENT),
        Stage(
            standby,
            Rule.CAUGHT_UP,
            after_standbys,
            _rules(after_actives, after_standbys, copy),
            phase=Phase.MOVEMENT,
        ),
        Stage(active, Rule.RACK_COST, joint, scope=stateful),
        Stage(standby, Rule.RACK_COST, standby_joint),
        Stage(active, Rule.BALANCE, phases.stateless[0], scope=stateless),
        Stage(active, Rule.RACK_COST, phases.stateless[1], scope=stateless),
    )
    return Trace(stages, phases.warmups)


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
