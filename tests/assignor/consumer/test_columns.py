"""Partition ids (``columns``): the same partitions as the objects they stand for, and the same
answers and bytes whether an assignor worked on ids or on objects."""

from __future__ import annotations

import random
from array import array

import kassign_native
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions, TopicPartition
from kassign.assignor.consumer import Member, Topic, assign, consumer_group
from kassign.assignor.consumer.columns import AssignedColumns, PartitionList, PartitionSpace
from kassign.assignor.consumer.result import _sorted_columns
from kassign.server.consumer.group_bytes import assignment_bytes, flat_columns, flat_partitions

counts = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(8)]), st.integers(0, 40), min_size=1, max_size=6
)


@settings(deadline=None)  # timing is not what these check; a loaded CI machine is slow
@given(counts, st.data())
def test_ids_stand_for_their_partitions(sizes: dict[str, int], data: st.DataObject) -> None:
    space = PartitionSpace.of(sizes)
    every = [TopicPartition(t, p) for t in sorted(sizes) for p in range(sizes[t])]
    assert space.total == len(every)
    assert space.objects(np.arange(space.total, dtype=np.int64)) == every  # ids ascend in order
    if not every:
        return
    picked = data.draw(st.lists(st.sampled_from(every), unique=True))
    ids = space.ids(picked)
    assert space.objects(ids) == picked
    assert [space.id_of(tp) for tp in picked] == ids.tolist()
    listed = space.partitions(ids)
    assert listed == tuple(picked) and tuple(picked) == listed and list(listed) == picked
    assert hash(listed) == hash(tuple(picked)) and len(listed) == len(picked)
    owned = OwnedPartitions.sorted_from(picked)
    assert space.objects(space.ids(owned)) == list(owned)


@settings(deadline=None, max_examples=40)
@given(counts, st.data())
def test_a_group_read_at_once_gives_each_members_ids(
    sizes: dict[str, int], data: st.DataObject
) -> None:
    """``claimed_all`` (the group's compact claims in one pass) is ``claimed`` of each: claims
    of topics outside the space dropped, members sharing a topic tuple, empty ones."""
    space = PartitionSpace.of(sizes)
    outside = TopicPartition("elsewhere", 3)
    every = [TopicPartition(t, p) for t in sorted(sizes) for p in range(sizes[t])] + [outside]
    claims: list[OwnedPartitions] = []
    for picked in data.draw(st.lists(st.lists(st.sampled_from(every), unique=True), max_size=5)):
        claims.append(OwnedPartitions.of_entries(*_entries(picked)))
    expected = [PartitionSpace.of(sizes).claimed(c) for c in claims]
    got = space.claimed_all(claims)
    assert [g.tolist() for g in got] == [e.tolist() for e in expected]


def _entries(picked: list[TopicPartition]) -> tuple[list[str], list[int], array[int]]:
    """An entry per partition, in the order picked (as a reader may hand them over)."""
    return (
        [tp.topic for tp in picked],
        [1] * len(picked),
        array("i", [tp.partition for tp in picked]),
    )


@settings(deadline=None)
@given(counts, st.integers(1, 5), st.randoms(use_true_random=False))
def test_flat_columns_write_the_bytes_objects_write(
    sizes: dict[str, int], members: int, rng: random.Random
) -> None:
    space = PartitionSpace.of(sizes)
    owner = np.array([rng.randrange(members) for _ in range(space.total)], dtype=np.int64)
    lists = [np.flatnonzero(owner == m).astype(np.int64) for m in range(members)]
    columns = AssignedColumns.of(space, lists)
    objects = [space.objects(ids) for ids in lists]
    assert [list(PartitionList(space, columns.member(m))) for m in range(members)] == objects
    assert assignment_bytes(flat_columns(columns)) == assignment_bytes(flat_partitions(objects))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.integers(1, 4), st.integers(1, 60), st.integers(0, 2**16))
