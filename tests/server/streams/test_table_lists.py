"""``table_lists``: the compiled writer (``kassign_native.streams_lists``) orders each list by
the task table and reads each member's partitions from the table's columns, and its bytes are
what protobuf's ``SerializeToString`` writes for the lists ordered and gathered in Python."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import TaskId
from kassign.assignor.streams.task import TaskInfo, TaskTopicPartition
from kassign.assignor.streams.task_table import TaskTable
from kassign.server.streams.response_wire import ClientEntry, MemberEntry, table_lists
from kassign.v1 import assignment_pb2 as pb

_NAMES = (None, "a", "b", "é", "\U0001d11e", "\uff61", "日本")
"""Named topologies: none, ASCII, non-ASCII, and one outside the BMP, whose UTF-16 code
units sort before U+FF61's though its code point sorts after (Kafka's order is UTF-16's)."""
_TOPICS = ("t", "T", "ü", "\U0001d11e", "\uff61", "orders")
_INT32 = st.integers(0, 2**31 - 1)
_SMALL = st.integers(0, 3)
_IDS = st.builds(
    TaskId, st.one_of(_SMALL, _INT32), st.one_of(_SMALL, _INT32), st.sampled_from(_NAMES)
)
_PARTITION = st.builds(
    TaskTopicPartition,
    st.sampled_from(_TOPICS),
    st.one_of(_SMALL, _INT32),
    st.booleans(),
    st.booleans(),
)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[TaskTable, list[TaskId]]:
    """A table and tasks to list: its own, some twice over, and some it lacks."""
    ids = draw(st.lists(_IDS, max_size=12, unique=True))
    infos = [
        TaskInfo(
            t,
            draw(st.booleans()),
            topic_partitions=tuple(
                {(p.topic, p.partition): p for p in draw(st.lists(_PARTITION, max_size=4))}.values()
            ),
        )
        for t in ids
    ]
    others = draw(st.lists(_IDS.filter(lambda t: t not in ids), max_size=3))
    return TaskTable.of(infos), ids + others


def _pb_task(task: TaskId) -> pb.TaskId:
    name = task.named_topology or ""
    return pb.TaskId(subtopology=task.subtopology, partition=task.partition, named_topology=name)


def _ordered(table: TaskTable, tasks: list[TaskId]) -> list[TaskId]:
    """The answer's order, as the encoder wrote it in Python: the table's, then the others."""
    ordered = sorted(tasks)
    return [t for t in ordered if t in table] + [t for t in ordered if t not in table]


def _sources(table: TaskTable, tasks: list[TaskId]) -> list[pb.TopicPartition]:
    found = sorted({tp for t in tasks for tp in table.source_partitions(t)})
    return [pb.TopicPartition(topic=topic, partition=n) for topic, n in found]


@settings(max_examples=80, deadline=None)
@given(_tables(), st.data())
def test_the_lists_are_protobufs_bytes_for_the_lists_ordered_by_the_table(
    table_and_tasks: tuple[TaskTable, list[TaskId]], data: st.DataObject
) -> None:
    table, tasks = table_and_tasks
    some = st.lists(st.sampled_from(tasks), max_size=6) if tasks else st.just([])
    clients = [
        ClientEntry(f"p{i}", data.draw(some), data.draw(some), i * 2**40, "r", ["m", ""], "")
        for i in range(data.draw(st.integers(0, 2)))
    ]
    members = [
        MemberEntry(f"m{i}", f"p{i}", data.draw(some), data.draw(some))
        for i in range(data.draw(st.integers(0, 3)))
    ]
    expected = pb.AssignResponse()
    for c in clients:
        expected.clients.add(
            process_id=c.process_id,
            active_tasks=[_pb_task(t) for t in _ordered(table, list(c.active))],
            standby_tasks=[_pb_task(t) for t in _ordered(table, list(c.standby))],
            followup_rebalance_deadline_ms=c.followup_rebalance_deadline_ms,
            rack_id=c.rack_id,
            member_ids=c.member_ids,
        )
    for m in members:
        active, standby = _ordered(table, list(m.active)), _ordered(table, list(m.standby))
        expected.members.add(
            member_id=m.member_id,
            process_id=m.process_id,
            active_tasks=[_pb_task(t) for t in active],
            standby_tasks=[_pb_task(t) for t in standby],
            active_partitions=_sources(table, active),
            standby_partitions=_sources(table, standby),
        )
    assert table_lists(table, clients, members) == expected.SerializeToString()


def test_a_partition_given_is_written_as_given_and_a_bad_task_id_is_refused() -> None:
    table = TaskTable.of([TaskInfo(TaskId(0, 1), False)])
    given = MemberEntry("m", "p", [TaskId(0, 1)], [], [("z", 1), ("a", 0)], [])
    expected = pb.AssignResponse()
    expected.members.add(
        member_id="m",
        process_id="p",
        active_tasks=[pb.TaskId(partition=1)],
        active_partitions=[pb.TopicPartition(topic="z", partition=1), pb.TopicPartition(topic="a")],
    )
    assert table_lists(table, [], [given]) == expected.SerializeToString()
    with pytest.raises(TypeError):
        table_lists(table, [], [MemberEntry("m", "p", ["0_1"], [])])  # type: ignore[list-item]
