"""The consumer assignors by Kafka's names (``partition.assignment.strategy``'s ``name()``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Protocol

from kassign.assignor.consumer import (
    cooperative_sticky,
    load_balanced,
    rack_optimal,
    range_assignor,
    roundrobin,
    sticky,
)
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.errors import InvalidRequest, unknown_name
from kassign.assignor.load.figures import Balance

__all__ = ["ASSIGNORS", "KAFKA_ASSIGNORS", "LOAD_AWARE", "ConsumerAssignor", "assign"]


class ConsumerAssignor(Protocol):
    """An assignor: the group, and the options only kassign's own assignor reads."""

    def __call__(
        self, group: ConsumerGroup, options: AssignOptions = ..., /
    ) -> GroupAssignment: ...


def _kafkas(assignor: Callable[[ConsumerGroup], GroupAssignment]) -> ConsumerAssignor:
    """Kafka's assignors take no options: theirs are Kafka's configs, not ours."""

    def run(group: ConsumerGroup, options: AssignOptions = AssignOptions(), /) -> GroupAssignment:
        return assignor(group)

    return run


KAFKA_ASSIGNORS = (
    range_assignor.NAME,
    roundrobin.NAME,
    sticky.NAME,
    cooperative_sticky.NAME,
)
"""Kafka's four classic assignors' names, whose answers equal Kafka's."""

LOAD_AWARE = (sticky.NAME, cooperative_sticky.NAME, rack_optimal.NAME)
"""The assignors that balance, so have a load-aware mode (``range`` and ``roundrobin`` spread
each topic by rule, with nothing to balance by load)."""

ASSIGNORS: Mapping[str, ConsumerAssignor] = MappingProxyType(
    {
        range_assignor.NAME: _kafkas(range_assignor.assign_range),
        roundrobin.NAME: _kafkas(roundrobin.assign_roundrobin),
        sticky.NAME: _kafkas(sticky.assign_sticky),
        cooperative_sticky.NAME: _kafkas(cooperative_sticky.assign_cooperative_sticky),
        rack_optimal.NAME: rack_optimal.assign_rack_optimal,
    }
)
"""Kafka's four (``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``) and kassign's
own ``rack-optimal`` (docs/consumer-assignors.md)."""


def assign(
    name: str, group: ConsumerGroup, options: AssignOptions = AssignOptions()
) -> GroupAssignment:
    """Run the assignor called ``name``; an unknown name is the caller's error. With
    ``balance=LOAD`` the balancing ones run in their load-aware mode (``load_balanced``)."""
    assignor = ASSIGNORS.get(name)
    if assignor is None:
        raise InvalidRequest(unknown_name("assignor", name, ASSIGNORS), field="assignor")
    if options.balance is Balance.LOAD:
        if name not in LOAD_AWARE:
            raise InvalidRequest(
                f"balance LOAD is for {', '.join(LOAD_AWARE)}, not {name!r}",
                field="options.balance",
            )
        return load_balanced.assign_load_balanced(name, group, options, assignor)
    return assignor(group, options)
