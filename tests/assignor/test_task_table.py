"""``TaskTable``: a topology's tasks by column read exactly like the dict of ``TaskInfo`` it
replaces (issue 16's memory bound), whatever order the rows come in."""

from __future__ import annotations

import pickle
import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams import task_table
from kassign.assignor.streams.model import TaskId, TaskInfo, TaskTopicPartition
from kassign.assignor.streams.task_table import TaskTable
from kassign.assignor.streams.task_table_builder import TaskTableBuilder

_TOPOLOGIES = (None, "alpha", "β-orders", "\U0001f600")


@st.composite
def _partitions(draw: st.DrawFn) -> TaskTopicPartition:
    return TaskTopicPartition(
        draw(st.sampled_from(("in", "other", "ünïcode", "app-store-changelog"))),
        draw(st.integers(0, 2**31 - 1)),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.frozensets(st.sampled_from(("r1", "r2", "r3")), max_size=3)),
    )


@st.composite
def _infos(draw: st.DrawFn) -> list[TaskInfo]:
    ids = draw(
        st.lists(
            st.builds(
                TaskId,
                st.integers(0, 5),
                st.integers(0, 3_000),
                st.sampled_from(_TOPOLOGIES),
            ),
            unique=True,
            max_size=40,
        )
    )
    return [
        TaskInfo(
            task,
            draw(st.booleans()),
            tuple(draw(st.lists(st.sampled_from(("s1", "s2")), max_size=2))),
            tuple(draw(st.lists(_partitions(), max_size=3))),
            draw(st.integers(0, 2**63 - 1)),
        )
        for task in ids
    ]


@contextmanager
def _small_table(size: int) -> Iterator[None]:
    """Tables built inside take the small-table path up to ``size`` tasks (0: never)."""
    kept = task_table.SMALL_TABLE
    task_table.SMALL_TABLE = size
    try:
        yield
    finally:
        task_table.SMALL_TABLE = kept


@settings(max_examples=200, deadline=None)
@given(_infos(), st.randoms(use_true_random=False), st.sampled_from((0, 1024)))
def test_reads_like_the_dict_it_replaces(
    infos: list[TaskInfo], rng: random.Random, small: int
) -> None:
    """Both ways a table looks up: by bisection (large) and by hash, keeping its ``TaskInfo``."""
    rng.shuffle(infos)
    with _small_table(small):
        table = TaskTable.of(infos)
    expected = {t.id: t for t in sorted(infos, key=lambda t: t.id)}
    assert table == expected
    assert list(table) == list(expected)
    assert list(table.items()) == list(expected.items())
    assert list(table.values()) == list(expected.values())
    assert len(table) == len(expected)
    for task, info in expected.items():
        assert task in table
        assert table[task] == info
        assert table.end_offset_sum(task) == info.changelog_end_offset_sum
        assert table.source_partitions(task) == [
            (p.topic, p.partition) for p in info.topic_partitions if p.is_source
        ]
    assert table.stateful_ids() == tuple(t for t, i in expected.items() if i.stateful)
    assert table.stateful_ids(False) == tuple(t for t, i in expected.items() if not i.stateful)
    ends = {t: i.changelog_end_offset_sum for t, i in expected.items() if i.stateful}
    assert dict(table.end_offset_sums()) == ends
    assert len(table.end_offset_sums()) == len(ends)
    assert pickle.loads(pickle.dumps(table)) == expected


@pytest.mark.parametrize("small", [0, 1024])
def test_absent_keys_are_absent(small: int) -> None:
    with _small_table(small):
        table = TaskTable.of([TaskInfo(TaskId(0, 1), True, changelog_end_offset_sum=7)])
    for missing in (TaskId(0, 0), TaskId(0, 2), TaskId(0, 1, "named"), "0_1", (0, 1), None):
        assert missing not in table
        assert table.get(missing) is None  # type: ignore[call-overload]
    assert TaskId(0, 1) not in TaskTable.of([TaskInfo(TaskId(0, 1), False)]).end_offset_sums()
    with pytest.raises(KeyError):
        table[TaskId(9, 9)]
    with pytest.raises(KeyError):
        table.end_offset_sums()[TaskId(9, 9)]


def test_a_repeated_id_is_refused_and_found() -> None:
    builder = TaskTableBuilder()
    for task in (TaskId(0, 2), TaskId(0, 1), TaskId(0, 3), TaskId(0, 1), TaskId(0, 2)):
        builder.add(task, True, 0, (), ())
    assert builder.first_duplicate() == (3, 1)
    with pytest.raises(ValueError, match="share an id"):
        builder.build()


def test_rows_in_task_order_are_kept_as_given() -> None:
    """The fast path (no permutation) and the sorting path give the same table."""
    infos = [
        TaskInfo(TaskId(0, p), p % 2 == 0, (), (TaskTopicPartition("in", p, True, False),), p)
        for p in range(300)
    ]
    assert TaskTable.of(infos) == TaskTable.of(list(reversed(infos)))
