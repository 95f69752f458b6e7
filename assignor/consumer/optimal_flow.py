"""``rack-optimal``'s second flow: balance kept, then cross-rack partitions and moves at least cost.

Nodes, in this order (``flow.layout``):

- *groups*: claimed units with the same class and the same claimants (supply: their count);
- *pools*: one per unit class (supply: its unclaimed units);
- *member classes*: members with the same subscription and rack;
- *members*, then the *sink* (demand: every unit).

Arcs, in this order (the order is the tie-break among equal optima):

- group -> each claimant (keep): ``cross(class, rack) + move x (claimed - the claimant's)``;
  group -> its pool (release): ``move x claimed``;
- pool -> every member class whose subscription covers the class: ``cross(class, rack)``;
- member class -> each of its members: free;
- member -> sink: one arc per unit above the member's lower bound (which its node keeps, as a
  demand) up to its upper bound, costing ``2k - 1`` for its ``k``-th unit: the marginal of
  ``k^2``, so among equally rack-local and sticky answers the flow picks the most balanced.

Rack and move costs are multiplied by ``weight``, more than the sum of squares can differ
between any two answers, so balance beyond the bounds never outweighs a rack or a move. A unit
released and dealt back to its own claimant is kept in fact, which only lowers the true cost
below the flow's optimum: never above it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from kassign.assignor.consumer.optimal_problem import Problem
from kassign.assignor.errors import SolverError
from kassign.assignor.flow import FlowGraph, IntArray, layout

__all__ = ["Costs", "Placement", "build_placement", "place_units"]


@dataclass(frozen=True, slots=True)
class Costs:
    """Integer unit costs: ``cross`` per cross-rack partition, ``move`` per moved one."""

    cross: int
    move: int


@dataclass(frozen=True, slots=True)
class Placement:
    """The second flow, with what reading its answer back needs."""

    graph: FlowGraph
    group_units: IntArray  # claimed units, grouped (group-major, unit order within)
    group_dest: IntArray  # per group arc: the member it keeps to, -1 for release
    pool_heads: IntArray  # per pool arc (pool-major): member class
    pool_tails: IntArray
    class_members: IntArray  # per member-class arc (class-major): member
    member_class: IntArray  # each member's member class
    blocks: tuple[slice, slice, slice]


def build_placement(problem: Problem, low: IntArray, high: IntArray, costs: Costs) -> Placement:
    """The flow for ``problem`` with per-member load bounds ``[low, high]`` (hard)."""
    n_units = problem.num_units
    claimed = np.bincount(problem.claim_unit, problem.claim_count, minlength=n_units).astype(
        np.int64
    )
    groups, group_units, group_class, group_size = _groups(problem)
    weight = int((high**2 - low**2).sum()) + 1  # above any difference in the sum of squares
    cross, move = costs.cross * weight, costs.move * weight
    keys = problem.sub_of * (len(problem.racks) + 1) + problem.rack_of
    mclass_keys, member_class = np.unique(keys, return_inverse=True)
    mclass_sub = mclass_keys // (len(problem.racks) + 1)
    mclass_rack = mclass_keys % (len(problem.racks) + 1)
    n_classes = problem.class_cost.shape[0]
    members = len(problem.members)
    nodes = layout(
        ("groups", len(groups)),
        ("pools", n_classes),
        ("mclasses", mclass_keys.size),
        ("members", members),
        ("sink", 1),
    )
    pool0, mc0, m0 = nodes.start("pools"), nodes.start("mclasses"), nodes.start("members")
    sink = nodes.start("sink")

    tails, heads, caps, cost, dest = [], [], [], [], []
    for g, profile in enumerate(groups):
        k, size = int(group_class[g]), int(group_size[g])
        total = sum(c for _, c in profile)
        for m, c in profile:
            tails.append(g)
            heads.append(m0 + m)
            caps.append(size)
            cost.append(cross * int(problem.class_cost[k, problem.rack_of[m]]) + move * (total - c))
            dest.append(m)
        tails.append(g)
        heads.append(pool0 + k)
        caps.append(size)
        cost.append(move * total)
        dest.append(-1)
    keep = (tails, heads, caps, cost)

    pool_tails, pool_heads = np.nonzero(problem.class_eligible[:, mclass_sub])
    class_units = np.bincount(problem.class_of, minlength=n_classes)
    feed = (
        pool0 + pool_tails,
        mc0 + pool_heads,
        class_units[pool_tails],
        cross * problem.class_cost[pool_tails, mclass_rack[pool_heads]],
    )
    by_class = np.argsort(member_class, kind="stable")
    spread = (mc0 + member_class[by_class], m0 + by_class, n_units, 0)

    steps = np.maximum(high - low, 0)
    level_member = np.repeat(np.arange(members), steps)
    k = (
        1
        + np.repeat(low, steps)
        + np.arange(level_member.size)
        - np.repeat(np.cumsum(steps) - steps, steps)
    )
    levels = (m0 + level_member, sink, 1, 2 * k - 1)

    supplies = np.zeros(nodes.num_nodes, np.int64)
    supplies[: len(groups)] = group_size
    unclaimed = np.bincount(problem.class_of[claimed == 0], minlength=n_classes)
    supplies[pool0 : pool0 + n_classes] = unclaimed
    supplies[m0 : m0 + members] = -low  # each member's lower bound, taken at its node
    supplies[sink] = -(n_units - int(low.sum()))
    graph = FlowGraph.of(nodes.num_nodes, [keep, feed, spread, levels], supplies)
    a, b = len(tails), len(tails) + pool_tails.size
    return Placement(
        graph=graph,
        group_units=group_units,
        group_dest=np.asarray(dest, np.int64),
        pool_heads=pool_heads,
        pool_tails=pool_tails,
        class_members=by_class,
        member_class=member_class,
        blocks=(slice(0, a), slice(a, b), slice(b, b + members)),
    )


def place_units(problem: Problem, placement: Placement, flows: IntArray) -> IntArray:
    """Each unit's member, read from the solved flows; checked as it is read."""
    keep_flows, pool_flows, class_flows = (flows[s] for s in placement.blocks)
    owner = np.full(problem.num_units, -1, np.int64)
    dest = np.repeat(placement.group_dest, keep_flows)
    owner[placement.group_units] = dest
    # every unit not kept is in a pool: its class's, in unit order
    pooled = np.flatnonzero(owner < 0)
    pooled = pooled[np.argsort(problem.class_of[pooled], kind="stable")]
    if np.repeat(placement.pool_tails, pool_flows).size != pooled.size:
        raise SolverError("BAD_RESULT", "pool flows do not match the pooled units")
    mclass = np.repeat(placement.pool_heads, pool_flows)
    arriving = pooled[np.argsort(mclass, kind="stable")]
    owner[arriving] = np.repeat(placement.class_members, class_flows)
    subs = problem.sub_of[owner]
    if (owner < 0).any() or not problem.class_eligible[problem.class_of, subs].all():
        raise SolverError("BAD_RESULT", "a unit went to no member or a non-subscriber")
    return owner


