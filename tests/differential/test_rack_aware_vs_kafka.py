"""kassign's rack-aware assignment (KIP-925) against Kafka Streams' own, on 300 seeded groups.

Each group (``rack_groups.py``: 6 tasks on 2 clients up to 400 tasks on 40, 2-4 racks,
replication 1-3, 0-2 standbys, KIP-708 tags or none, ``min_traffic`` or ``balance_subtopology``,
default or explicit costs, the high-availability or the sticky assignor, ``groups.py``'s
histories) goes through kassign's servicer entry point with its rack ids kept, and through
kafka-streams 4.3.1's assignor with a real ``RackAwareTaskAssignor`` (``kafka_oracle.py``, one
batch). kassign's answers then go through Kafka's ``TaskAssignmentUtils.validateTaskAssignment``
(a second batch). ``rack_report.compare`` does all three once for the module.

Placements are not compared: both sides solve a min-cost flow, and equal optima may differ
(docs/rack-aware.md, Ties), kassign's optimiser is global where Kafka's standby swaps are
pairwise, and kassign takes the rack as a standby tag where Kafka's high-availability assignor
does not. Asserted per group instead:

- Kafka ran its rack-aware optimisation (the oracle fed it racks it accepts);
- kassign's answer is valid by Kafka's own check (``AssignmentError.NONE``), a check seen to
  name the fault in broken copies of one answer;
- the invariants Kafka's assignor tests assert: every task active exactly once, standbys only of
  stateful tasks and never beside their active, ``num_standby_replicas`` of them for every
  stateful task where there are enough clients (exactly that many when no warm-up is planned);
- balance as kassign's own tests define it: high availability, with no follow-up planned, leaves
  no stateful active that could move to a client that would still be lighter per thread
  (``tests/assignor/test_convergence.py``); sticky keeps every client's active count of the same
  request with strategy ``none`` (the optimiser moves tasks, never counts: docs/rack-aware.md;
  standby counts may differ, since standbys are placed after the actives moved, as in Kafka);
- cross-rack traffic (``rack_measure.cross_rack_cost``, Kafka's built-in cost model) no higher
  than Kafka's wherever Kafka spread replicas over tag values no better than kassign
  (``rack_measure.tag_spread``), but for the groups listed in ``ABOVE_KAFKA`` with a reason that
  is checked on each: Kafka's answer breaks a balance bound kassign keeps, or kassign's KIP-925
  objective from the previous assignment (``traffic_cost`` x cross-rack partitions +
  ``non_overlap_cost`` x (moved actives + standbys without state)) is no higher than Kafka's, a
  check seen to refuse doctored answers; these may not get worse;
- a follow-up rebalance wherever Kafka plans one (a warm-up or a standby movement).

Run alone: ``.venv/bin/python -m pytest -q tests/differential/test_rack_aware_vs_kafka.py``; the
totals table alone: ``.venv/bin/python -m tests.differential.rack_report``.
"""

from __future__ import annotations

import enum
from collections import Counter

import pytest
from kassign.v1 import assignment_pb2 as pb

from tests.differential import kafka_oracle
from tests.differential.compare import Outcome, kassign_outcome
from tests.differential.groups import Group
from tests.differential.rack_groups import NO_REPLICA_RACK, rack_group
from tests.differential.rack_measure import GroupView, measure
from tests.differential.rack_report import (
    FIRST_SEED,
    GROUPS,
    Result,
    Timings,
    compare,
    table,
    worst,
)

SHOWN = 10  # failing groups listed in a message


@pytest.fixture(scope="module")
def groups() -> list[Group]:
    return [rack_group(FIRST_SEED + i) for i in range(GROUPS)]


@pytest.fixture(scope="module")
def compared(kafka_classpath: str, groups: list[Group]) -> tuple[list[Result], Timings]:
    results, timings = compare(kafka_classpath, groups)
    print("\n" + table(results, timings))  # shown with -s, and in the cost test's failure
    return results, timings


