"""``assignment_bytes`` writes, for a whole group's sorted lists at once, each list's bytes as
``encode_consumer_assignment(assignment_for(...))`` writes them (Kafka's, by
``tests/server/consumer/test_assignment_bytes.py``), and refuses lists that are not sorted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.kafka.consumer_protocol import assignment_for, encode_consumer_assignment
from kassign.server.consumer.group_bytes import assignment_bytes, flat_partitions

# Names of one and of more than 127 bytes, non-ASCII too; numbers of every int32 width.
TOPICS = st.sampled_from(["a", "b", "t" * 200, "\u00e9" * 3, "z"])
NUMBERS = st.integers(0, 3) | st.integers(0, 2**31 - 1)
LISTS = st.lists(st.sets(st.tuples(TOPICS, NUMBERS), max_size=12), max_size=8)


@settings(max_examples=200, deadline=None)
@given(lists=LISTS)
def test_sorted_lists_get_the_dataclass_paths_bytes(lists: list[set[tuple[str, int]]]) -> None:
    ordered = [sorted(tps) for tps in lists]
    expected = [encode_consumer_assignment(assignment_for(tps)) for tps in ordered]
    assert assignment_bytes(flat_partitions(ordered)) == expected


@settings(max_examples=100, deadline=None)
@given(lists=LISTS, data=st.data())
def test_lists_not_sorted_are_refused(
    lists: list[set[tuple[str, int]]], data: st.DataObject
) -> None:
    shuffled = [data.draw(st.permutations(sorted(tps))) for tps in lists]
    duplicated = [tps + tps[:1] for tps in shuffled]
    for candidate in (shuffled, duplicated):
        if all(tps == sorted(set(tps)) for tps in candidate):
            assert assignment_bytes(flat_partitions(candidate)) is not None
        else:
            assert assignment_bytes(flat_partitions(candidate)) is None
