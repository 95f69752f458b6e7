"""kassign's assignor library: task assignment as pure functions over a frozen model.

It imports neither grpc nor prometheus_client nor protobuf: the server adapts it, the pipeline
replays it, and it can be used and tested on its own. ``streams`` is the Kafka Streams room (its
public names are re-exported here); ``consumer`` holds Kafka's classic consumer assignors (import
them from ``kassign.assignor.consumer``); ``flow`` (min-cost flow on OR-Tools), ``ordering``,
``errors`` and ``timing`` are shared.
"""

from kassign.assignor.errors import InvalidAssignment, InvalidRequest, KassignError, SolverError
from kassign.assignor.ordering import process_key, sorted_processes
from kassign.assignor.streams.api import (
    TaskAssignor,
    assign,
    get_assignor,
    register,
    registered_names,
    run,
)
from kassign.assignor.streams.building_blocks import default_standby_assignment, identity_assignment
from kassign.assignor.streams.model import (
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
from kassign.assignor.streams.result import (
    AssignedTask,
    Diagnostics,
    KafkaStreamsAssignment,
    MemberAssignment,
    TaskAssignment,
    TaskType,
    task_assignment,
)
from kassign.assignor.streams.standby import assign_standby_tasks
from kassign.assignor.streams.threads import distribute_tasks
from kassign.assignor.streams.validate import AssignmentError, validate

__all__ = [
    "LATEST_OFFSET",
    "UNKNOWN_OFFSET_SUM",
    "ApplicationState",
    "AssignedTask",
    "AssignmentConfigs",
    "AssignmentError",
    "ConsumerState",
    "Diagnostics",
    "InvalidAssignment",
    "InvalidRequest",
    "KafkaStreamsAssignment",
    "KafkaStreamsState",
    "KassignError",
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
    "application_state",
    "assign",
    "assign_standby_tasks",
    "default_standby_assignment",
    "distribute_tasks",
    "get_assignor",
    "identity_assignment",
    "process_key",
    "register",
    "registered_names",
    "run",
    "sorted_processes",
    "task_assignment",
    "validate",
]
