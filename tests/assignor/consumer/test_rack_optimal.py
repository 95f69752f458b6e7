"""``rack-optimal``: optimal by brute force on tiny groups, and its invariants on random ones.

The brute force enumerates every assignment of a tiny group (each partition to one of its
subscribers), keeps those whose loads meet the balance tier (every member that can take a
partition between the least possible largest load and the greatest possible smallest one), and
checks that the assignor's answer reaches the least ``cross + stickiness_cost x moves`` among
them (ties: fewer cross-rack partitions), then the least sum of squared loads.
"""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import (
    AssignOptions,
    ConsumerGroup,
    GroupAssignment,
    Member,
    RackStatus,
    Topic,
    TopicPartition,
    assign,
    consumer_group,
    optimal_flow,
    optimal_problem,
)
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.optimal_problem import build_problems, settled_owners
from kassign.assignor.errors import InvalidRequest

RACKS = ("r1", "r2", "r3")
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def groups(draw: st.DrawFn, *, max_partitions: int = 9, max_members: int = 8) -> ConsumerGroup:
    """Members with and without racks over 1-3 topics; claims from two generations."""
    racks = st.frozensets(st.sampled_from(RACKS), max_size=2)
    topics = [
        Topic(f"t{i}", tuple(draw(st.lists(racks, min_size=1, max_size=max_partitions // 2))))
        for i in range(draw(st.integers(1, 3)))
    ]
    names = [t.name for t in topics]
    every = [TopicPartition(t.name, p) for t in topics for p in range(t.partitions)]
    members = []
    for i in range(draw(st.integers(2, max_members))):
        members.append(
            Member(
                member_id=f"m{i}",
                topics=tuple(draw(st.lists(st.sampled_from(names), unique=True, max_size=3))),
                rack_id=draw(st.none() | st.sampled_from(RACKS)),
                owned_partitions=tuple(draw(st.lists(st.sampled_from(every), unique=True))),
                generation=draw(st.sampled_from((-1, 3, 4))),
            )
        )
    return consumer_group(members, topics)


def _every(group: ConsumerGroup) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t, n in partitions_per_topic(group).items() for p in range(n)]


def _loads(group: ConsumerGroup, owner: dict[TopicPartition, str]) -> dict[str, int]:
    loads = {m.member_id: 0 for m in group.members}
    for member in owner.values():
        loads[member] += 1
    return loads


def _live(group: ConsumerGroup) -> list[str]:
    """Members that can take a partition."""
    topics = partitions_per_topic(group)
    return [m.member_id for m in group.members if any(t in topics for t in m.topics)]


def _cross(group: ConsumerGroup, owner: dict[TopicPartition, str]) -> int:
    rack = {m.member_id: m.rack for m in group.members}
    return sum(
        1
        for tp, m in owner.items()
        if rack[m] is not None
        and rack[m] not in group.topics[tp.topic].partition_racks[tp.partition]
    )


def _key(group: ConsumerGroup, owner: dict[TopicPartition, str], s: float) -> tuple[int, int]:
    """The objective below the balance tier, in the assignor's own integer units."""
    settled = settled_owners(group)
    moves = sum(1 for tp, m in owner.items() if tp in settled and settled[tp] != m)
    cross = _cross(group, owner)
    squares = sum(v * v for v in _loads(group, owner).values())
    if round(2000 * s) == 0:
        return ((len(owner) + 1) * cross + moves, squares)
    return (2001 * cross + round(2000 * s) * moves, squares)


def _owner(result: GroupAssignment) -> dict[TopicPartition, str]:
    return {tp: m.member_id for m in result.members for tp in m.partitions}


@SETTINGS
@given(groups(max_partitions=6, max_members=4), st.sampled_from((0.0, 0.3, 0.5, 2.0)))
def test_optimal_by_brute_force(group: ConsumerGroup, s: float) -> None:
    every = _every(group)
    subscribers = [[m.member_id for m in group.members if tp.topic in m.topics] for tp in every]
    live = _live(group)
    candidates = [dict(zip(every, pick, strict=True)) for pick in itertools.product(*subscribers)]
    loads = [_loads(group, c) for c in candidates]
    high = min(max(ld.values()) for ld in loads)
    low = max(min((ld[m] for m in live), default=0) for ld in loads)
    balanced = [
        c
        for c, ld in zip(candidates, loads, strict=True)
        if all(low <= ld[m] <= high for m in live)
    ]
    result = assign("rack-optimal", group, AssignOptions(stickiness_cost=s))
    ours = _owner(result)
    assert result.report.rack_status is RackStatus.OPTIMAL
    assert sorted(ours) == every
    mine = _loads(group, ours)
    assert all(low <= mine[m] <= high for m in live), (mine, low, high)
    assert _key(group, ours, s) == min(_key(group, c, s) for c in balanced)
    assert result.report.cross_rack_partitions == _cross(group, ours)


@SETTINGS
@given(groups(), st.booleans())
def test_valid_balanced_deterministic(group: ConsumerGroup, cooperative: bool) -> None:
    options = AssignOptions(cooperative=cooperative)
    result = assign("rack-optimal", group, options)
    assert result == assign("rack-optimal", group, options)
    owner = _owner(result)
    withheld = {tp for tp in _every(group) if tp not in owner}
    assert len(owner) + len(withheld) == len(_every(group))
    assert result.report.withheld_partitions == len(withheld)
    topics = {m.member_id: m.topics for m in group.members}
    assert all(tp.topic in topics[m] for tp, m in owner.items())
    if not cooperative:
        assert not withheld
        loads = [v for m, v in _loads(group, owner).items() if m in _live(group)]
        if len({frozenset(m.topics) for m in group.members}) == 1 and loads:
            assert max(loads) - min(loads) <= 1


@SETTINGS
@given(groups())
def test_cooperative_moves_only_through_revocation(group: ConsumerGroup) -> None:
    eager = _owner(assign("rack-optimal", group))
    result = assign("rack-optimal", group, AssignOptions(cooperative=True))
    claimants: dict[TopicPartition, set[str]] = {}
    for m in group.members:
        for tp in m.owned_partitions:
            claimants.setdefault(tp, set()).add(m.member_id)
    for member in result.members:
        for tp in member.partitions:
            assert claimants.get(tp, set()) <= {member.member_id}, tp
            assert eager[tp] == member.member_id
        owned = next(m.owned_partitions for m in group.members if m.member_id == member.member_id)
        assert set(member.revoked) == {
            tp for tp in owned if eager.get(tp, member.member_id) != member.member_id
        }
    withheld = {tp for tp in eager if tp not in _owner(result)}
    assert withheld == {tp for tp, m in eager.items() if claimants.get(tp, set()) - {m}}


@SETTINGS
@given(groups())
def test_co_partitioned_columns_stay_together(group: ConsumerGroup) -> None:
    topics = sorted(partitions_per_topic(group))
    together = frozenset(topics[:2])
    subscribed_both = any(together <= set(m.topics) for m in group.members)
    options = AssignOptions(co_partitioned=(together,))
    if len(together) == 2 and not subscribed_both:
        with pytest.raises(InvalidRequest, match="co_partitioned"):
            assign("rack-optimal", group, options)
        return
    owner = _owner(assign("rack-optimal", group, options))
    assert sorted(owner) == _every(group)
    for p in range(max((group.partition_count(t) for t in together), default=0)):
        column = {owner[TopicPartition(t, p)] for t in together if p < group.partition_count(t)}
        assert len(column) == 1, (p, column)


@SETTINGS
@given(groups())
def test_the_budget_is_priced_from_the_request_not_a_clock(group: ConsumerGroup) -> None:
    """Issue 16: the budget decision read the clock, so the same request could be answered
    optimally or by the fallback depending on load. Now the arcs are priced: a budget one arc
    short of the first graph falls back, with the same reason every time; the clock is never
    read (a clock that fails on reading changes nothing)."""
    if not _every(group):
        return
    first = assign("rack-optimal", group, AssignOptions(time_budget_s=0.0)).report.solver_reason
    arcs = int(first.split("too small for ")[1].split(" arcs")[0])
    short = AssignOptions(time_budget_s=(arcs - 0.5) * 0.003 / 1000.0)
    answers = {repr(assign("rack-optimal", group, short)) for _ in range(2)}
    assert len(answers) == 1
    assert "spent" not in first and f"too small for {arcs} arcs" in answers.pop()
    with mock.patch("time.perf_counter", side_effect=AssertionError("a clock was read")):
        result = assign("rack-optimal", group, AssignOptions(time_budget_s=3600.0))
    assert result.report.rack_status is RackStatus.OPTIMAL


@SETTINGS
@given(groups())
def test_fallback_is_valid_and_reported(group: ConsumerGroup) -> None:
    result = assign("rack-optimal", group, AssignOptions(time_budget_s=0.0))
    if not _every(group):  # nothing to solve
        assert result.report.rack_status is RackStatus.OPTIMAL
        return
    assert result.report.rack_status is RackStatus.FALLBACK
    assert result.report.solver_fallback
    assert "time budget" in result.report.solver_reason
    owner = _owner(result)
    assert sorted(owner) == _every(group)
    topics = {m.member_id: m.topics for m in group.members}
    assert all(tp.topic in topics[m] for tp, m in owner.items())


def _triangle(extra_local: str | None) -> ConsumerGroup:
    """a, b, c on r1, r2, r3, one partition each, a's on the wrong rack. t-0 is local only on
    b's rack; ``extra_local`` is the other rack where b's t-1 is local: "r1" lets a and b swap
    (two moves), "r3" needs the three-way rotation (t-2, c's, is local on r3 and r1)."""
    racks = (frozenset({"r2"}), frozenset({"r2", extra_local or "r2"}), frozenset({"r3", "r1"}))
    members = [
        Member(
            member_id=name,
            topics=("t",),
            rack_id=rack,
            owned_partitions=(TopicPartition("t", p),),
            generation=1,
        )
        for p, (name, rack) in enumerate((("a", "r1"), ("b", "r2"), ("c", "r3")))
    ]
    return consumer_group(members, [Topic("t", racks)])


@pytest.mark.parametrize(
    ("extra_local", "s", "cross", "moved"),
    [
        ("r1", 0.5, 0, 2),  # two moves tie one rack at 0.5: the rack wins
        ("r1", 0.6, 1, 0),
        ("r3", 0.5, 1, 0),  # three moves cost more than one rack at 0.5
        ("r3", 0.3, 0, 3),
        ("r3", 0.0, 0, 3),  # 0: racks strictly first
    ],
)
def test_stickiness_cost_trades_moves_for_racks(
    extra_local: str, s: float, cross: int, moved: int
) -> None:
    result = assign("rack-optimal", _triangle(extra_local), AssignOptions(stickiness_cost=s))
    assert (result.report.cross_rack_partitions, result.report.moved_partitions) == (cross, moved)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (AssignOptions(stickiness_cost=-1.0), "options.stickiness_cost"),
        (AssignOptions(stickiness_cost=float("nan")), "options.stickiness_cost"),
        (AssignOptions(time_budget_s=float("inf")), "options.time_budget_s"),
        (
            AssignOptions(co_partitioned=(frozenset({"t"}), frozenset({"t"}))),
            "options.co_partitioned[1]",
        ),
    ],
)
def test_bad_options_name_the_field(options: AssignOptions, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        assign("rack-optimal", _triangle("r1"), options)
    assert caught.value.field == field


def test_kafkas_assignors_ignore_options() -> None:
    group = _triangle("r1")
    options = AssignOptions(cooperative=True, stickiness_cost=0.0)
    assert assign("sticky", group, options) == assign("sticky", group)


@SETTINGS
@given(groups(max_partitions=16, max_members=8))
def test_the_column_build_is_the_unit_build(group: ConsumerGroup) -> None:
    """Without co-partitioned sets every unit is one partition and the problem is built as
    whole arrays (``singletons``); it must equal the per-unit build (``problem``) array for
    array, classes numbered alike, since the flows and so the answer read it."""
    problems = build_problems(group, AssignOptions())
    assume(problems)
    (problem,) = problems
    assert problem.space is not None
    topics = partitions_per_topic(group)
    units = optimal_problem._units(topics, [])
    context = optimal_problem._Context(
        group,
        problem_subs(group),
        problem.racks,
        problem.rack_of,
        problem.sub_of,
        optimal_problem.settled_claims(group),
        {m: i for i, m in enumerate(problem.members)},
    )
    by_unit = context.problem(1, units, problem.members)
    assert problem.space.objects(np.arange(problem.num_units)) == [u[0] for u in units]
    for name in ("class_of", "class_eligible", "class_cost", "claim_unit", "claim_member"):
        assert np.array_equal(getattr(problem, name), getattr(by_unit, name)), name
    assert np.array_equal(problem.claim_count, by_unit.claim_count)
    if problem.claim_unit.size:  # the flow's groups of claimed units, as arrays and unit by unit
        fast, slow = (
            optimal_flow._sole_claimant_groups(problem),
            optimal_flow._profile_groups(problem),
        )
        assert fast[0] == slow[0]
        for a, b in zip(fast[1:], slow[1:], strict=True):
            assert np.array_equal(a, b)


def problem_subs(group: ConsumerGroup) -> tuple[frozenset[str], ...]:
    """The subscription classes in ``build_problems``'s numbering (members by Java order)."""
    subs: dict[frozenset[str], int] = {}
    for m in sorted(group.members, key=lambda m: java_key(m.member_id)):
        subs.setdefault(frozenset(m.topics), len(subs))
    return tuple(subs)