def _groups(
    problem: Problem,
) -> tuple[list[tuple[tuple[int, int], ...]], IntArray, IntArray, IntArray]:
    """Claimed units grouped by (class, claimants): profiles, units group-major, class, size."""
    if problem.claim_unit.size and np.all(problem.claim_unit[1:] > problem.claim_unit[:-1]):
        return _sole_claimant_groups(problem)
    return _profile_groups(problem)


def _profile_groups(
    problem: Problem,
) -> tuple[list[tuple[tuple[int, int], ...]], IntArray, IntArray, IntArray]:
    """``_groups`` unit by unit, for units claimed by several members (co-partitioned)."""
    profiles: dict[int, list[tuple[int, int]]] = {}
    for u, m, c in zip(
        problem.claim_unit.tolist(),
        problem.claim_member.tolist(),
        problem.claim_count.tolist(),
        strict=True,
    ):
        profiles.setdefault(u, []).append((m, c))
    keys: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
    unit_group = []
    for u, profile in profiles.items():
        key = (int(problem.class_of[u]), tuple(profile))
        unit_group.append(keys.setdefault(key, len(keys)))
    units = np.fromiter(profiles, np.int64, len(profiles))
    order = np.argsort(np.asarray(unit_group, np.int64), kind="stable")
    group_class = np.array([k for k, _ in keys], np.int64)
    size = np.bincount(np.asarray(unit_group, np.int64), minlength=len(keys))
    return [p for _, p in keys], units[order], group_class, size


def _sole_claimant_groups(
    problem: Problem,
) -> tuple[list[tuple[tuple[int, int], ...]], IntArray, IntArray, IntArray]:
    """``_groups`` when each claimed unit has one claimant (every unit a partition, claims
    settled: the usual group), as whole arrays: a group is (class, claimant, count), numbered
    in order of first appearance as ``_groups`` numbers them (issue 24: a rejoining group of a
    million partitions spent seconds there, a dict step per claimed partition)."""
    units, member, count = problem.claim_unit, problem.claim_member, problem.claim_count
    width_m, width_c = len(problem.members) + 1, int(count.max()) + 1
    key = (problem.class_of[units] * width_m + member) * width_c + count
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size, dtype=np.int64)
    unit_group = rank[inverse.reshape(-1)]
    heads = first[order]
    profiles: list[tuple[tuple[int, int], ...]] = [
        ((m, c),) for m, c in zip(member[heads].tolist(), count[heads].tolist(), strict=True)
    ]
    by_group = np.argsort(unit_group, kind="stable")
    size = np.bincount(unit_group, minlength=order.size).astype(np.int64)
    group_class: IntArray = problem.class_of[units[heads]]
    return profiles, units[by_group], group_class, size
