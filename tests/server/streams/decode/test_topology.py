"""decode/topology.py: tasks and partitions; unknown ones ignored with a note."""

from __future__ import annotations

from uuid import UUID

import pytest
from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode import decode_request

from tests.server.streams.decode.builders import (
    P1,
    invalid,
    member,
    request,
    task,
)


def test_no_tasks_is_a_valid_empty_topology() -> None:
    decoded = decode_request(request(member("a", sums={(0, 0): 5}), tasks=[]), now_ms=0)
    assert dict(decoded.state.tasks) == {}
    assert "ignored offset sums of 1 task(s)" in decoded.notes[0]


def test_unknown_tasks_and_partitions_are_ignored_with_a_note() -> None:
    decoded = decode_request(
        request(member("a", owned=(("gone", 3),), sums={(0, 0): 1, (7, 7): 5})), now_ms=0
    )
    client = decoded.state.clients[UUID(P1)]
    assert client.previous_tasks == {TaskId(0, 0)}
    assert any("7_7" in n and "member 'a'" in n for n in decoded.notes)
    assert any("gone-3" in n for n in decoded.notes)


@pytest.mark.parametrize(
    ("topic", "partition", "says"), [("", 0, "topic is empty"), ("in-9", -1, "negative partition")]
)
def test_a_bad_task_partition_names_its_task_and_position(
    topic: str, partition: int, says: str
) -> None:
    bad = task(1, 0)
    bad.topic_partitions.add(topic=topic, partition=partition)
    err = invalid(request(member("a"), tasks=[task(0, 0), bad]))
    assert err.field == "tasks[1].topic_partitions[1]" and says in str(err)


def test_a_large_tables_ids_are_found_in_the_reads_order() -> None:
    """The compiled read's ids are vouched sorted (``TaskTable(ordered=True)``): past the
    small table's hash index each is found by bisection, named topologies in UTF-16 order."""
    names = ["", "x", "\U0001d11e", "\ufb00"]  # UTF-8 and UTF-16 order these differently
    sent = []
    for i in range(2_000):
        info = task(i % 3, i)
        info.topic_partitions[0].topic = f"in-{i}"
        info.id.named_topology = names[i % 4]
        sent.append(info)
    decoded = decode_request(request(member("a"), tasks=sent), now_ms=0)
    table = decoded.state.tasks
    ids = list(table)
    assert ids == sorted(ids) and len(ids) == 2_000
    assert all(table.own_id(TaskId(t[1], t[2], t.named_topology)) is t for t in ids)
    assert table.own_id(TaskId(0, 1)) is None and TaskId(1, 4) in table