@pytest.fixture(scope="module")
def results(compared: tuple[list[Result], Timings]) -> list[Result]:
    return compared[0]


def _listed(failures: list[str], total: int, what: str) -> str:
    return (
        f"{len(failures)} of {total} groups {what} (rebuild one with"
        " tests.differential.rack_groups.rack_group(seed)):\n" + "\n".join(failures[:SHOWN])
    )


def test_groups_span_the_intended_shapes(groups: list[Group]) -> None:
    """The generator covers what the comparison claims to cover (not a test of kassign)."""
    views = [GroupView.of(g.request) for g in groups]
    sizes = {(len(g.request.tasks), len(v.threads)) for g, v in zip(groups, views, strict=True)}
    configs = [g.request.configs for g in groups]
    replication = {
        len(p.rack_ids) for g in groups for t in g.request.tasks for p in t.topic_partitions
    }
    racks = Counter(r for v in views for r in v.rack.values())
    assert (6, 2) in sizes and (400, 40) in sizes
    assert sum(t < 150 for t, _ in sizes) > 0.9 * len(sizes)
    assert replication == {1, 2, 3}
    assert {
        len({r for t in g.request.tasks for p in t.topic_partitions for r in p.rack_ids})
        for g in groups
    } == {2, 3, 4}
    assert all(r for v in views for r in v.rack.values()), "every client has a rack"
    assert 0 < racks[NO_REPLICA_RACK] < 0.15 * sum(racks.values())
    assert {c.num_standby_replicas for c in configs} == {0, 1, 2}
    assert 0.3 < sum(bool(c.rack_aware_assignment_tags) for c in configs) / len(configs) < 0.7
    kinds = Counter((c.assignor, c.rack_aware_strategy) for c in configs)
    assert len(kinds) == 4 and min(kinds.values()) >= 50
    assert 0.3 < sum(c.HasField("traffic_cost") for c in configs) / len(configs) < 0.6
    assert any(c.HasField("non_overlap_cost") and c.non_overlap_cost == 0 for c in configs)
    assert any(not any(m.subscription.owned_partitions for m in g.request.members) for g in groups)
    assert any(
        len([p for p in t.topic_partitions if p.is_source]) == 2
        for g in groups
        for t in g.request.tasks
    )
    assert any(
        len([p for p in t.topic_partitions if p.is_changelog]) == 2
        for g in groups
        for t in g.request.tasks
    )


@pytest.mark.slow
def test_kafka_optimised_for_racks(results: list[Result]) -> None:
    """Every group has racks Kafka accepts (clients, sources in the Cluster, changelogs through
    InternalTopicManager): else Kafka's cost would be its unoptimised one."""
    off = [r.group.shape for r in results if not r.kafka_rack_aware]
    assert not off, _listed(off, len(results), "were not optimised by Kafka")


@pytest.mark.slow
def test_kassign_answers_pass_kafkas_validation(results: list[Result]) -> None:
    invalid = [f"{r.validation}: {r.group.shape}" for r in results if r.validation != "NONE"]
    assert not invalid, _listed(invalid, len(results), "fail validateTaskAssignment")


@pytest.mark.slow
def test_kafkas_validation_finds_broken_answers(
    kafka_classpath: str, results: list[Result]
) -> None:
    """The validation batch is not vacuous: Kafka's check names what is wrong with broken copies
    of one kassign answer."""
    r = next(
        r for r in results if len(r.ours.active) >= 2 and set(r.view.sources) - r.view.stateful
    )
    stateless = min(set(r.view.sources) - r.view.stateful)
    owner = next(p for p, held in r.ours.active.items() if stateless in held)
    other = min(p for p in r.ours.active if p != owner)
    active = r.ours.active
    broken: dict[str, tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]] = {
        "MISSING_PROCESS_ID": ({p: t for p, t in active.items() if p != other}, {}),
        "UNKNOWN_TASK_ID": ({**active, other: active[other] | {"99_0"}}, {}),
        "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES": ({**active, other: active[other] | {stateless}}, {}),
        "INVALID_STANDBY_TASK": (active, {other: frozenset({stateless})}),
    }
    checks = kafka_oracle.validate(
        kafka_classpath, [(r.group.request, a, s) for a, s in broken.values()]
    )
    assert checks == list(broken), r.group.shape


