"""What a caller asks to balance, and the figures a load-balanced answer reports."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Balance", "LoadFigures"]


class Balance(enum.Enum):
    """``COUNT``: partitions or tasks per member, as every Kafka assignor (the default);
    ``LOAD``: load per unit of capacity (issue 25)."""

    COUNT = "count"
    LOAD = "load"


@dataclass(frozen=True, slots=True)
class LoadFigures:
    """A load-balanced answer's figures, each a load per unit of capacity: ``bound``, below
    which no answer's peak can be; ``peak``, this answer's largest; ``mean``, total load over
    total capacity. ``peak / bound`` is how far from optimal the answer can be, at most."""

    bound: float
    peak: float
    mean: float
