"""``rack-optimal``: kassign's own consumer assignor, balanced, then rack-local, then sticky.

The objective, in tiers (docs/consumer-assignors.md, "rack-optimal"):

1. balance (hard): every member that can take a partition gets between the greatest smallest
   load and the least largest load any assignment has (``optimal_balance``): within one where
   subscriptions allow, and never a wider max-min spread than any other assignment, Kafka's
   included;
2. the least ``cross + stickiness_cost x moves``: ``cross`` the partitions whose member has a
   rack holding none of their replicas (``AssignmentReport.cross_rack_partitions``; a member
   without a rack is never cross-rack), ``moves`` the claims, settled as ``cooperative-sticky``
   settles them, given to another member; equal totals: fewer cross-rack partitions;
3. the least sum of squared loads (the most even spread inside the bounds of tier 1).

``stickiness_cost`` 0 (the default, or below 1/4000) makes the order strictly balance, racks,
moves. A positive one is kept to 1/2000 (2000 x cost, rounded) and weighed: 0.5 means two moves
are worth one rack-local partition (a tie, so taken) and three are not.

Two flows on ``flow.py`` (``optimal_balance``, ``optimal_flow``) per unit size (partitions, or
columns of ``co_partitioned`` topics). If the time budget cannot afford a graph (each priced
before it runs at ``_MS_PER_ARC`` per arc: an estimate from the request, never a clock, so the
answer does not depend on load), or the solver fails, the fallback is a greedy balanced split
that ignores racks and claims, and the report says so (``RackStatus.FALLBACK``,
``solver_reason``).

``cooperative``: a partition that some other member still claims is withheld from its new owner
this round, and listed in that member's ``revoked``: it changes hands only through revocation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from kassign.assignor.budget import priced_budget
from kassign.assignor.consumer.columns import PartitionList, PartitionSpace
from kassign.assignor.consumer.common import group_rack_reason, partitions_per_topic
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup, TopicPartition
from kassign.assignor.consumer.optimal_balance import solve_split, spread_bounds, water_fill
from kassign.assignor.consumer.optimal_flow import Costs, build_placement, place_units
from kassign.assignor.consumer.optimal_problem import Problem, build_problems
from kassign.assignor.consumer.result import (
    GroupAssignment,
    RackStatus,
    group_assignment,
)
from kassign.assignor.consumer.revoked import moving_away, withheld_from
from kassign.assignor.errors import InvalidRequest, SolverError
from kassign.assignor.flow import IntArray, solve

__all__ = ["NAME", "assign_rack_optimal"]

NAME = "rack-optimal"
_RESOLUTION = 1000
"""``stickiness_cost`` is counted in 1/(2 x this) of a cross-rack partition."""
_MAX_STICKINESS = 1_000.0
_MS_PER_ARC = 0.003
"""Conservative solve-time estimate per arc (as the Streams optimiser's), for skipping a graph."""


def assign_rack_optimal(
    group: ConsumerGroup, options: AssignOptions = AssignOptions()
) -> GroupAssignment:
    """Assign ``group`` balanced, rack-local and sticky, as ``options`` ask."""
    costs = _costs(options, group)
    afford = priced_budget(options.time_budget_s, _MS_PER_ARC, "arcs")
    target: dict[str, Sequence[TopicPartition]] = {m.member_id: [] for m in group.members}
    status, reason = RackStatus.OPTIMAL, ""
    for problem in build_problems(group, options):
        try:
            owner = _optimal(problem, costs, afford)
        except SolverError as exc:
            status, reason = RackStatus.FALLBACK, str(exc)
            owner = _fallback(problem)
        if problem.space is not None:  # the only problem: every partition its own unit
            target.update(_lists(problem.space, problem.members, owner))
            continue
        for unit, m in zip(problem.units, owner.tolist(), strict=True):
            target[problem.members[m]].extend(unit)  # type: ignore[attr-defined]
    withheld = withheld_from(group, target) if options.cooperative else frozenset()
    return group_assignment(
        NAME,
        group,
        target,
        claims={m.member_id: m.owned_partitions for m in group.members},
        rack_reason=group_rack_reason(group),
        withheld=withheld,
        revoked=moving_away(group, target) if options.cooperative else None,
        rack_status=status,
        solver_reason=reason,
    )


def _lists(
    space: PartitionSpace, members: tuple[str, ...], owner: IntArray
) -> dict[str, PartitionList]:
    """Each member's partitions as ids, ascending (a ``PartitionList`` each, for the answer's
    columns: no ``TopicPartition`` made)."""
    order = np.argsort(owner, kind="stable")
    ends = np.searchsorted(owner[order], np.arange(len(members) + 1, dtype=np.int64)).tolist()
    return {m: PartitionList(space, order[ends[i] : ends[i + 1]]) for i, m in enumerate(members)}


def _optimal(problem: Problem, costs: Costs, afford: Callable[[int], object]) -> IntArray:
    eligible, counts, sizes, _ = _pools(problem)
    split = solve_split(eligible, counts, sizes, afford)
    live = (eligible * counts[:, None]).sum(axis=0) > 0
    low, high = spread_bounds(split, sizes, live)
    can = live[problem.sub_of]
    placement = build_placement(problem, low * can, high * can, costs)
    afford(placement.graph.num_arcs)
    return place_units(problem, placement, solve(placement.graph).flows)


def _fallback(problem: Problem) -> IntArray:
    """Balanced by the greedy split, ignoring racks and claims: valid whatever failed."""
    eligible, counts, sizes, class_pool = _pools(problem)
    split = water_fill(eligible, counts, sizes)
    pool_of_unit = class_pool[problem.class_of]
    units = np.argsort(pool_of_unit, kind="stable")
    p, s = np.nonzero(split)
    sub_of_unit = np.empty(problem.num_units, np.int64)
    sub_of_unit[units] = np.repeat(s, split[p, s])
    owner = np.empty(problem.num_units, np.int64)
    for sub in range(sizes.size):
        mine = np.flatnonzero(sub_of_unit == sub)
        members = np.flatnonzero(problem.sub_of == sub)
        if mine.size:
            owner[mine] = members[np.arange(mine.size) % members.size]
    return owner


def _pools(problem: Problem) -> tuple[np.ndarray, IntArray, IntArray, IntArray]:
    """Units by eligible subscription classes: eligibility rows, counts, class sizes, and each
    unit class's pool."""
    rows, class_pool = np.unique(problem.class_eligible, axis=0, return_inverse=True)
    class_pool = class_pool.reshape(-1)
    counts = np.bincount(class_pool[problem.class_of], minlength=rows.shape[0])
    sizes = np.bincount(problem.sub_of, minlength=problem.num_subs)
    return rows, counts.astype(np.int64), sizes.astype(np.int64), class_pool


def _costs(options: AssignOptions, group: ConsumerGroup) -> Costs:
    s = options.stickiness_cost
    if not (math.isfinite(s) and 0.0 <= s <= _MAX_STICKINESS):
        raise InvalidRequest(
            f"{s} is outside [0, {_MAX_STICKINESS:g}]", field="options.stickiness_cost"
        )
    budget = options.time_budget_s
    if not (math.isfinite(budget) and budget >= 0.0):
        raise InvalidRequest(f"{budget} is not a duration", field="options.time_budget_s")
    move = round(2 * s * _RESOLUTION)
    if move == 0:  # lexicographic: no number of moves outweighs one cross-rack partition
        partitions = sum(partitions_per_topic(group).values())
        return Costs(cross=partitions + 1, move=1)
    return Costs(cross=2 * _RESOLUTION + 1, move=move)