def _broken_invariants(r: Result) -> list[str]:
    """What of Kafka's assignor-test invariants kassign's answer breaks, one line each."""
    tasks = set(r.view.sources)
    actives = Counter(t for held in r.ours.active.values() for t in held)
    out = []
    if set(actives) != tasks or any(n != 1 for n in actives.values()):
        out.append("not every task active exactly once")
    standby_owners: dict[str, int] = {}
    for pid, held in r.ours.standby.items():
        if held & r.ours.active.get(pid, frozenset()):
            out.append(f"{pid}: standby beside its active {sorted(held & r.ours.active[pid])}")
        if held - r.view.stateful:
            out.append(f"{pid}: standby of stateless {sorted(held - r.view.stateful)}")
        for t in held:
            standby_owners[t] = standby_owners.get(t, 0) + 1
    wanted = min(r.group.request.configs.num_standby_replicas, len(r.view.threads) - 1)
    for t in sorted(r.view.stateful):
        n = standby_owners.get(t, 0)
        if n < wanted or (not r.ours.followup and n != wanted):
            out.append(f"task {t}: {n} standbys, {wanted} wanted")
    return out


@pytest.mark.slow
def test_kassign_answers_keep_kafkas_invariants(results: list[Result]) -> None:
    broken = [
        "\n".join([r.group.shape, *lines[:5]]) for r in results if (lines := _broken_invariants(r))
    ]
    assert not broken, _listed(broken, len(results), "break an invariant")


def _unbalanced_per_thread(r: Result) -> bool:
    """A stateful active could move to a client that would still be lighter per thread."""
    counts = {p: len(r.ours.active.get(p, frozenset()) & r.view.stateful) for p in r.view.threads}
    threads = r.view.threads
    return any(
        (counts[s] - 1) / threads[s] >= (counts[d] + 1) / threads[d]
        for s in counts
        for d in counts
        if s != d
    )


def _active_counts(outcome: Outcome) -> dict[str, int]:
    return {p: len(tasks) for p, tasks in outcome.active.items()}


def _without_racks(request: pb.AssignRequest) -> pb.AssignRequest:
    copy = pb.AssignRequest()
    copy.CopyFrom(request)
    copy.configs.rack_aware_strategy = pb.RACK_AWARE_STRATEGY_NONE
    return copy


@pytest.mark.slow
def test_kassign_keeps_its_balance(results: list[Result]) -> None:
    unbalanced = []
    for r in results:
        if r.group.request.configs.assignor == "sticky":
            unoptimised = kassign_outcome(_without_racks(r.group.request))
            if _active_counts(r.ours) != _active_counts(unoptimised):
                unbalanced.append(
                    f"sticky active counts differ from strategy none: {r.group.shape}"
                )
        elif not r.ours.followup and _unbalanced_per_thread(r):
            unbalanced.append(f"stateful actives unbalanced per thread: {r.group.shape}")
    assert not unbalanced, _listed(unbalanced, len(results), "are unbalanced")


@pytest.mark.slow
def test_followup_wherever_kafka_plans_one(results: list[Result]) -> None:
    planned = [r for r in results if r.kafka.followup]
    missing = [r.group.shape for r in planned if not r.ours.followup]
    assert planned, "Kafka should plan warm-ups in some groups"
    assert not missing, _listed(
        missing, len(planned), "with a Kafka follow-up have none in kassign"
    )


