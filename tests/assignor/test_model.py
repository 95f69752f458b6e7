"""TaskId is a tuple in Kafka's order; it must still behave like the value type callers know."""

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.streams.model import TaskId

_NAMES = st.one_of(st.none(), st.text(max_size=4))


@given(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1), _NAMES)
def test_fields_read_back_as_given(subtopology: int, partition: int, name: str | None) -> None:
    task = TaskId(subtopology, partition, name)
    assert (task.subtopology, task.partition) == (subtopology, partition)
    assert task.named_topology == (name or None)


_FIELDS = st.tuples(st.integers(0, 3), st.integers(0, 3), _NAMES)


@given(_FIELDS, _FIELDS)
def test_order_and_equality_follow_sort_key(
    a: tuple[int, int, str | None], b: tuple[int, int, str | None]
) -> None:
    x, y = TaskId(*a), TaskId(*b)
    assert (x < y) == (x.sort_key < y.sort_key)
    assert (x == y) == (x.sort_key == y.sort_key)
    assert (hash(x) == hash(y)) or x != y


@pytest.mark.parametrize("task", [TaskId(1, 2), TaskId(0, 7, "orders"), TaskId(3, 0, "\U0001f600")])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_to_an_equal_task_id(task: TaskId, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(task, protocol))
    assert type(back) is TaskId and back == task and back.named_topology == task.named_topology


def test_copies_are_equal_task_ids() -> None:
    task = TaskId(2, 5, "t")
    assert type(copy.copy(task)) is TaskId and copy.deepcopy(task) == task
    assert {task: 1}[copy.deepcopy(task)] == 1


def test_repr_names_the_fields() -> None:
    assert repr(TaskId(1, 2)) == "TaskId(subtopology=1, partition=2, named_topology=None)"
    assert repr(TaskId(1, 2, "a")) == "TaskId(subtopology=1, partition=2, named_topology='a')"


def test_immutable() -> None:
    task = TaskId(1, 2)
    with pytest.raises(AttributeError):
        task.partition = 3  # type: ignore[misc]
