"""``OwnedPartitions``: compact claims that read as the tuple of ``TopicPartition`` they hold."""

from __future__ import annotations

from array import array
from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.claims import (
    OwnedPartitions,
    TopicPartition,
    claim_columns,
    claims_on,
    distinct_claims,
    per_entry,
    per_number,
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


def test_distinct_claims_far_apart_are_sorted_not_counted() -> None:
    """Numbers too far apart for a table of counts are compared sorted, with the same answer."""
    far = [OwnedPartitions([("a", [7, 9_000_000])]), OwnedPartitions([("b", [7])])]
    assert distinct_claims(far)
    assert not distinct_claims([*far, OwnedPartitions([("a", [9_000_000])])])


@given(st.lists(st.lists(st.integers(0, 2), min_size=2, max_size=2), max_size=4), st.booleans())
def test_per_entry_and_per_number_spread_each_entrys_value(
    sizes: list[list[int]], shared: bool
) -> None:
    """Entries' values end to end and per number, whether the claims share one topic tuple
    (tiled) or not, and whether every entry holds one number (as they are) or not."""
    names = ("a", "b")
    claims = [
        OwnedPartitions.of_entries(
            names if shared else (*names,), counts, array("i", range(sum(counts)))
        )
        for counts in sizes
    ]
    counts, numbers = claim_columns(claims)
    values = per_entry(claims, lambda topics: np.array([ord(t) for t in topics], np.int64))
    assert values.tolist() == [ord(t) for c in claims for t in c.topics]
    spread = per_number(values, counts, len(numbers))
    assert spread.tolist() == [ord(tp.topic) for c in claims for tp in c]
