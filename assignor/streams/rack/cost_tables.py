"""Per-rack miss tables of tasks' partitions, and KIP-925's rules for when they can help.

Why a module: ``problems.py`` turns a group into the graphs' inputs; the miss tables those
inputs, the measurements (``measure.py``) and the request's ``RackTables`` (``replicas.py``) are
built from, read from the task table's columns, are a job of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from kassign.assignor.errors import InvalidAssignment
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, TaskId, TaskTable
from kassign.assignor.streams.rack.costs import CostModel, PartitionFilter, counted_partitions
from kassign.assignor.streams.result import TaskType

__all__ = [
    "PartitionRows",
    "miss_columns",
    "misses_per_rack",
    "partition_rows",
    "rack_costs",
    "task_table",
]


def rack_costs(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    traffic_cost: int,
    *,
    cost_model: CostModel,
    task_type: TaskType,
    allow_uniform: bool = False,
) -> tuple[list[str], np.ndarray] | str:
    """The clients' racks (sorted) and ``misses[t, r]``, or why rack awareness cannot help.

    KIP-925 section 6: every client needs a rack, every partition counted needs known replica
    racks, and the traffic must be able to differ between racks. ``cost_model`` and
    ``task_type`` pick the partitions counted (``costs.counted_partitions``); the racks of every
    partition an active reads or writes must be known under either model (as Kafka's
    ``RackAwareTaskAssignor#canEnableRackAwareAssignor`` checks sources and changelogs), so the
    model changes the cost, never whether optimisation runs. ``allow_uniform`` returns the
    table even when it is the same on every rack (a caller weighing it against another).
    """
    for pid, client in state.clients.items():
        if not client.rack_id:
            return f"client {pid} has no rack"
    if traffic_cost == 0:
        return "traffic_cost is 0"
    racks = sorted({str(c.rack_id) for c in state.clients.values()})
    misses = misses_per_rack(
        state,
        tasks,
        racks,
        counted=counted_partitions(cost_model, task_type),
        required=counted_partitions(CostModel.TASK_ASSIGNMENT_UTILS, task_type),
    )
    if isinstance(misses, str):
        return misses
    if not allow_uniform and (misses == misses[:, :1]).all():
        who = "standby" if task_type is TaskType.STANDBY else "task"
        return f"every {who}'s cross-rack cost is the same on every rack"
    return racks, misses


def misses_per_rack(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    racks: list[str],
    *,
    counted: PartitionFilter,
    required: PartitionFilter,
) -> np.ndarray | str:
    """``misses[t, r]``: ``counted`` partitions of task ``t`` with no replica in rack ``r`` (the
    cost model's choice); a string names a ``required`` partition with unknown racks.

    Read from the task table's partition columns as arrays: no ``TaskInfo`` per task (that
    per-task read was most of a 10,000-task rack-aware call, issue 24).
    """
    misses, blind_part, blind_task = miss_columns(
        state, tasks, racks, counted=counted, required=required
    )
    if not blind_part.size:
        return misses
    cols = task_table(state).partition_columns()
    p, t = int(blind_part[0]), tasks[int(blind_task[0])]
    topic = cols.topic_names[cols.topics[p]]
    return f"partition {topic}-{cols.numbers[p]} of task {t} has no known replica racks"


@dataclass(frozen=True, slots=True)
class PartitionRows:
    """Every partition row of some tasks, in task order: its task's position among them, its
    row in the partition columns, its flags, its replica rack set and whether that set is
    unknown. Read once a request for both kinds' miss tables (issue 24: they read the same
    rows)."""

    task: np.ndarray
    part: np.ndarray
    flags: np.ndarray
    rack_set: np.ndarray
    unknown: np.ndarray


def partition_rows(state: ApplicationState, tasks: Sequence[TaskId]) -> PartitionRows:
    """The partition rows of ``tasks``; ``InvalidAssignment`` for a task not in the topology."""
    table = task_table(state)
    rows = np.array(table.rows_of(tasks), np.int64)
    if np.any(rows < 0):
        unknown = tasks[int(np.flatnonzero(rows < 0)[0])]
        raise InvalidAssignment("UNKNOWN_TASK_ID", f"task {unknown} is not in the topology")
    cols = table.partition_columns()
    starts = np.frombuffer(cols.starts, np.int64)
    first, sizes = starts[rows], starts[rows + 1] - starts[rows]
    task = np.repeat(np.arange(len(tasks)), sizes)  # each partition row's task, in task order
    part = np.arange(task.size) + np.repeat(first - (np.cumsum(sizes) - sizes), sizes)
    flags = np.frombuffer(cols.flags, np.uint8)[part]
    rack_set = np.frombuffer(cols.racks, np.int32)[part].astype(np.int64)
    unknown_racks = np.array([not s for s in cols.rack_sets], np.bool_)[rack_set]
    return PartitionRows(task, part, flags, rack_set, unknown_racks)


def miss_columns(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    racks: list[str],
    *,
    counted: PartitionFilter,
    required: PartitionFilter,
    rows: PartitionRows | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``misses_per_rack``'s table, and each ``required`` partition with unknown racks as its
    row in the partition columns and its task's position in ``tasks`` (in task order): a table
    built once per request serves callers that each ask about their own tasks (issue 24).
    ``rows``: ``partition_rows(state, tasks)``, where the caller has them already."""
    read = partition_rows(state, tasks) if rows is None else rows
    counts, needed = _kept(read.flags, counted), _kept(read.flags, required)
    blind = np.flatnonzero((counts | needed) & read.unknown)
    rack_sets = task_table(state).partition_columns().rack_sets
    miss = _missing(rack_sets, racks)[read.rack_set[counts]]
    owner = read.task[counts]
    out = np.zeros((len(tasks), len(racks)), np.int64)
    for r in range(len(racks)):
        checkpoint()
        out[:, r] = np.bincount(owner, weights=miss[:, r], minlength=len(tasks))
    return out, read.part[blind], read.task[blind]


def _missing(rack_sets: Sequence[frozenset[str]], racks: list[str]) -> np.ndarray:
    """``table[s, r]``: 1 when rack ``r`` holds no replica in set ``s``, filled by whole-array
    steps (a Python list of sets x racks held a serving worker's GIL for 100-250 ms at 300
    racks, so its health checks waited)."""
    position = {r: i for i, r in enumerate(racks)}
    table = np.ones((len(rack_sets), len(racks)), np.int64)
    cells = [(k, position[r]) for k, s in enumerate(rack_sets) for r in s if r in position]
    if cells:
        set_index, rack_index = np.array(cells, np.int64).T
        table[set_index, rack_index] = 0
    return table


def _kept(flags: np.ndarray, keep: PartitionFilter) -> np.ndarray:
    """Which partition rows ``keep`` counts, from their flags."""
    if not keep.mask:
        return np.ones(flags.size, np.bool_)
    kept: np.ndarray = (flags & keep.mask) != 0
    return kept


def task_table(state: ApplicationState) -> TaskTable:
    """The state's tasks as a ``TaskTable`` (a state built from a plain mapping gets one)."""
    if isinstance(state.tasks, TaskTable):
        return state.tasks
    return TaskTable.of(state.tasks.values())
