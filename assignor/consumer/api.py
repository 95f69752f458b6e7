"""The consumer assignors by Kafka's names (``partition.assignment.strategy``'s ``name()``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from kassign.assignor.consumer import cooperative_sticky, range_assignor, roundrobin, sticky
from kassign.assignor.consumer.model import ConsumerGroup
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.errors import InvalidRequest

__all__ = ["ASSIGNORS", "ConsumerAssignor", "assign"]

ConsumerAssignor = Callable[[ConsumerGroup], GroupAssignment]

ASSIGNORS: Mapping[str, ConsumerAssignor] = MappingProxyType(
    {
        range_assignor.NAME: range_assignor.assign_range,
        roundrobin.NAME: roundrobin.assign_roundrobin,
        sticky.NAME: sticky.assign_sticky,
        cooperative_sticky.NAME: cooperative_sticky.assign_cooperative_sticky,
    }
)
"""Kafka's four classic assignors: ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``."""


def assign(name: str, group: ConsumerGroup) -> GroupAssignment:
    """Run the assignor Kafka calls ``name``; an unknown name is the caller's error."""
    assignor = ASSIGNORS.get(name)
    if assignor is None:
        known = ", ".join(sorted(ASSIGNORS))
        raise InvalidRequest(f"unknown assignor {name!r} (known: {known})", field="assignor")
    return assignor(group)
