"""``OwnedPartitions``: compact claims that read as the tuple of ``TopicPartition`` they hold."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.claims import (
    OwnedPartitions,
    TopicPartition,
    claims_on,
    distinct_claims,
    shared_claims,
)

RUNS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.lists(st.integers(0, 40), max_size=6)),
    max_size=5,
)


def _pairs(runs: list[tuple[str, list[int]]]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t, p) for t, ps in runs for p in ps)


@given(RUNS)
def test_it_reads_as_the_tuple_of_its_partitions(runs: list[tuple[str, list[int]]]) -> None:
    owned, plain = OwnedPartitions(runs), _pairs(runs)
    assert tuple(owned) == plain and len(owned) == len(plain) and bool(owned) == bool(plain)
    assert owned == plain and plain == owned and hash(owned) == hash(plain)
    assert [owned[i] for i in range(-len(plain), len(plain))] == [*plain, *plain]
    assert owned[1:3] == plain[1:3]
    assert all(tp in owned for tp in plain)


@given(RUNS)
def test_sorted_from_is_sorted(runs: list[tuple[str, list[int]]]) -> None:
    plain = _pairs(runs)
    assert tuple(OwnedPartitions.sorted_from(plain)) == tuple(sorted(plain))


@given(RUNS, st.sets(st.sampled_from(["a", "b", "c"])))
def test_claims_on_keeps_the_claims_of_those_topics(
    runs: list[tuple[str, list[int]]], topics: set[str]
) -> None:
    kept = claims_on(OwnedPartitions(runs), topics)
    assert tuple(kept) == tuple(tp for tp in _pairs(runs) if tp.topic in topics)
    assert claims_on(_pairs(runs), topics) == _pairs(runs)  # plain tuples are left alone


@given(st.lists(RUNS, max_size=4))
def test_distinct_and_shared_claims_agree_with_sets(
    groups: list[list[tuple[str, list[int]]]],
) -> None:
    compact = [OwnedPartitions(runs) for runs in groups]
    plain = [_pairs(runs) for runs in groups]
    all_claims = [tp for claims in plain for tp in claims]
    assert (
        distinct_claims(compact)
        == distinct_claims(plain)
        == (len(set(all_claims)) == len(all_claims))
    )
    distinct = [OwnedPartitions.sorted_from(set(claims)) for claims in plain]
    counted: dict[TopicPartition, int] = {}
    for claims in distinct:
        for tp in claims:
            counted[tp] = counted.get(tp, 0) + 1
    shared = shared_claims(distinct)
    assert {TopicPartition(t, p) for t, ps in shared.items() for p in ps} == {
        tp for tp, n in counted.items() if n > 1
    }


@given(RUNS)
def test_ascending_is_one_entry_a_topic_and_rising_numbers(
    runs: list[tuple[str, list[int]]],
) -> None:
    topics = [t for t, _ in runs]
    rising = all(a < b for _, ps in runs for a, b in pairwise(ps))
    assert OwnedPartitions(runs).ascending() == (len(set(topics)) == len(topics) and rising)