class Why(enum.Enum):
    """Why a group in ``ABOVE_KAFKA`` may pay more traffic than Kafka; each reason is checked
    on the group (``test_each_group_above_kafka_is_explained``), not only written here."""

    BALANCE = "Kafka's answer is further above the clients' thread shares than kassign's"
    MOVEMENT = "Kafka moves more to save it: kassign's KIP-925 objective is lower"


ABOVE_KAFKA: dict[int, tuple[int, Why]] = {
    # seed: (by how many cross-rack partitions kassign may exceed Kafka, why).
    # Sticky, a different start (Kafka's hash order): Kafka's answer moves more actives off
    # their previous owners (or puts more standbys where there is no state) than the traffic
    # it saves is worth at the group's costs.
    443152: (4, Why.MOVEMENT),
    443159: (1, Why.MOVEMENT),
    443045: (1, Why.MOVEMENT),
    # balance_subtopology: Kafka puts more of a subtopology on a client than its thread share
    # (443181: 7 of 26 where the share is 5; 443270: 6 of 9 where it is 5), or more stateful
    # replicas (actives and standbys) on a client than its share (443274: 13 where it is 12),
    # than kassign's answer does (``excess``).
    443181: (1, Why.BALANCE),
    443270: (1, Why.BALANCE),
    443274: (1, Why.BALANCE),
}
"""Groups where kassign still pays more traffic than Kafka, the most it may pay, and why: a
ratchet. Any other group above Kafka, any of these getting worse, or a reason that stops
holding, fails. Lower figures are welcome: shrink the entry or drop it.
"""


