"""Racks in the load core: they steer the last fill, never its peak past the target found,
never an item where it may not go, and (unless ``racks_first``) never a kept item away."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.load import LoadProblem, balance

from tests.assignor.load.test_balance import small_problems


@st.composite
def racked(draw: st.DrawFn) -> LoadProblem:
    """``small_problems`` with each item on one of 3 sites, each local on some members."""
    problem = draw(small_problems())
    n, m = len(problem.loads), len(problem.capacities)
    sites = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    local = np.array(
        draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=3, max_size=3))
    )
    return replace(problem, sites=sites, local=local)


def blind(problem: LoadProblem) -> LoadProblem:
    """The same problem without racks."""
    p = problem
    return LoadProblem(p.loads, p.capacities, p.owners, p.classes, p.eligible)


def cross(problem: LoadProblem, owners: np.ndarray) -> int:
    assert problem.sites is not None and problem.local is not None
    return int((~problem.local[problem.sites, owners]).sum())


@settings(max_examples=80, deadline=None)
@given(racked(), st.booleans())
def test_racks_keep_the_target_and_eligibility(problem: LoadProblem, first: bool) -> None:
    plan = balance(problem, racks_first=first)
    without = balance(blind(problem))
    assert plan.target == without.target  # racks do not change the search
    assert plan.peak <= max(without.target, without.peak) * (1 + 1e-9)
    for i, owner in enumerate(plan.owners):
        assert owner in problem.allowed(i)
    if not first:
        assert plan.moves <= without.moves
    assert (balance(problem, racks_first=first).owners == plan.owners).all()


def spread(members: int, items: int, seed: int) -> LoadProblem:
    """3 racks, members spread over them, each item's replicas on 2 of them (its site: the
    rack it lacks), Zipf loads, fresh."""
    rng = np.random.default_rng(seed)
    loads = 1000.0 / (rng.permutation(items) + 1) ** 0.9
    sites = rng.integers(0, 3, items)
    local = np.array([[m % 3 != s for m in range(members)] for s in range(3)])
    return LoadProblem(loads, np.ones(members), np.full(items, -1), sites=sites, local=local)


def test_a_spread_group_reads_within_its_racks() -> None:
    problem = spread(12, 3000, 1)
    plan, without = balance(problem), balance(blind(problem))
    assert cross(problem, without.owners) > 500  # a third of the items, by chance
    assert cross(problem, plan.owners) == 0
    assert plan.peak <= 1.02 * plan.bound


def test_kept_items_stay_unless_racks_come_first() -> None:
    # item 0 (cross-rack on member 0) is kept by sticky; rack-optimal's order moves it to 1
    problem = LoadProblem(
        np.array([5.0, 5.0]),
        np.ones(2),
        np.array([0, 1]),
        sites=np.array([0, 0]),
        local=np.array([[False, True]]),
    )
    assert balance(problem).owners.tolist() == [0, 1]
    assert balance(problem).moves == 0
    # both on member 1 would double the peak: racks_first still keeps the target
    assert balance(problem, racks_first=True).owners.tolist() == [0, 1]
    # member 0 had everything: the heavy item can go to member 1, local, at the same peak.
    # 41 items: past the exact step's size, so this is the greedy fill's own order
    light = 40
    roomy = LoadProblem(
        np.array([5.0] + [5.0 / light] * light),
        np.ones(2),
        np.zeros(light + 1, dtype=np.int64),
        sites=np.array([0] + [1] * light),
        local=np.array([[False, True], [True, True]]),
    )
    sticky = balance(roomy)
    assert sticky.owners[0] == 0 and sticky.moves == light
    first = balance(roomy, racks_first=True)
    assert first.owners.tolist() == [1] + [0] * light
    assert first.peak == sticky.peak == 5.0
    # six items: the exact step finds what both orders prefer, one move (the heavy item, to
    # where it is local) where the greedy fill kept it and moved the five light ones
    small = LoadProblem(
        np.array([5.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        np.ones(2),
        np.zeros(6, dtype=np.int64),
        sites=np.array([0, 1, 1, 1, 1, 1]),
        local=np.array([[False, True], [True, True]]),
    )
    for order in (False, True):
        plan = balance(small, racks_first=order)
        assert plan.owners.tolist() == [1, 0, 0, 0, 0, 0] and plan.peak == 5.0
