"""The rack layer's one-sort set operations (``rack.int_sets``) against the numpy functions they
stand for: same values, same order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.rack.int_sets import isin, pair_order, unique

_INTS = st.lists(st.integers(0, 50), max_size=40)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=60))
def test_pair_order_is_lexsort_ties_included(pairs: list[tuple[int, int]]) -> None:
    major = np.array([a for a, _ in pairs], np.int64)
    minor = np.array([b for _, b in pairs], np.int64)
    assert pair_order(major, minor).tolist() == np.lexsort((minor, major)).tolist()


def test_pair_order_falls_back_where_the_key_would_not_fit() -> None:
    major = np.array([2**61, 0, 2**61], np.int64)
    minor = np.array([5, 3, 1], np.int64)
    assert pair_order(major, minor).tolist() == [1, 2, 0]
    negative = np.array([-1, 2, 0], np.int64)
    assert pair_order(major, negative).tolist() == np.lexsort((negative, major)).tolist()


@settings(max_examples=50, deadline=None)
@given(_INTS, _INTS)
def test_unique_and_isin_are_numpys(values: list[int], among: list[int]) -> None:
    a, b = np.array(values, np.int64), np.array(among, np.int64)
    assert unique(a).tolist() == np.unique(a).tolist()
    assert isin(a, b).tolist() == np.isin(a, b).tolist()
