"""The answer's task lists, compiled (``holders.picked_sorted``, ``holders.picked_runs``), against
plain Python."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.holders import picked, picked_runs, picked_sorted
from kassign.assignor.streams.model import TaskId


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.sets(st.integers(0, max(0, n - 1))), max_size=6)
        )
    )
)
def test_picked_sorted_is_each_collection_sorted_and_read(
    drawn: tuple[int, list[set[int]]],
) -> None:
    n, held = drawn
    items = tuple(TaskId(i % 3, i) for i in range(n))
    held = [h for h in held if n] + [set()]
    got = picked_sorted(items, [*held[:-1], list(held[-1])])
    assert got == [picked(items, sorted(h)) for h in held]
    assert all(
        a is b
        for g, h in zip(got, held, strict=True)
        for a, b in zip(g, picked(items, sorted(h)), strict=True)
    )


def test_a_position_past_the_items_is_refused() -> None:
    with pytest.raises(ValueError, match="position 3 past 3 items"):
        picked_sorted(("a", "b", "c"), [{0}, {3}])


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.lists(st.integers(0, n - 1), max_size=6), max_size=6)
        )
    )
)
def test_picked_runs_reads_each_run_in_its_order(drawn: tuple[int, list[list[int]]]) -> None:
    n, runs = drawn
    items = tuple(TaskId(i % 3, i) for i in range(n))
    ends = list(itertools.accumulate(len(r) for r in runs))
    flat = np.array([p for r in runs for p in r], np.int64)
    got = picked_runs(items, flat, ends)
    assert got == [picked(items, r) for r in runs]
    assert all(a is items[p] for g, r in zip(got, runs, strict=True) for a, p in zip(g, r))


@pytest.mark.parametrize(
    ("positions", "ends", "message"),
    [
        ([0, 3], [1, 2], "position 3 past 3 items"),
        ([0, -1], [2], "-1 out of range"),
        ([0, 1], [2, 1], "bad ends"),
        ([0], [2], "bad ends"),
    ],
)
def test_picked_runs_refuses_what_does_not_split(
    positions: list[int], ends: list[int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        picked_runs(("a", "b", "c"), np.array(positions, np.int64), ends)
