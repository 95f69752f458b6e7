"""The figures a load-aware answer is judged by: its peak, and the bound no answer can beat."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FloatArray", "IntArray", "lower_bound", "member_loads", "peak_ratio"]

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]


def lower_bound(loads: FloatArray, capacities: FloatArray) -> float:
    """The larger of total load over total capacity and the heaviest item over the largest
    capacity: no placement has a smaller largest load per unit of capacity (issue 25's bound)."""
    if not len(loads) or not len(capacities):
        return 0.0
    return max(float(loads.sum() / capacities.sum()), float(loads.max() / capacities.max()))


def member_loads(loads: FloatArray, owners: IntArray, members: int) -> FloatArray:
    """Each member's total load under ``owners`` (an owner per item)."""
    return np.bincount(owners, weights=loads, minlength=members).astype(np.float64)


def peak_ratio(loads: FloatArray, capacities: FloatArray, owners: IntArray) -> float:
    """The largest load per unit of capacity that ``owners`` gives a member."""
    if not len(capacities):
        return 0.0
    return float((member_loads(loads, owners, len(capacities)) / capacities).max())
