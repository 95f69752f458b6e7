"""KIP-925's cost defaults by caller and its two cost models: light (no numpy, no OR-Tools)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kassign.assignor.streams.model import AssignmentConfigs, TaskTopicPartition
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.task_columns import CHANGELOG, SOURCE

__all__ = ["CostModel", "CostPhase", "PartitionFilter", "counted_partitions", "resolve_costs"]


@dataclass(frozen=True, slots=True)
class PartitionFilter:
    """Whether a task's partition costs ``traffic_cost`` when it has no replica in the client's rack.

    ``mask``: the partition flags that count (``task_table.SOURCE | CHANGELOG``), 0 for every
    partition. A value rather than a function, so a pass over the task table's columns can
    apply it to every partition at once; calling it tests one ``TaskTopicPartition``.
    """

    mask: int

    def __call__(self, tp: TaskTopicPartition) -> bool:
        if not self.mask:
            return True
        flags = (SOURCE if tp.is_source else 0) | (CHANGELOG if tp.is_changelog else 0)
        return bool(flags & self.mask)


class CostModel(enum.Enum):
    """Which partitions of a task count towards its cross-rack cost; Kafka has two.

    - ``BUILT_IN`` (``RackAwareTaskAssignor#getCost``, used by ``HighAvailabilityTaskAssignor``
      and ``LegacyStickyTaskAssignor``): an active counts its source partitions, a standby its
      changelog partitions. An active consumes its sources (a rack-local replica serves it by
      follower fetching) and produces to each changelog's leader, wherever that is.
    - ``TASK_ASSIGNMENT_UTILS`` (KIP-924 ``TaskAssignmentUtils#optimizeRackAwareActiveTasks`` /
      ``#optimizeRackAwareStandbyTasks``, offered to custom assignors): an active counts all its
      partitions, changelogs included; a standby its changelog partitions.
    """

    BUILT_IN = "built_in"
    TASK_ASSIGNMENT_UTILS = "task_assignment_utils"


_SOURCES, _CHANGELOGS, _EVERY = (
    PartitionFilter(SOURCE),
    PartitionFilter(CHANGELOG),
    PartitionFilter(0),
)


def counted_partitions(model: CostModel, task_type: TaskType) -> PartitionFilter:
    """The partitions ``model`` counts for a ``task_type`` task (standbys: changelogs in both)."""
    if task_type is TaskType.STANDBY:
        return _CHANGELOGS
    return _SOURCES if model is CostModel.BUILT_IN else _EVERY


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
