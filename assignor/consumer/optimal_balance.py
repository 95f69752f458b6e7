"""``rack-optimal``'s balance bounds, read off the best balance the subscriptions allow.

*Balance* here is the decreasingly minimal load vector (Frank and Murota, "Discrete decreasing
minimization", 2022): no assignment has a smaller largest load, among those none has fewer
members at it, and so on down. The reachable load vectors of a bipartite assignment form an
M-convex set, where this one order agrees with others one might pick:

- it minimises the largest load and, at the same time, maximises the smallest (so its max-min
  spread is the smallest of any assignment, Kafka's included);
- it is exactly the minimiser of the sum of squared loads (squares are a strictly convex
  separable function), which is how a min-cost flow finds it;
- so ``spread_bounds`` reads the tightest bounds on any member's load off it: no assignment
  has a larger smallest load (among members that can take any) or a smaller largest one.

Members of one subscription class are interchangeable for balance, so the flow here is tiny:
pools of units (by eligible classes) -> classes -> sink, where a class of ``n`` members has one
arc per load level ``l`` (capacity ``n``, cost ``2l + 1``, the marginal of ``l^2``). Levels below
a greedy assignment's smallest load share one arc of cost 0, levels above its largest are left
out: the optimum lies between them (the greedy is feasible), so the answer is the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from kassign.assignor.consumer.optimal_problem import BoolArray
from kassign.assignor.flow import FlowGraph, IntArray, layout, solve

__all__ = ["decreasing_min", "solve_split", "spread_bounds", "water_fill"]


def water_fill(eligible: BoolArray, counts: IntArray, sizes: IntArray) -> IntArray:
    """A feasible, roughly balanced split of each pool over its classes (pool x class units).

    Pools with the fewest eligible classes go first; each raises its classes' per-member loads
    as evenly as integers allow. Used for the exact flow's bounds, and as the fallback.
    """
    totals = np.zeros(sizes.size, np.int64)
    split = np.zeros(eligible.shape, np.int64)
    order = sorted(range(counts.size), key=lambda p: (int(eligible[p].sum()), p))
    for p in order:
        classes = np.flatnonzero(eligible[p])
        give = _fill(totals[classes], sizes[classes], int(counts[p]))
        split[p, classes] = give
        totals[classes] += give
    return split


def _fill(totals: IntArray, sizes: IntArray, units: int) -> IntArray:
    """``units`` over classes so that per-member loads rise from the bottom (water filling)."""
    levels = totals / sizes
    order = np.argsort(levels, kind="stable")
    cum_t = np.cumsum(totals[order])
    cum_n = np.cumsum(sizes[order])
    water = (units + cum_t) / cum_n
    upper = np.append(levels[order][1:], np.inf)
    j = int(np.argmax(water <= upper))
    give = np.zeros(totals.size, np.int64)
    below = order[: j + 1]
    give[below] = np.floor(np.maximum(0.0, water[j] * sizes[below] - totals[below]))
    for _ in range(units - int(give.sum())):  # fewer than the number of classes
        c = int(np.argmin((totals + give) / sizes))
        give[c] += 1
    return give


def decreasing_min(
    eligible: BoolArray, counts: IntArray, sizes: IntArray, greedy: IntArray
) -> tuple[FlowGraph, IntArray]:
    """The flow whose optimum is a decreasingly minimal split, and its pool -> class arcs' index.

    ``greedy`` is a feasible split (``water_fill``) bounding the levels worth an arc.
    """
    totals = greedy.sum(axis=0)
    reach = (eligible * counts[:, None]).sum(axis=0)
    live = reach > 0
    low = int((totals[live] // sizes[live]).min()) if live.any() else 0
    high = int((-(-totals // sizes)).max(initial=0))
    tops = np.minimum(high, -(-reach // sizes))
    pools, classes = eligible.shape
    nodes = layout(("pools", pools), ("classes", classes), ("sink", 1))
    sink = nodes.start("sink")
    p, c = np.nonzero(eligible)
    feed = (p, nodes.start("classes") + c, counts[p], 0)
    steps = np.maximum(tops - low, 0) * live
    level_class = np.repeat(np.arange(classes), steps)
    level = low + np.arange(level_class.size) - np.repeat(np.cumsum(steps) - steps, steps)
    floor = (nodes.start("classes") + np.arange(classes), sink, sizes * low * live, 0)
    levels = (nodes.start("classes") + level_class, sink, sizes[level_class], 2 * level + 1)
    supplies = np.zeros(nodes.num_nodes, np.int64)
    supplies[:pools] = counts
    supplies[sink] = -int(counts.sum())
    return FlowGraph.of(nodes.num_nodes, [feed, floor, levels], supplies), np.arange(p.size)


def solve_split(
    eligible: BoolArray, counts: IntArray, sizes: IntArray, afford: Callable[[int], object]
) -> IntArray:
    """A decreasingly minimal split of pools over classes (pool x class units); ``afford`` is
    told the graph's arc count first and raises ``SolverError`` if the budget cannot take it."""
    graph, feed = decreasing_min(eligible, counts, sizes, water_fill(eligible, counts, sizes))
    afford(graph.num_arcs)
    flows = solve(graph).flows[feed]
    split = np.zeros(eligible.shape, np.int64)
    split[np.nonzero(eligible)] = flows
    return split


def spread_bounds(split: IntArray, sizes: IntArray, live: BoolArray) -> tuple[int, int]:
    """The least largest load and the greatest smallest load (over members that can take any
    unit) of every assignment, read off a decreasingly minimal ``split``."""
    totals = split.sum(axis=0)
    members = np.maximum(sizes, 1)
    high = int((-(-totals // members)).max(initial=0))
    low = int((totals // members)[live].min()) if live.any() else 0
    return low, high
