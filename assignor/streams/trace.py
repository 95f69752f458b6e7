"""What an assignor's phases did, recorded as they ran: the raw material of an explanation.

An assignor asked to explain (``api.run(..., explain=True)``) returns, beside its assignment, a
``Trace``: each phase's holdings of one kind of replica, in the order the phases ran, with the
rule the phase applies. A (task, client) pair a stage holds that the previous stage of its kind
did not hold was placed by that stage's rule (or by the stage's own per-pair ``rules``, where
one phase applies several); a pair a later stage drops is forgotten. So the rule an explanation
gives is the rule of the phase that put the replica where it ended up: nothing is inferred
from the final answer alone. Without ``explain`` no trace is built (the phases' holdings exist
anyway; only the stages' ``dict`` views are extra).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from kassign.assignor.placement import Rule
from kassign.assignor.streams.model import ProcessId, TaskId
from kassign.assignor.streams.result import TaskType

__all__ = ["Pair", "Phase", "Placed", "Rule", "Stage", "Trace", "attribute"]

Pair = tuple[TaskId, ProcessId]
"""One replica: a task on a client."""


class Phase(enum.Enum):
    """Which kind of phase a stage is, where one rule reads differently in two phases (a
    fallback in standby placement is "tags could not spread it", in a movement "no caught-up
    client was free")."""

    OTHER = "other"
    PLACEMENT = "placement"
    MOVEMENT = "movement"


@dataclass(frozen=True, slots=True)
class Stage:
    """One phase's holdings of ``kind`` for the tasks in ``scope`` (``None``: every task).

    New pairs take ``rules[pair]`` when given, else ``rule``. Pairs of tasks outside ``scope``
    are untouched (the stateless phase does not drop stateful actives).
    """

    kind: TaskType
    rule: Rule
    holdings: Mapping[ProcessId, AbstractSet[TaskId]]
    rules: Mapping[Pair, Rule] = field(default_factory=dict)
    scope: AbstractSet[TaskId] | None = None
    phase: Phase = Phase.OTHER

    def pairs(self) -> Iterator[Pair]:
        for pid, tasks in self.holdings.items():
            for task in tasks:
                yield task, pid


@dataclass(frozen=True, slots=True)
class Placed:
    """Who placed a pair, and whom the same stage took that task from (the move's source)."""

    rule: Rule
    source: ProcessId | None = None
    phase: Phase = Phase.OTHER


@dataclass(frozen=True, slots=True)
class Trace:
    """An assignment's stages in the order they ran (its warm-ups are named in its
    ``Diagnostics.warmup_replicas``, which the moves split reads too); ``wanted``: under
    ``balance`` ``LOAD``, per active KIP-441 held on a caught-up client, the client load wanted."""

    stages: tuple[Stage, ...] = ()
    wanted: Mapping[TaskId, ProcessId] = field(default_factory=dict)


def attribute(trace: Trace, kind: TaskType) -> dict[Pair, Placed]:
    """Per pair the last stage of ``kind`` holds, the rule of the stage that added it."""
    placed: dict[Pair, Placed] = {}
    for stage in trace.stages:
        if stage.kind is not kind:
            continue
        now = set(stage.pairs())
        dropped: dict[TaskId, ProcessId] = {}
        for pair in [p for p in placed if stage.scope is None or p[0] in stage.scope]:
            if pair not in now:
                del placed[pair]
                dropped.setdefault(pair[0], pair[1])
        for pair in sorted(now - placed.keys()):
            placed[pair] = Placed(
                stage.rules.get(pair, stage.rule), dropped.get(pair[0]), stage.phase
            )
    return placed