def test_answers_on_ids_give_every_partition_once_sorted(
    members: int, topics: int, partitions: int, seed: int
) -> None:
    """``range`` and the sticky assignors answer with ids: every partition once, each
    member's sorted, the columns the encoder reads equal to the lists (Kafka's answers
    themselves: tests/differential/consumer)."""
    rng = np.random.default_rng(seed)
    names = tuple(f"t{i}" for i in range(topics))
    group = consumer_group(
        [Member(member_id=f"m{rng.integers(1 << 30):x}-{i}", topics=names) for i in range(members)],
        [Topic.without_racks(t, int(rng.integers(1, partitions + 1))) for t in names],
    )
    for name in ("range", "sticky", "cooperative-sticky"):
        result = assign(name, group)
        assert result.columns is not None
        every = sorted(tp for m in result.members for tp in m.partitions)
        assert every == sorted(
            TopicPartition(t, p) for t in names for p in range(group.partition_count(t))
        )
        for i, m in enumerate(result.members):
            assert list(m.partitions) == sorted(m.partitions)
            assert space_objects(result.columns, i) == list(m.partitions)


def space_objects(columns: AssignedColumns, i: int) -> list[TopicPartition]:
    return columns.space.objects(columns.member(i))


@settings(deadline=None, max_examples=60)
@given(st.lists(st.lists(st.integers(0, 29), unique=True, max_size=6), max_size=5), st.data())
def test_the_answers_columns_are_each_list_sorted(
    lists: list[list[int]], data: st.DataObject
) -> None:
    """A builder's lists that come sorted are kept as they are; others (or with some
    withheld) are sorted: either way each member's ids ascend, the withheld ones gone."""
    space = PartitionSpace.of({"a": 10, "b": 20})
    given_lists = [PartitionList(space, np.array(ids, dtype=np.int64)) for ids in lists]
    every = [i for ids in lists for i in ids]
    withheld = data.draw(st.sets(st.sampled_from(every))) if every else set()
    kept_back = frozenset(space.objects(np.array(sorted(withheld), dtype=np.int64)))
    columns, as_given = _sorted_columns(space, given_lists, kept_back)
    for i, ids in enumerate(lists):
        assert columns.member(i).tolist() == sorted(set(ids) - withheld)
    assert as_given == (not kept_back and all(ids == sorted(ids) for ids in lists))


@settings(deadline=None, max_examples=60)
@given(st.lists(st.lists(st.sampled_from([-1, -2, 0, "a", "b", "ab"]), max_size=8), max_size=5))
def test_first_seen_numbers_values_as_a_dict_does(layouts: list[list[object]]) -> None:
    """The compiled numbering of the replica rack sets is a dict's: by hash, then equality
    (-1 and -2 share a hash in CPython; equal values that are distinct objects share a
    number: sets rebuilt per partition), in order of first appearance."""
    fresh = [tuple(frozenset(str(v)) if isinstance(v, str) else v for v in x) for x in layouts]
    first: dict[object, int] = {}
    expected = [first.setdefault(v, len(first)) for layout in fresh for v in layout]
    values, numbers = kassign_native.first_seen(fresh)
    assert np.frombuffer(numbers, dtype=np.int64).tolist() == expected
    assert values == list(first)


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), unique=True, max_size=5), min_size=2, max_size=6))
def test_a_group_read_again_in_another_order_is_its_claims_in_that_order(
    numbers: list[list[int]],
) -> None:
    """``claimed_column`` of claims read before in another order (or only some of them)
    gathers them from the kept column: each claim's ids, end to end, in the order asked."""
    space = PartitionSpace.of({"a": 10, "b": 10})
    claims = [OwnedPartitions([("b", n), ("x", [1]), ("a", n[:2])]) for n in numbers]
    first, _ = space.claimed_column(claims, within=False)
    again = [*claims[1:-1][::-1], claims[0]]  # reversed, the last left out
    column, sizes = space.claimed_column(again)
    expected = [PartitionSpace.of({"a": 10, "b": 10}).claimed(c) for c in again]
    assert sizes == list(map(len, expected))
    assert column.tolist() == [i for ids in expected for i in ids.tolist()]
    assert len(first) == sum(map(len, expected)) + len(space.claimed(claims[-1]))
