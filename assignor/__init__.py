"""kassign's assignor library: Kafka Streams task assignment as pure functions over a frozen model.

It imports neither grpc nor prometheus_client: the server adapts it, the pipeline replays it,
and it can be used and tested on its own.
"""

from assignor.api import TaskAssignor, assign, get_assignor, register, registered_names
from assignor.errors import InvalidAssignment, InvalidRequest, KassignError, SolverError
from assignor.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    application_state,
)
from assignor.ordering import process_key, sorted_processes
from assignor.result import (
    AssignedTask,
    Diagnostics,
    KafkaStreamsAssignment,
    MemberAssignment,
    TaskAssignment,
    TaskType,
    task_assignment,
)

__all__ = [
    "ApplicationState",
    "AssignedTask",
    "AssignmentConfigs",
    "ConsumerState",
    "Diagnostics",
    "InvalidAssignment",
    "InvalidRequest",
    "KafkaStreamsAssignment",
    "KafkaStreamsState",
    "KassignError",
    "LATEST_OFFSET",
    "MemberAssignment",
    "ProcessId",
    "RackAwareStrategy",
    "SolverError",
    "TaskAssignment",
    "TaskAssignor",
    "TaskId",
    "TaskInfo",
    "TaskTopicPartition",
    "TaskType",
    "UNKNOWN_OFFSET_SUM",
    "application_state",
    "assign",
    "get_assignor",
    "process_key",
    "register",
    "registered_names",
    "sorted_processes",
    "task_assignment",
]
