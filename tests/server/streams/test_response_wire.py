"""``WireResponse``: the lists written as bytes are the bytes the protobuf runtime writes for
the same messages, so the servicer's answer is the message's serialisation, byte for byte."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import TaskId
from kassign.server.streams.response_wire import (
    ClientEntry,
    MemberEntry,
    WireResponse,
    client_entry,
    member_entry,
)
from kassign.v1 import assignment_pb2 as pb

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_TASKS = st.lists(
    st.builds(
        TaskId,
        st.integers(0, 2**31 - 1),
        st.integers(0, 2**31 - 1),
        st.one_of(st.none(), _TEXT.filter(bool)),
    ),
    max_size=6,
)
_PARTITIONS = st.lists(st.tuples(_TEXT.filter(bool), st.integers(0, 2**31 - 1)), max_size=6)


def _task(task: TaskId) -> pb.TaskId:
    return pb.TaskId(
        subtopology=task.subtopology,
        partition=task.partition,
        named_topology=task.named_topology or "",
    )


def _partition(tp: tuple[str, int]) -> pb.TopicPartition:
    return pb.TopicPartition(topic=tp[0], partition=tp[1])


_CLIENTS = st.builds(
    ClientEntry,
    _TEXT,
    _TASKS,
    _TASKS,
    st.integers(0, 2**63 - 1),
    _TEXT,
    st.lists(_TEXT, max_size=3),
    _TEXT,
)
_MEMBERS = st.builds(MemberEntry, _TEXT, _TEXT, _TASKS, _TASKS, _PARTITIONS, _PARTITIONS)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CLIENTS, max_size=3), st.lists(_MEMBERS, max_size=3), st.integers(0, 7))
def test_lists_are_the_bytes_the_runtime_writes(
    clients: list[ClientEntry], members: list[MemberEntry], tasks: int
) -> None:
    expected = pb.AssignResponse(
        error=pb.ASSIGNMENT_ERROR_UNKNOWN_TASK_ID if tasks % 2 else pb.ASSIGNMENT_ERROR_NONE,
        report=pb.AssignmentReport(assignor="high_availability", tasks=tasks),
    )
    for c in clients:
        expected.clients.add(
            process_id=c.process_id,
            active_tasks=[_task(t) for t in c.active],
            standby_tasks=[_task(t) for t in c.standby],
            followup_rebalance_deadline_ms=c.followup_rebalance_deadline_ms,
            rack_id=c.rack_id,
            member_ids=c.member_ids,
            user_end_point=c.user_end_point,
        )
    for m in members:
        expected.members.add(
            member_id=m.member_id,
            process_id=m.process_id,
            active_tasks=[_task(t) for t in m.active],
            standby_tasks=[_task(t) for t in m.standby],
            active_partitions=[_partition(p) for p in m.active_partitions],
            standby_partitions=[_partition(p) for p in m.standby_partitions],
        )
    head = pb.AssignResponse(error=expected.error, report=expected.report)
    lists = b"".join([*map(client_entry, clients), *map(member_entry, members)])
    wire = WireResponse(head, lists, len(members), 0)
    assert wire.SerializeToString() == expected.SerializeToString()
    assert wire.message() == expected
    assert wire.report == expected.report
    assert wire.error == expected.error
