"""Set operations on int arrays by one sort: ``np.unique`` without inverse, ``np.isin``, and a
two-key ``np.lexsort`` of (task, client) pairs.

Why: numpy 2.4 finds a plain ``np.unique``'s values by hashing, about 50 times a sort's time on
200,000 ints (180 ms against 3.5 ms), and ``np.isin`` calls it; the standby graphs and their
checks ask both of every replica several times a solve (a tenth of a 100,000-task call, issue
24). Same values, same order, as the numpy functions. ``pair_order``: a stable sort of one int64
key is half a two-key ``lexsort``'s time on 10,000 pairs, and a thirtieth where the pairs come
nearly sorted, as a solve's standbys do (issue 24).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["isin", "pair_order", "unique"]


def unique(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``np.unique(values)`` of a 1-D int array: its distinct values, ascending."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    first = np.empty(ordered.size, np.bool_)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def isin(values: npt.NDArray[np.int64], among: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """``np.isin(values, among)`` of int arrays: whether each value is one of ``among``."""
    if not among.size:
        return np.zeros(values.shape, np.bool_)
    ordered = np.sort(among)
    at = np.minimum(np.searchsorted(ordered, values), ordered.size - 1)
    found: npt.NDArray[np.bool_] = ordered[at] == values
    return found


def pair_order(major: npt.NDArray[np.int64], minor: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """``np.lexsort((minor, major))`` of non-negative int arrays (by ``major``, then ``minor``,
    ties in input order) by one stable sort of ``major * span + minor``."""
    if not major.size:
        return np.zeros(0, np.intp)
    span = int(minor.max()) + 1
    if int(minor.min()) < 0 or int(major.min()) < 0 or int(major.max()) >= (2**62) // span:
        return np.lexsort((minor, major))  # the key would not order or not fit
    return np.argsort(major * span + minor, kind="stable")
