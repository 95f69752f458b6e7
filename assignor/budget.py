"""kassign's own work priced before it runs against a time budget.

No clock: each solve or fill is priced from its size, so the same request gets the same answer
and the same fallback reason under any load. Shared by both rooms (the consumer assignors'
solver and load core, Kafka Streams' load core), so neither reaches into the other's package.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kassign.assignor.errors import SolverError

__all__ = ["priced_budget"]


def priced_budget(seconds: float, ms_each: float, units: str) -> Callable[[int], float]:
    """An ``afford(n)`` that adds ``n`` units of work at ``ms_each`` to what was spent, raises
    ``SolverError("TIME_BUDGET")`` once the sum would pass ``seconds``, and returns the seconds
    spent so far: each solve or fill is priced before it runs."""
    spent = [0]

    def afford(n: int) -> float:
        total = spent[0] + n
        if total * ms_each / 1000.0 > seconds:
            raise SolverError(
                "TIME_BUDGET",
                f"time budget of {seconds:g} s too small for {total} {units}"
                f" (about {math.ceil(total * ms_each)} ms)",
            )
        spent[0] = total
        return total * ms_each / 1000.0

    return afford
