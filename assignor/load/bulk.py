"""Light items placed in bulk: where worst fit one by one ends, reached in a few numpy steps.

Worst fit hands each item to the member with the most room left, so once the items are light
against the rooms it levels them: every member that receives ends with about the same room
``level``, and the others (less room than that already) receive nothing. ``place_light`` finds
that level (``sum(max(0, room - level)) = total load``), gives each member its share, and cuts
the items (heaviest first, in their order) into consecutive runs of about those shares: each
member ends within the heaviest light item of the level. ``fill`` sends here only items far
lighter than the rooms, so that error is a small fraction of the target.
"""

from __future__ import annotations

import numpy as np
from kassign.assignor.load.bound import FloatArray, IntArray

__all__ = ["place_light"]


def place_light(loads: FloatArray, rooms: FloatArray) -> IntArray:
    """A member per item (``loads`` heaviest first); takes their loads off ``rooms``."""
    shares = np.maximum(rooms - _level(rooms, float(loads.sum())), 0.0)
    ends = np.cumsum(shares)
    middles = np.cumsum(loads) - loads / 2
    owners = np.minimum(np.searchsorted(ends, middles, side="right"), len(rooms) - 1)
    owners = owners.astype(np.int64)
    rooms -= np.bincount(owners, weights=loads, minlength=len(rooms))
    return owners


def _level(rooms: FloatArray, total: float) -> float:
    """The room every receiving member is left with when ``total`` is poured into ``rooms``."""
    ordered = np.sort(rooms)[::-1]
    count = np.arange(1, len(ordered) + 1)
    levels = (np.cumsum(ordered) - total) / count
    k = int(np.flatnonzero(ordered >= levels)[-1])  # the members above the level: a prefix
    return float(levels[k])
