"""The compiled read of a request's tasks (``topology.task_columns``, assignor/native/src/tasks.rs)
against protobuf's accessors: the same table, source index, loads and limit counts however the
bytes split a task's fields; each check's wording, field and order; bad bytes a clean error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import TaskId, TaskInfo, TaskTopicPartition
from kassign.assignor.streams.task_table import TaskTable
from kassign.server.limits import LimitExceeded, RequestLimits
from kassign.server.streams.decode import decode_request
from kassign.server.streams.decode.topology import decode_topology, task_columns
from kassign.v1 import assignment_pb2 as pb

from tests.server.streams.decode.builders import invalid, member, request, task

NAMES = st.sampled_from(["", "", "x", "\u00e9", "\U0001d11e", "\ufb00"])  # UTF-16 order differs
TOPICS = st.sampled_from(["a", "b", "\u00e9", "t" * 5])
NUMBERS = st.integers(0, 4) | st.integers(0, 2**31 - 1)
UNKNOWN = b"\x78\x01"  # field 15, a varint: skipped by both readers
GROUP = b"\x7b\x08\x05\x13\x1a\x01A\x14\x7c"
"""Field 15 as a group (wire types 3 and 4, which proto3 encoders never write but protobuf
reads): a varint, then a nested group 2 holding a string; skipped by both readers."""


@st.composite
def topologies(draw: st.DrawFn) -> list[pb.TaskInfo]:
    """Valid tasks (distinct ids, each source partition read by one task)."""
    ids = draw(st.lists(st.tuples(NAMES, st.integers(0, 3), NUMBERS), max_size=6, unique=True))
    tasks, sources = [], set()
    for name, sub, part in ids:
        t = pb.TaskInfo(
            id=pb.TaskId(subtopology=sub, partition=part, named_topology=name),
            stateful=draw(st.booleans()),
            changelog_end_offset_sum=draw(st.integers(0, 2**63 - 1)),
            state_store_names=draw(st.lists(st.sampled_from(["s", "\u00e9"]), max_size=2)),
        )
        for topic, number in draw(st.lists(st.tuples(TOPICS, NUMBERS), max_size=3, unique=True)):
            source = draw(st.booleans()) and (topic, number) not in sources
            sources.add((topic, number)) if source else None
            t.topic_partitions.add(
                topic=topic,
                partition=number,
                is_source=source,
                is_changelog=draw(st.booleans()),
                rack_ids=draw(st.lists(st.sampled_from(["", "r1", "r2", "\u00e9"]), max_size=3)),
            )
        if draw(st.booleans()):
            t.load = draw(st.floats(0, 1e6))
        if draw(st.booleans()):
            t.state_bytes = draw(st.integers(0, 2**40))
        tasks.append(t)
    return tasks


def _entry(body: bytes) -> bytes:
    """``body`` as one element of ``AssignRequest.tasks`` (field 3)."""
    return b"\x1a" + _varint(len(body)) + body


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def _split(t: pb.TaskInfo, cut: int, unknown: bytes = UNKNOWN) -> bytes:
    """``t``'s bytes as two messages protobuf merges into ``t``: the id, stores and the first
    ``cut`` partitions, then the id again and the rest (scalars last-wins, lists appended)."""
    first = pb.TaskInfo(id=t.id, state_store_names=t.state_store_names)
    first.topic_partitions.extend(t.topic_partitions[:cut])
    rest = pb.TaskInfo()
    rest.CopyFrom(t)
    rest.ClearField("state_store_names")
    del rest.topic_partitions[:cut]
    return first.SerializeToString() + unknown + rest.SerializeToString()


def _accessors(t: pb.TaskInfo) -> TaskInfo:
    parts = tuple(
        TaskTopicPartition(
            p.topic, p.partition, p.is_source, p.is_changelog, frozenset(p.rack_ids) - {""}
        )
        for p in t.topic_partitions
    )
    task_id = TaskId(t.id.subtopology, t.id.partition, t.id.named_topology or None)
    return TaskInfo(
        task_id, t.stateful, tuple(t.state_store_names), parts, t.changelog_end_offset_sum
    )


@settings(max_examples=100, deadline=None)
@given(
    tasks=topologies(),
    cuts=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    unknown=st.sampled_from([UNKNOWN, GROUP]),
)
def test_the_read_agrees_with_protobufs_accessors(
    tasks: list[pb.TaskInfo], cuts: list[int], unknown: bytes
) -> None:
    head = pb.AssignRequest(group_id="g", members=[member("a")]).SerializeToString()
    entries = b"".join(_entry(_split(t, c, unknown)) for t, c in zip(tasks, cuts))
    data = head + unknown + entries + head
    parsed = pb.AssignRequest.FromString(data)
    parsed.DiscardUnknownFields()
    assert list(parsed.tasks) == tasks  # the split bytes are these tasks
    columns = task_columns(data)
    assert list(columns.counts) == [len(t.topic_partitions) for t in tasks]
    texts = [[t.id.named_topology, *t.state_store_names] for t in tasks]
    for words, t in zip(texts, tasks):
        words += [w for p in t.topic_partitions for w in (p.topic, *p.rack_ids)]
    assert list(columns.longest) == [max(len(w.encode()) for w in words) for words in texts]
    topology = decode_topology(columns)
    expected = TaskTable.of(_accessors(t) for t in parsed.tasks)
    assert topology.tasks.__reduce__() == expected.__reduce__()  # the same columns
    assert dict(topology.tasks) == dict(expected)
    sources = {
        (p.topic, p.partition): _accessors(t).id
        for t in parsed.tasks
        for p in t.topic_partitions
        if p.is_source
    }
    read = {
        (topic, n): task for topic, by in topology.source_topics.items() for n, task in by.items()
    }
    assert read == sources
    loads = [(_accessors(t).id, t.load) for t in parsed.tasks if t.HasField("load")]
    sizes = [(_accessors(t).id, t.state_bytes) for t in parsed.tasks if t.HasField("state_bytes")]
    assert list(topology.loads.loads.items()) == loads
    assert list(topology.loads.state_bytes.items()) == sizes


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=64)
    | topologies().map(lambda ts: pb.AssignRequest(tasks=ts).SerializeToString()),
    cut=st.integers(0, 200),
)
def test_any_bytes_read_or_refuse_cleanly(data: bytes, cut: int) -> None:
    try:
        decode_topology(task_columns(data[: max(len(data) - cut, 0)] if cut % 2 else data))
    except InvalidRequest:
        pass


def _bad(change: str) -> pb.TaskInfo:
    t = task(1, 0)
    if change == "id":
        t.ClearField("id")
    elif change == "end":
        t.changelog_end_offset_sum = -1
    elif change == "negative id":
        t.id.subtopology = -1
    elif change == "load":
        t.load = float("nan")
    elif change == "state bytes":
        t.state_bytes = -5
    return t


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ("id", "tasks[1].id", "task id is missing"),
        ("end", "tasks[1].changelog_end_offset_sum", "negative changelog end offset sum -1"),
        ("negative id", "tasks[1].id", "negative sub-topology or partition in task -1_0"),
        ("load", "tasks[1].load", "task 1_0's load nan is not a non-negative number"),
        ("state bytes", "tasks[1].state_bytes", "task 1_0's state bytes -5 are negative"),
    ],
)
def test_each_check_names_its_field(change: str, field: str, says: str) -> None:
    err = invalid(request(member("a"), tasks=[task(0, 0), _bad(change)]))
    assert err.field == field and says in str(err)


def test_checks_run_in_request_order_and_duplicates_last() -> None:
    both = _bad("end")
    both.load = -1.0  # the end offset sum is checked first
    err = invalid(request(member("a"), tasks=[task(0, 0), both, _bad("id")]))
    assert err.field == "tasks[1].changelog_end_offset_sum"
    # a repeated id is named only once every task passed its own checks
    err = invalid(request(member("a"), tasks=[task(0, 0), task(0, 0), _bad("load")]))
    assert err.field == "tasks[2].load"
    err = invalid(request(member("a"), tasks=[task(2, 0), task(0, 0), task(2, 0), task(0, 0)]))
    assert err.field == "tasks[2].id" and "duplicate task id 2_0 (also tasks[0])" in str(err)


def test_one_id_twice_reading_one_source_is_a_duplicate_not_two_readers() -> None:
    err = invalid(request(member("a"), tasks=[task(0, 0), task(0, 0)]))
    assert err.field == "tasks[1].id" and "duplicate task id 0_0" in str(err)


def test_limits_name_the_first_task_past_them() -> None:
    long_name = task(1, 0)
    long_name.state_store_names.append("\u00e9" * 3)  # 6 bytes, 3 characters
    asked = request(member("a"), tasks=[task(0, 0), long_name, task(1, 1)])
    with pytest.raises(LimitExceeded, match="a string of 6 bytes") as err:
        decode_request(asked, now_ms=0, limits=RequestLimits(string_bytes=5))
    assert err.value.field == "tasks[1]"
    with pytest.raises(LimitExceeded, match="3 topic partitions") as err:
        decode_request(asked, now_ms=0, limits=RequestLimits(partitions=2))
    assert err.value.field == "tasks[2]"
