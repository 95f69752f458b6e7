"""The answer's sorted task lists, compiled (``holders.picked_sorted``), against plain Python."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.holders import picked, picked_sorted
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
