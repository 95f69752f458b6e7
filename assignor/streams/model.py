"""The assignor's input: a read-only picture of a Kafka Streams group (KIP-924's ApplicationState).

Inputs and outputs are different types (see ``result.py``): nothing here is ever filled in by an
assignor. Every collection is sorted on construction (tasks by ``TaskId``, clients by Java UUID
order, consumers by member id), so iterating one is deterministic.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from kassign.assignor.load.figures import Balance
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.task import TaskId, TaskInfo, TaskTopicPartition, positions
from kassign.assignor.streams.task_table import TaskTable
from kassign.kafka.subscription_info import LATEST_OFFSET, UNKNOWN_OFFSET_SUM

__all__ = [
    "LATEST_OFFSET",
    "MAX_RACK_COST",
    "UNKNOWN_OFFSET_SUM",
    "ApplicationState",
    "AssignmentConfigs",
    "Balance",
    "ConsumerState",
    "KafkaStreamsState",
    "ProcessId",
    "RackAwareStrategy",
    "TaskId",
    "TaskInfo",
    "TaskLoads",
    "TaskTable",
    "TaskTopicPartition",
    "application_state",
    "positions",
]

ProcessId = UUID

MAX_RACK_COST = 1 << 20
"""Largest ``traffic_cost`` or ``non_overlap_cost``: the KIP-925 flow solver's bound, far from
overflow even with its tie-break scaling. Here, not in ``rack.py``, so checking a request's
configs does not load the solver."""


@dataclass(frozen=True, slots=True)
class ConsumerState:
    """One consumer (stream thread) of a client and what it owned before this rebalance.

    ``previous_active`` comes from the consumer's owned partitions (or v1-6 prev tasks);
    ``previous_stateful`` from the tasks it reported state for. Thread distribution uses both
    to keep tasks on the thread that already has them.
    """

    member_id: str
    previous_active: frozenset[TaskId] = frozenset()
    previous_stateful: frozenset[TaskId] = frozenset()


@dataclass(frozen=True, slots=True)
class KafkaStreamsState:
    """A Kafka Streams client (one process) as its consumers reported it.

    ``task_lags`` holds, for every stateful task of the topology, the client's lag: ``LATEST_OFFSET``
    (-2) for a running active, ``UNKNOWN_OFFSET_SUM`` (-3) when unknown, otherwise
    end-offset-sum minus offset sum (see ``lags.py``, which builds it). ``previous_standby_tasks``
    holds every task with local state that was not a previous active (KIP-441).
    """

    process_id: ProcessId
    consumers: tuple[ConsumerState, ...]
    previous_active_tasks: frozenset[TaskId] = frozenset()
    previous_standby_tasks: frozenset[TaskId] = frozenset()
    task_lags: Mapping[TaskId, int] = field(default_factory=dict)
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    host_info: str | None = None

    @property
    def num_threads(self) -> int:
        """The client's capacity: one per consumer (KIP-441 balances load per thread)."""
        return len(self.consumers)

    @property
    def consumer_ids(self) -> tuple[str, ...]:
        return tuple(c.member_id for c in self.consumers)

    def lag_for(self, task: TaskId) -> int:
        """The client's lag on a stateful task; a task it never reported has no state here."""
        return self.task_lags[task]

    @property
    def previous_tasks(self) -> frozenset[TaskId]:
        return self.previous_active_tasks | self.previous_standby_tasks


class RackAwareStrategy(enum.Enum):
    """KIP-925 ``rack.aware.assignment.strategy``."""

    NONE = "none"
    MIN_TRAFFIC = "min_traffic"
    BALANCE_SUBTOPOLOGY = "balance_subtopology"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignmentConfigs:
    """The Streams configs that steer assignment, with Kafka's defaults.

    ``traffic_cost`` and ``non_overlap_cost`` left ``None`` take the per-assignor defaults of
    KIP-925 (high availability 10/1, sticky 1/10). ``assignment_time_budget_ms`` ``None`` means no
    budget (the server fills in its default). ``standby_rack_spread`` (kassign's own, off as in
    Kafka): the rack stands in for the one standby tag when no tags are configured (``tags.py``).
    ``balance`` (issue 25): ``COUNT``, Kafka's tasks per thread, or ``LOAD``, each task's
    ``TaskLoads`` load per thread (docs/load-aware.md).
    """

    assignor: str = "high_availability"
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: tuple[str, ...] = ()
    rack_aware_strategy: RackAwareStrategy = RackAwareStrategy.NONE
    traffic_cost: int | None = None
    non_overlap_cost: int | None = None
    assignment_time_budget_ms: int | None = None
    standby_rack_spread: bool = False
    balance: Balance = Balance.COUNT


