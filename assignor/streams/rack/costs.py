"""KIP-925's cost defaults by caller: light (no numpy, no OR-Tools), read before any solving."""

from __future__ import annotations

import enum

from kassign.assignor.streams.model import AssignmentConfigs

__all__ = ["CostPhase", "resolve_costs"]


class CostPhase(enum.Enum):
    """Kafka's default (traffic, non-overlap) costs by caller (KIP-925 III and 4.E)."""

    HIGH_AVAILABILITY = (10, 1)
    STICKY = (1, 10)
    STATELESS = (1, 0)


def resolve_costs(configs: AssignmentConfigs, phase: CostPhase) -> tuple[int, int]:
    """The costs to use: the configured ones, else the phase's default; stateless tasks are always 1/0."""
    traffic, non_overlap = phase.value
    if phase is CostPhase.STATELESS:
        return traffic, non_overlap
    return (
        traffic if configs.traffic_cost is None else configs.traffic_cost,
        non_overlap if configs.non_overlap_cost is None else configs.non_overlap_cost,
    )
