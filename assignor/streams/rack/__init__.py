"""KIP-925 rack-aware optimisation, one entry point for the Streams assignors.

Import it lazily (inside the function that needs it): it loads OR-Tools, which a request without a
rack-aware strategy never pays for.

- ``optimise``: the two optimisations, their time budget and fallback (``optimize_active_tasks``,
  ``optimize_standby_tasks``), and ``resolve_costs``;
- ``problems``: the group as arrays (clients, tasks, racks, costs) for the two graphs;
- ``active_flow``: the active-task graph (compact and dense) on ``kassign.assignor.flow``;
- ``standby_flow``: the standby-task graph.
"""

from kassign.assignor.streams.rack.optimise import (
    MAX_COST,
    CostPhase,
    active_problem,
    optimize_active_tasks,
    optimize_standby_tasks,
    resolve_costs,
)

__all__ = [
    "MAX_COST",
    "CostPhase",
    "active_problem",
    "optimize_active_tasks",
    "optimize_standby_tasks",
    "resolve_costs",
]
