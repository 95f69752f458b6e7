"""The topology from the request: ``TaskInfo`` values and the task each source partition feeds.

Kafka maps owned partitions back to tasks through the source partitions
(``taskForPartition``); a partition that is the source of two tasks would make that mapping
ambiguous, so it is refused here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kassign.assignor.errors import InvalidRequest
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import TaskId, TaskInfo, TaskTopicPartition
from kassign.v1 import assignment_pb2 as pb

__all__ = ["TaskIds", "Topology", "decode_task_id", "decode_topology"]

TaskIds = dict[tuple[int, int, str], TaskId]
"""Decoded task ids by (sub-topology, partition, named topology): one object per task per
request, so the tens of thousands of ids members report are built once and compare by identity."""


def decode_task_id(
    task: pb.TaskId, field: str, member: str | None = None, known: TaskIds | None = None
) -> TaskId:
    """A ``TaskId``; Kafka's sub-topology and partition numbers are never negative."""
    key = (task.subtopology, task.partition, task.named_topology)
    if known is not None and key in known:
        return known[key]
    if task.subtopology < 0 or task.partition < 0:
        raise InvalidRequest(
            f"negative sub-topology or partition in task {task.subtopology}_{task.partition}",
            field=field,
            member=member,
        )
    decoded = TaskId(task.subtopology, task.partition, task.named_topology or None)
    if known is not None:
        known[key] = decoded
    return decoded


@dataclass(frozen=True, slots=True)
class Topology:
    """Tasks in ``TaskId`` order, the task of every source partition, and lookups built once.

    ``end_offset_sums`` (stateful tasks only) is shared by every client's lags: never mutated.
    """

    tasks: tuple[TaskInfo, ...]
    source_tasks: Mapping[tuple[str, int], TaskId]
    source_topics: Mapping[str, Mapping[int, TaskId]]  # the same, by topic then partition
    task_ids: frozenset[TaskId]
    end_offset_sums: Mapping[TaskId, int]

    def interned(self) -> TaskIds:
        """A fresh cache for ``decode_task_id``, seeded with the topology's own ids."""
        return {
            (t.id.subtopology, t.id.partition, t.id.named_topology or ""): t.id for t in self.tasks
        }


_NO_RACKS: frozenset[str] = frozenset()
_EMPTY_RACK = frozenset({""})


def _partition(tp: pb.TaskTopicPartition, task_field: str, index: int) -> TaskTopicPartition:
    """One checked partition; the field path is only spelt out for an error."""
    topic, partition, racks = tp.topic, tp.partition, tp.rack_ids
    if not topic:
        raise InvalidRequest("topic is empty", field=f"{task_field}.topic_partitions[{index}]")
    if partition < 0:
        raise InvalidRequest(
            f"negative partition {partition}", field=f"{task_field}.topic_partitions[{index}]"
        )
    return TaskTopicPartition(
        topic,
        partition,
        tp.is_source,
        tp.is_changelog,
        frozenset(racks) - _EMPTY_RACK if racks else _NO_RACKS,
    )


def _task(task: pb.TaskInfo, field: str) -> TaskInfo:
    if not task.HasField("id"):
        raise InvalidRequest("task id is missing", field=f"{field}.id")
    end_offset_sum = task.changelog_end_offset_sum
    if end_offset_sum < 0:
        raise InvalidRequest(
            f"negative changelog end offset sum {end_offset_sum}",
            field=f"{field}.changelog_end_offset_sum",
        )
    partitions = tuple([_partition(tp, field, i) for i, tp in enumerate(task.topic_partitions)])
    return TaskInfo(
        decode_task_id(task.id, f"{field}.id"),
        task.stateful,
        tuple(task.state_store_names),
        partitions,
        end_offset_sum,
    )


def decode_topology(tasks: Sequence[pb.TaskInfo]) -> Topology:
    """Every task once; every source partition feeding exactly one task."""
    seen: dict[TaskId, int] = {}
    sources: dict[tuple[str, int], TaskId] = {}
    decoded = []
    for i, raw in enumerate(tasks):
        checkpoint()
        info = _task(raw, f"tasks[{i}]")
        if info.id in seen:
            raise InvalidRequest(
                f"duplicate task id {info.id} (also tasks[{seen[info.id]}])", field=f"tasks[{i}].id"
            )
        seen[info.id] = i
        for tp in info.topic_partitions:
            if not tp.is_source:
                continue
            key = (tp.topic, tp.partition)
            if key in sources and sources[key] != info.id:
                raise InvalidRequest(
                    f"source partition {tp.topic}-{tp.partition} also feeds task {sources[key]}",
                    field=f"tasks[{i}].topic_partitions",
                )
            sources[key] = info.id
        decoded.append(info)
    ordered = tuple(sorted(decoded, key=lambda t: t.id))
    end_offset_sums = {t.id: t.changelog_end_offset_sum for t in ordered if t.stateful}
    topics: dict[str, dict[int, TaskId]] = {}
    for (topic, partition), task in sources.items():
        topics.setdefault(topic, {})[partition] = task
    return Topology(ordered, sources, topics, frozenset(seen), end_offset_sums)