def _ceil_share(total: int, threads: int, all_threads: int) -> int:
    return -(-total * threads // all_threads)


def excess(view: GroupView, outcome: Outcome) -> int:
    """How far the answer is above the ceiling of each client's thread share: actives per
    (client, subtopology) and stateful replicas (actives and standbys) per client, summed.
    kassign's stages only move counts toward the share, so this never rises through them."""
    all_threads = sum(view.threads.values())
    per_sub = Counter(t.split("_")[0] for ts in outcome.active.values() for t in ts)
    load = sum(len(ts & view.stateful) for ts in outcome.active.values()) + sum(
        len(ts) for ts in outcome.standby.values()
    )
    total = 0
    for pid, threads in view.threads.items():
        mine = Counter(t.split("_")[0] for t in outcome.active.get(pid, ()))
        total += sum(
            max(0, n - _ceil_share(per_sub[s], threads, all_threads)) for s, n in mine.items()
        )
        held = len(outcome.active.get(pid, frozenset()) & view.stateful)
        held += len(outcome.standby.get(pid, ()))
        total += max(0, held - _ceil_share(load, threads, all_threads))
    return total


def objective(request: pb.AssignRequest, view: GroupView, outcome: Outcome) -> int:
    """KIP-925's objective measured from the previous assignment (both sides' common start):
    ``traffic_cost`` x cross-rack partitions (Kafka's built-in measure) + ``non_overlap_cost``
    x (actives not on their previous owner + standbys on a client without the task's state),
    at the group's costs (the assignor's defaults where unset)."""
    configs = request.configs
    traffic, non_overlap = (10, 1) if configs.assignor == "high_availability" else (1, 10)
    traffic = configs.traffic_cost if configs.HasField("traffic_cost") else traffic
    if configs.HasField("non_overlap_cost"):
        non_overlap = configs.non_overlap_cost
    owner, state = previous_state(request)
    moved = sum(len(ts - owner.get(pid, set())) for pid, ts in outcome.active.items())
    moved += sum(len(ts - state.get(pid, set())) for pid, ts in outcome.standby.items())
    return traffic * measure(view, outcome).cost + non_overlap * moved


def explained(r: Result, ours: Outcome) -> tuple[bool, str]:
    """Whether the group's ``ABOVE_KAFKA`` reason holds for ``ours`` against Kafka's answer,
    and the figures: for ``BALANCE`` Kafka's answer is further above the thread shares; for
    ``MOVEMENT`` kassign's KIP-925 objective is no higher than Kafka's."""
    why = ABOVE_KAFKA[r.group.seed][1]
    request = r.group.request
    mine, theirs = objective(request, r.view, ours), objective(request, r.view, r.kafka)
    figures = (
        f"seed {r.group.seed}: {why.name} (objective ours {mine}, Kafka {theirs}; excess ours"
        f" {excess(r.view, ours)}, Kafka {excess(r.view, r.kafka)})"
    )
    if why is Why.BALANCE:
        return excess(r.view, r.kafka) > excess(r.view, ours), figures
    return mine <= theirs, figures


def previous_state(request: pb.AssignRequest) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per process: the tasks it ran as active, and every task it has state for."""
    owner: dict[str, set[str]] = {}
    state: dict[str, set[str]] = {}
    for member in request.members:
        info = member.subscription.info
        ids = [f"{e.task.subtopology}_{e.task.partition}" for e in info.task_offset_sums]
        running = {i for i, e in zip(ids, info.task_offset_sums, strict=True) if e.offset_sum == -2}
        running |= {f"{t.subtopology}_{t.partition}" for t in info.prev_tasks}
        owner.setdefault(info.process_id, set()).update(running)
        held = state.setdefault(info.process_id, set())
        held.update(ids, running, (f"{t.subtopology}_{t.partition}" for t in info.standby_tasks))
    return owner, state


@pytest.mark.slow
def test_cross_rack_cost_not_above_kafkas(compared: tuple[list[Result], Timings]) -> None:
    """Where Kafka spread tags no better, kassign's traffic is no higher than Kafka's, except the
    listed groups (``ABOVE_KAFKA``), which may not get worse."""
    results, timings = compared
    over = [
        r
        for r in results
        if r.costs_more
        and r.ours_measures.cost - r.kafka_measures.cost > ABOVE_KAFKA.get(r.group.seed, (0,))[0]
    ]
    assert not over, (
        f"kassign's cross-rack cost exceeds Kafka's (beyond ABOVE_KAFKA) on {len(over)} of"
        f" {sum(r.cost_compared for r in results)} compared groups"
        f" ({len(results)} in all):\n{table(results, timings)}\n\nworst {SHOWN}:\n"
        + worst(results, SHOWN)
    )


@pytest.mark.slow
def test_each_group_above_kafka_is_explained(results: list[Result]) -> None:
    """Every group still above Kafka has its listed reason true on its two answers: Kafka's is
    further above the thread shares than kassign's, or kassign's KIP-925 objective (from the
    previous assignment) is no higher than Kafka's."""
    wrong = [
        figures
        for r in results
        if r.costs_more and r.group.seed in ABOVE_KAFKA
        for holds, figures in [explained(r, r.ours)]
        if not holds
    ]
    assert not wrong, "\n".join(wrong)


def _rotated(outcome: Outcome) -> Outcome:
    """A doctored answer: every client's actives handed to the next client (process order), so
    nearly every active leaves its previous owner; standbys beside their active are dropped."""
    pids = sorted(outcome.active)
    active = {p: outcome.active[pids[i - 1]] for i, p in enumerate(pids)}
    standby = {p: ts - active.get(p, frozenset()) for p, ts in outcome.standby.items()}
    return Outcome(active, standby, outcome.followup)


@pytest.mark.slow
def test_movement_check_fails_on_a_doctored_answer(results: list[Result]) -> None:
    """The objective check can fail: on every group it excuses, kassign's answer with its
    actives rotated over the clients (more traffic or not, many more moves) is refused."""
    movement = [
        r
        for r in results
        if r.costs_more and ABOVE_KAFKA.get(r.group.seed, (0, Why.BALANCE))[1] is Why.MOVEMENT
    ]
    assert movement, "no group is excused by movement: drop this test with the reason"
    passed = [
        figures for r in movement for holds, figures in [explained(r, _rotated(r.ours))] if holds
    ]
    assert not passed, "the objective check let doctored answers through:\n" + "\n".join(passed)
