"""How load figures read in a reason, a table or a page (issue 25): one spelling everywhere, so
the reason an answer carries and the explanation `kassign explain` prints say the same number."""

from __future__ import annotations

__all__ = ["amount", "share_of_bound"]


def amount(x: float) -> str:
    """A load or a capacity: four significant digits, whole with separators from 1,000 on."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def share_of_bound(load: float, capacity: float, bound: float) -> float:
    """``load`` per unit of ``capacity`` over ``bound``: 1 is the bound, no answer's peak is
    below it; 0 when the bound is 0 (every load 0) or the capacity is not positive."""
    if bound <= 0 or capacity <= 0:
        return 0.0
    return load / capacity / bound
