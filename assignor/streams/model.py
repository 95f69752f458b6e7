"""The assignor's input: a read-only picture of a Kafka Streams group (KIP-924's ApplicationState).

Inputs and outputs are different types (see ``result.py``): nothing here is ever filled in by an
assignor. Every collection is sorted on construction (tasks by ``TaskId``, clients by Java UUID
order, consumers by member id), so iterating one is deterministic.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Self
from uuid import UUID

from kassign.assignor.ordering import process_key
from kassign.kafka.subscription_info import LATEST_OFFSET, UNKNOWN_OFFSET_SUM

__all__ = [
    "LATEST_OFFSET",
    "MAX_RACK_COST",
    "UNKNOWN_OFFSET_SUM",
    "ApplicationState",
    "AssignmentConfigs",
    "ConsumerState",
    "KafkaStreamsState",
    "ProcessId",
    "RackAwareStrategy",
    "TaskId",
    "TaskInfo",
    "TaskTopicPartition",
    "application_state",
]

ProcessId = UUID

MAX_RACK_COST = 1 << 20
"""Largest ``traffic_cost`` or ``non_overlap_cost``: the KIP-925 flow solver's bound, far from
overflow even with its tie-break scaling. Here, not in ``rack.py``, so checking a request's
configs does not load the solver."""


class TaskId(tuple[bytes, int, int]):
    """A task: sub-topology and partition, optionally inside a named topology.

    Ordered like Kafka's ``TaskId.compareTo``: named topology first (Java ``String.compareTo``,
    i.e. UTF-16 code units), then sub-topology, then partition. The empty string is normalised
    to ``None``: Kafka never names a topology "".

    Why a tuple: the tuple *is* that order, ``(topology as UTF-16-BE bytes, subtopology,
    partition)`` (``b""`` for none), so hashing, equality and sorting run in C; a request hashes
    and compares task ids thousands of times.
    """

    __slots__ = ()

    def __new__(cls, subtopology: int, partition: int, named_topology: str | None = None) -> Self:
        topology = _topology_key(named_topology) if named_topology else b""
        return tuple.__new__(cls, (topology, subtopology, partition))

    @property
    def subtopology(self) -> int:
        return self[1]

    @property
    def partition(self) -> int:
        return self[2]

    @property
    def named_topology(self) -> str | None:
        return self[0].decode("utf-16-be", "surrogatepass") if self[0] else None

    @property
    def sort_key(self) -> tuple[bytes, int, int]:
        """Kafka's order as a plain tuple (kept for callers that sort with ``key=``)."""
        return (self[0], self[1], self[2])

    def __reduce__(self) -> tuple[type[TaskId], tuple[int, int, str | None]]:
        """Pickle and copy by the constructor's arguments (Spark ships task ids to workers)."""
        return (TaskId, (self[1], self[2], self.named_topology))

    def __getnewargs__(self) -> tuple[int, int, str | None]:
        return (self[1], self[2], self.named_topology)

    def __repr__(self) -> str:
        return (
            f"TaskId(subtopology={self[1]!r}, partition={self[2]!r}, "
            f"named_topology={self.named_topology!r})"
        )

    def __str__(self) -> str:
        base = f"{self[1]}_{self[2]}"
        return base if not self[0] else f"{self.named_topology}__{base}"


def _topology_key(named_topology: str) -> bytes:
    """A topology name as UTF-16-BE code units: bytes compare as Java compares the String."""
    return named_topology.encode("utf-16-be", "surrogatepass")


@dataclass(frozen=True, slots=True)
class TaskTopicPartition:
    """A partition a task reads (source) or writes its state to (changelog), with replica racks.

    ``rack_ids`` empty means the racks are unknown (KIP-925 then disables rack awareness).
    """

    topic: str
    partition: int
    is_source: bool
    is_changelog: bool
    rack_ids: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """What is known of a task: stateful or not, its stores, partitions and changelog end offsets."""

    id: TaskId
    stateful: bool
    state_store_names: tuple[str, ...] = ()
    topic_partitions: tuple[TaskTopicPartition, ...] = ()
    changelog_end_offset_sum: int = 0


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
    budget (the server fills in its default).
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

    @property
    def stateful_tasks(self) -> tuple[TaskId, ...]:
        return tuple(t for t, info in self.tasks.items() if info.stateful)

    @property
    def stateless_tasks(self) -> tuple[TaskId, ...]:
        return tuple(t for t, info in self.tasks.items() if not info.stateful)


def application_state(
    tasks: Iterable[TaskInfo],
    clients: Iterable[KafkaStreamsState],
    configs: AssignmentConfigs | None = None,
    now_ms: int = 0,
) -> ApplicationState:
    """An ``ApplicationState`` with tasks and clients in their canonical order."""
    task_map = {t.id: t for t in sorted(tasks, key=lambda t: t.id)}
    client_map = {c.process_id: c for c in sorted(clients, key=lambda c: process_key(c.process_id))}
    return ApplicationState(
        tasks=task_map, clients=client_map, configs=configs or AssignmentConfigs(), now_ms=now_ms
    )
