"""Min-cost flow on OR-Tools ``SimpleMinCostFlow``, in bulk: numpy arrays in, numpy flows out.

Why a layer of its own: the rack-aware optimiser (``rack.py``) builds its graphs as four parallel
arrays plus supplies; this module owns everything solver-shaped about them:

- node ids come from one layout function (``layout``), ranges in the order they are named;
- arcs are added in one ``add_arcs_with_capacity_and_unit_cost`` call, supplies in one
  ``set_nodes_supplies`` call, flows read in one ``flows`` call (no per-arc Python loop);
- costs, capacities and supplies are range-checked *before* the solver sees them, so it can never
  overflow (``InvalidRequest`` for a malformed graph, ``SolverError`` for one out of range);
- any status but ``OPTIMAL`` raises ``SolverError`` naming the status;
- where the solve runs is the process's choice (``use_runner``): OR-Tools holds the GIL for the
  whole solve, so a server hands large graphs to a helper process (``kassign.server.runtime
  .solver``) and its other threads (health) keep running. The library alone solves in-process;
- a solve cannot be interrupted, so ``solve`` runs the caller's ``interrupt.checkpoint`` before
  and after each one (issue 27): a call past its deadline stops between two solves of a
  sequence, and never waits past the solve it is in for the rest.

Determinism: OR-Tools is deterministic for a given arc order; callers add arcs in a documented
sorted order, so the same input always yields the same flows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from kassign.assignor.errors import InvalidRequest, SolverError
from kassign.assignor.interrupt import checkpoint
from ortools.graph.python import min_cost_flow  # type: ignore[import-untyped]

__all__ = [
    "MAX_ABS_COST",
    "MAX_CAPACITY",
    "ArcBlock",
    "FlowGraph",
    "FlowSolution",
    "IntArray",
    "NodeLayout",
    "Outcome",
    "Runner",
    "layout",
    "optimal_flows",
    "solve",
    "use_runner",
]

IntArray = npt.NDArray[np.int64]
ArcBlock = tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]
"""Parallel ``(tails, heads, capacities, unit_costs)``; scalars broadcast."""

MAX_CAPACITY = 1 << 40
"""Largest arc capacity or node supply accepted; far above any task count."""
MAX_ABS_COST = 1 << 40
"""Largest unit cost accepted, before the node-count check below."""
_SOLVER_HEADROOM = 1 << 62
"""OR-Tools scales costs by (nodes + 1) and sums flow x cost in int64: both must stay below this."""


@dataclass(frozen=True, slots=True)
class NodeLayout:
    """Contiguous node-id ranges, one per named layer, in the order they were declared."""

    names: tuple[str, ...]
    starts: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def num_nodes(self) -> int:
        return self.starts[-1] + self.sizes[-1] if self.names else 0

    def start(self, name: str) -> int:
        return self.starts[self.names.index(name)]

    def size(self, name: str) -> int:
        return self.sizes[self.names.index(name)]


def layout(*layers: tuple[str, int]) -> NodeLayout:
    """Lay node ranges out before any arc exists: ``layout(("tasks", T), ("clients", C))``."""
    names = tuple(name for name, _ in layers)
    if len(set(names)) != len(names):
        raise InvalidRequest(f"duplicate layer names {names}", field="flow.layout")
    sizes = tuple(int(size) for _, size in layers)
    if any(size < 0 for size in sizes):
        raise InvalidRequest(f"negative layer size in {layers}", field="flow.layout")
    starts = tuple(int(s) for s in np.concatenate(([0], np.cumsum(sizes[:-1], dtype=np.int64))))
    return NodeLayout(names, starts if layers else (), sizes)


@dataclass(frozen=True, slots=True)
class FlowGraph:
    """A min-cost flow instance as parallel int64 arrays (arc order is the tie-break order)."""

    num_nodes: int
    tails: IntArray
    heads: IntArray
    capacities: IntArray
    unit_costs: IntArray
    supplies: IntArray

    @staticmethod
    def of(
        num_nodes: int,
        arcs: Sequence[ArcBlock],
        supplies: npt.ArrayLike,
    ) -> FlowGraph:
        """Concatenate arc blocks ``(tails, heads, capacities, unit_costs)`` in the given order."""
        blocks = [
            tuple(np.broadcast_arrays(*(np.asarray(a, dtype=np.int64) for a in b))) for b in arcs
        ]
        cols = [
            np.concatenate([blk[i].ravel() for blk in blocks]) if blocks else np.zeros(0, np.int64)
            for i in range(4)
        ]
        return FlowGraph(
            num_nodes, cols[0], cols[1], cols[2], cols[3], np.asarray(supplies, np.int64)
        )

    @property
    def num_arcs(self) -> int:
        return int(self.tails.size)


@dataclass(frozen=True, slots=True)
class FlowSolution:
    """Flow on every arc (same order as the graph's arcs) and the optimal total cost."""

    flows: IntArray
    cost: int


def _check(graph: FlowGraph) -> None:
    """Reject a graph the solver could mis-handle, before it sees it."""
    n = graph.num_nodes
    lengths = {graph.tails.size, graph.heads.size, graph.capacities.size, graph.unit_costs.size}
    if len(lengths) != 1:
        raise InvalidRequest("arc arrays differ in length", field="flow.arcs")
    if graph.supplies.shape != (n,):
        raise InvalidRequest(f"supplies must have {n} entries", field="flow.supplies")
    if graph.num_arcs and (
        min(graph.tails.min(), graph.heads.min()) < 0
        or max(graph.tails.max(), graph.heads.max()) >= n
    ):
        raise InvalidRequest("arc endpoint outside the node layout", field="flow.arcs")
    if graph.num_arcs and (graph.capacities.min() < 0 or graph.capacities.max() > MAX_CAPACITY):
        raise SolverError("BAD_CAPACITY_RANGE", f"capacities must lie in [0, {MAX_CAPACITY}]")
    if n and np.abs(graph.supplies).max() > MAX_CAPACITY:
        raise SolverError(
            "BAD_CAPACITY_RANGE", f"supplies must lie in [-{MAX_CAPACITY}, {MAX_CAPACITY}]"
        )
    if int(graph.supplies.sum()) != 0:
        raise SolverError("UNBALANCED", "supplies do not sum to zero")
    if not graph.num_arcs:
        return
    max_cost = int(np.abs(graph.unit_costs).max())
    if max_cost > MAX_ABS_COST or max_cost * (n + 1) >= _SOLVER_HEADROOM:
        raise SolverError("BAD_COST_RANGE", f"unit cost {max_cost} too large for {n} nodes")
    # Floats: the bound on the total cost itself cannot overflow while being computed. An
    # element-wise product and a sum, not np.dot: BLAS's dot hands long vectors to its thread
    # pool, whose threads then spin on another core (at 10,000 tasks x 1,000 clients, 190 ms of
    # CPU a call beside its 200 ms: a worker process is one core's worth of work by design).
    costs = np.abs(graph.unit_costs).astype(np.float64)
    worst_total = int(np.multiply(costs, graph.capacities, out=costs).sum())
    if worst_total >= _SOLVER_HEADROOM:
        raise SolverError("BAD_COST_RANGE", "sum of capacity x cost could overflow int64")


Outcome: TypeAlias = tuple[str, IntArray, int]
"""The solver's status name, the flow on every arc and the total cost: plain values, so a
helper process can send them back (an exception's arguments may not survive the trip)."""
Runner: TypeAlias = Callable[[FlowGraph], Outcome]
"""Where a checked graph is solved: ``optimal_flows`` here, or a helper process."""


def optimal_flows(graph: FlowGraph) -> Outcome:
    """OR-Tools on a graph ``_check`` accepted, in this process (it holds the GIL throughout)."""
    smcf = min_cost_flow.SimpleMinCostFlow()
    arcs = smcf.add_arcs_with_capacity_and_unit_cost(
        graph.tails, graph.heads, graph.capacities, graph.unit_costs
    )
    if graph.num_nodes:
        smcf.set_nodes_supplies(np.arange(graph.num_nodes, dtype=np.int64), graph.supplies)
    status = smcf.solve()
    name = str(getattr(status, "name", status))
    if status != smcf.OPTIMAL:
        return name, np.zeros(0, np.int64), 0
    flows = (
        np.asarray(smcf.flows(arcs), dtype=np.int64) if graph.num_arcs else np.zeros(0, np.int64)
    )
    return name, flows, int(smcf.optimal_cost())


_runner: Runner = optimal_flows


def use_runner(runner: Runner) -> Runner:
    """Solve from now on with ``runner`` (once, at a serving process's start); returns the one
    it replaces, so a test can put it back."""
    global _runner
    previous, _runner = _runner, runner
    return previous


def solve(graph: FlowGraph) -> FlowSolution:
    """Solve ``graph`` to optimality; any other outcome raises ``SolverError``. The caller's
    check runs before the solve and after it (``interrupt.checkpoint``)."""
    checkpoint()
    _check(graph)
    status, flows, cost = _runner(graph)
    checkpoint()
    if status != "OPTIMAL":
        raise SolverError(status, "min-cost flow not solved to optimality")
    return FlowSolution(flows, cost)