@dataclass(frozen=True, slots=True)
class TaskLoads:
    """What a task costs (issue 25), read only with ``balance`` ``LOAD``: ``loads``, its work
    (any unit, non-negative; a task not listed costs 1, so none listed is counting), and
    ``state_bytes``, its local state (what moving its active costs to restore; unknown where
    not listed). Only the tasks a request gave figures for are kept."""

    loads: Mapping[TaskId, float] = field(default_factory=dict)
    state_bytes: Mapping[TaskId, int] = field(default_factory=dict)

    def load_of(self, task: TaskId) -> float:
        return self.loads.get(task, 1.0)

    def state_of(self, task: TaskId) -> int:
        return self.state_bytes.get(task, 0)


@dataclass(frozen=True, slots=True)
class ApplicationState:
    """Everything an assignor may read: tasks, clients, configs and the time of the rebalance.

    Build it with ``application_state(...)``, which sorts: tasks by ``TaskId``, clients by Java
    UUID order. ``now_ms`` is given, never read from a clock, so results are reproducible.
    """

    tasks: Mapping[TaskId, TaskInfo]
    clients: Mapping[ProcessId, KafkaStreamsState]
    configs: AssignmentConfigs = field(default_factory=AssignmentConfigs)
    now_ms: int = 0
    task_loads: TaskLoads = field(default_factory=TaskLoads)

    @property
    def stateful_tasks(self) -> tuple[TaskId, ...]:
        if isinstance(self.tasks, TaskTable):  # from its column, building no TaskInfo
            return self.tasks.stateful_ids()
        return tuple(t for t, info in self.tasks.items() if info.stateful)

    @property
    def stateless_tasks(self) -> tuple[TaskId, ...]:
        if isinstance(self.tasks, TaskTable):
            return self.tasks.stateful_ids(False)
        return tuple(t for t, info in self.tasks.items() if not info.stateful)

    def is_stateless(self, task: TaskId) -> bool:
        """Whether the topology has ``task`` and it is stateless (from the table's column)."""
        tasks = self.tasks
        if isinstance(tasks, TaskTable):
            return tasks.is_stateless(task)
        info = tasks.get(task)
        return info is not None and not info.stateful

    def end_offset_sum(self, task: TaskId) -> int:
        """The task's changelog end-offset sum (``KeyError`` for a task the topology lacks)."""
        if isinstance(self.tasks, TaskTable):
            return self.tasks.end_offset_sum(task)
        return self.tasks[task].changelog_end_offset_sum

    def end_offset_sums_of(self, tasks: Sequence[TaskId]) -> Sequence[int]:
        """``end_offset_sum`` of each of ``tasks``, read in one pass over the table."""
        if isinstance(self.tasks, TaskTable):
            return self.tasks.end_offset_sums_of(tasks)
        return [self.tasks[t].changelog_end_offset_sum for t in tasks]


def application_state(
    tasks: Iterable[TaskInfo],
    clients: Iterable[KafkaStreamsState],
    configs: AssignmentConfigs | None = None,
    now_ms: int = 0,
    task_loads: TaskLoads | None = None,
) -> ApplicationState:
    """An ``ApplicationState`` with tasks and clients in their canonical order."""
    task_map = TaskTable.of(tasks)
    client_map = {c.process_id: c for c in sorted(clients, key=lambda c: process_key(c.process_id))}
    return ApplicationState(
        tasks=task_map,
        clients=client_map,
        configs=configs or AssignmentConfigs(),
        now_ms=now_ms,
        task_loads=task_loads or TaskLoads(),
    )
