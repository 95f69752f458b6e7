"""Process ids and task ids sort the way Kafka's Java code sorts them."""

from uuid import UUID

from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.ordering import process_key, sorted_processes
from kassign.assignor.streams.model import TaskId


def _java_compare(a: UUID, b: UUID) -> int:
    """Java's UUID.compareTo, written out: signed most-significant long, then least."""

    def signed(v: int) -> int:
        return v - (1 << 64) if v >= (1 << 63) else v

    for x, y in ((a.int >> 64, b.int >> 64), (a.int & (2**64 - 1), b.int & (2**64 - 1))):
        if signed(x) != signed(y):
            return -1 if signed(x) < signed(y) else 1
    return 0


def test_negative_halves_sort_before_positive_ones() -> None:
    negative = UUID("f0e1d2c3-b4a5-4697-8899-aabbccddeeff")  # both halves negative as longs
    small = UUID("00000000-0000-0001-0000-000000000002")
    assert negative > small  # Python's unsigned order...
    assert sorted_processes([small, negative]) == [negative, small]  # ...is not Java's


@given(st.uuids(), st.uuids())
def test_process_key_matches_java_compare(a: UUID, b: UUID) -> None:
    expected = _java_compare(a, b)
    got = (process_key(a) > process_key(b)) - (process_key(a) < process_key(b))
    assert got == expected


def test_task_ids_order_by_named_topology_then_subtopology_then_partition() -> None:
    tasks = [TaskId(1, 0), TaskId(0, 10), TaskId(0, 2)]
    assert sorted(tasks) == [TaskId(0, 2), TaskId(0, 10), TaskId(1, 0)]
    named = [TaskId(0, 0, "b"), TaskId(5, 5, "a"), TaskId(0, 1, "a")]
    assert sorted(named) == [TaskId(0, 1, "a"), TaskId(5, 5, "a"), TaskId(0, 0, "b")]


def test_named_topology_compares_as_java_utf16() -> None:
    # U+FF61 is one UTF-16 unit 0xFF61; U+1F600 is the surrogate pair 0xD83D 0xDE00.
    # Java orders the emoji first (0xD83D < 0xFF61); code points would say otherwise.
    assert TaskId(0, 0, "\U0001f600") < TaskId(0, 0, "\uff61")


def test_empty_named_topology_is_none() -> None:
    assert TaskId(1, 2, "") == TaskId(1, 2)
    assert str(TaskId(1, 2)) == "1_2" and str(TaskId(1, 2, "t")) == "t__1_2"
