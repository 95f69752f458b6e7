"""Explanations (issue 17): the rule given for a replica is the rule that placed it.

One test per rule: a small group where the rule fires, then the same group changed so that
another rule fires, and the explanation follows. Then properties over random groups: asking
for an explanation never changes the assignment, and it explains every replica, each once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams import api
from kassign.assignor.streams.api import register, run, run_explained
from kassign.assignor.streams.explain import Explanation, ReplicaKind
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    application_state,
)
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.assignor.streams.trace import Rule

from tests.assignor import rack_cases
from tests.assignor.strategies import app_states, uuid_for

END = 1_000_000
T0, T1 = TaskId(0, 0), TaskId(0, 1)


def client(
    i: int,
    lags: Mapping[TaskId, int] | None = None,
    *,
    active: Iterable[TaskId] = (),
    tags: Mapping[str, str] | None = None,
) -> KafkaStreamsState:
    """Client ``i`` (one thread) with explicit lags; a lag reported means state for the task."""
    lags = dict(lags or {})
    standby = frozenset(t for t, lag in lags.items() if lag != LATEST_OFFSET) - frozenset(active)
    return KafkaStreamsState(
        uuid_for(i),
        (ConsumerState(f"c{i}"),),
        frozenset(active),
        standby,
        lags,
        client_tags=dict(tags or {}),
    )


def group(
    clients: Iterable[KafkaStreamsState], *tasks: TaskId, **configs: object
) -> ApplicationState:
    infos = [TaskInfo(t, True, ("store",), (), END) for t in tasks]
    return application_state(infos, clients, AssignmentConfigs(**configs))  # type: ignore[arg-type]


def explained(state: ApplicationState) -> Explanation:
    assignment, _, explanation = run_explained(state)
    assert assignment == run(state)[0], "explaining must not change the assignment"
    return explanation


def rule_of(
    explanation: Explanation, task: TaskId, i: int, kind: ReplicaKind = ReplicaKind.ACTIVE
) -> Rule | None:
    """The rule of ``task``'s replica of ``kind`` on client ``i``; ``None`` if there is none."""
    story = next(s for s in explanation.tasks if s.task == task)
    found = [p for p in story.placements if p.process_id == uuid_for(i) and p.kind is kind]
    return found[0].rule if found else None


def reason_of(explanation: Explanation, task: TaskId, i: int) -> str:
    story = next(s for s in explanation.tasks if s.task == task)
    return next(p.reason for p in story.placements if p.process_id == uuid_for(i))


# Two clients, two stateful tasks: Kafka's balanced guess puts T0 on client 1, T1 on client 2.


def test_balance_where_the_balanced_client_is_caught_up_else_caught_up_elsewhere() -> None:
    both_fresh = explained(group([client(1, {T0: 0}), client(2, {T1: 0})], T0, T1))
    assert rule_of(both_fresh, T0, 1) is Rule.BALANCE
    # client 1 has lost its state: the movement gives T0 to client 2, which has it
    lagging = explained(group([client(1), client(2, {T0: 0, T1: 0})], T0, T1))
    assert rule_of(lagging, T0, 2) is Rule.CAUGHT_UP
    assert reason_of(lagging, T0, 2).startswith("caught-up: lag 0 within")


def test_caught_up_to_a_client_with_state_sticky_to_the_one_that_ran_it() -> None:
    with_standby = explained(group([client(1), client(2, {T0: 0, T1: 0})], T0, T1))
    assert rule_of(with_standby, T0, 2) is Rule.CAUGHT_UP
    ran_it = client(2, {T0: LATEST_OFFSET, T1: 0}, active=[T0])
    sticky = explained(group([client(1), ran_it], T0, T1))
    assert rule_of(sticky, T0, 2) is Rule.STICKY
    assert reason_of(sticky, T0, 2).startswith("sticky: ran it before")


def test_sticky_assignor_keeps_previous_owner_else_balances() -> None:
    owned = group([client(1), client(2, active=[T0])], T0, T1, assignor="sticky")
    assert rule_of(explained(owned), T0, 2) is Rule.STICKY
    fresh = group([client(1), client(2)], T0, T1, assignor="sticky")
    explanation = explained(fresh)
    assert {rule_of(explanation, T0, i) for i in (1, 2)} - {None} == {Rule.BALANCE}


def test_warm_up_on_the_lagging_balanced_client_else_it_runs_the_task() -> None:
    lagging = explained(group([client(1), client(2, {T0: 0, T1: 0})], T0, T1))
    assert rule_of(lagging, T0, 1, ReplicaKind.WARM_UP) is Rule.WARM_UP
    assert lagging.moves.warmups == 1
    caught_up = explained(group([client(1, {T0: 5_000}), client(2, {T0: 0, T1: 0})], T0, T1))
    assert rule_of(caught_up, T0, 1, ReplicaKind.WARM_UP) is None
    assert rule_of(caught_up, T0, 1) is Rule.BALANCE
    no_budget = group([client(1), client(2, {T0: 0, T1: 0})], T0, T1, max_warmup_replicas=0)
    assert rule_of(explained(no_budget), T0, 1, ReplicaKind.WARM_UP) is None


def test_fallback_when_no_client_is_caught_up_else_caught_up() -> None:
    nobody = explained(group([client(1), client(2, {T0: 500_000, T1: 0})], T0, T1))
    assert rule_of(nobody, T0, 2) is Rule.FALLBACK
    assert "no client caught up" in reason_of(nobody, T0, 2)
    within = explained(group([client(1), client(2, {T0: 9_000, T1: 0})], T0, T1))
    assert rule_of(within, T0, 2) is Rule.CAUGHT_UP


def _zones(
    two: Mapping[str, str], *, keys: tuple[str, ...] = ("zone", "cluster")
) -> ApplicationState:
    """T0 runs on client 1 (zone a, cluster 1); client 3 is in zone a, cluster 2."""
    clients = [
        client(1, {T0: LATEST_OFFSET}, active=[T0], tags={"zone": "a", "cluster": "1"}),
        client(2, tags=two),
        client(3, tags={"zone": "a", "cluster": "2"}),
    ]
    return group(clients, T0, num_standby_replicas=1, rack_aware_assignment_tags=keys)


def test_tag_spread_where_every_key_differs_else_fallback_least_loaded() -> None:
    spread = explained(_zones({"zone": "b", "cluster": "2"}))
    assert rule_of(spread, T0, 2, ReplicaKind.STANDBY) is Rule.TAG_SPREAD
    assert "(cluster=2, zone=b) differ" in reason_of(spread, T0, 2)
    # no client differs from client 1 on both keys: tags cannot place the standby
    same_cluster = explained(_zones({"zone": "b", "cluster": "1"}))
    assert rule_of(same_cluster, T0, 2, ReplicaKind.STANDBY) is Rule.FALLBACK
    assert "tags could not spread" in reason_of(same_cluster, T0, 2)
    untagged = explained(_zones({"zone": "b", "cluster": "1"}, keys=()))
    assert rule_of(untagged, T0, 2, ReplicaKind.STANDBY) is Rule.BALANCE


def _racked(strategy: RackAwareStrategy) -> ApplicationState:
    """Two stateless tasks read in the other client's rack than least-loaded order gives them."""
    tasks = [
        rack_cases.task_info(T0, [["rack-b"]], stateful=False),
        rack_cases.task_info(T1, [["rack-a"]], stateful=False),
    ]
    clients = [rack_cases.client(0, "rack-a"), rack_cases.client(1, "rack-b")]
    return rack_cases.state_of(tasks, clients, strategy)


def test_rack_cost_moves_a_task_to_its_rack_else_balance() -> None:
    racked = explained(_racked(RackAwareStrategy.MIN_TRAFFIC))
    b = rack_cases.pid(1)
    (placement,) = next(s for s in racked.tasks if s.task == T0).placements
    assert (placement.process_id, placement.rule) == (b, Rule.RACK_COST)
    assert "rack rack-b" in placement.reason
    plain = explained(_racked(RackAwareStrategy.NONE))
    (placement,) = next(s for s in plain.tasks if s.task == T0).placements
    assert placement.rule is Rule.BALANCE


class _Everything:
    """A plug-in that records no rules: every task active on the first client."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        first, *rest = application_state.clients
        return task_assignment(
            [KafkaStreamsAssignment.of(first, application_state.tasks)]
            + [KafkaStreamsAssignment.of(pid) for pid in rest]
        )


def test_a_plug_in_gets_unspecified_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "_registered", {})  # registered for this test only
    register("everything-first", _Everything)
    state = group([client(1), client(2)], T0, T1, assignor="everything-first")
    explanation = explained(state)
    assert rule_of(explanation, T0, 1) is Rule.UNSPECIFIED
    assert "records no rules" in reason_of(explanation, T0, 1)


def test_clients_carry_tags_rack_and_threads() -> None:
    explanation = explained(_zones({"zone": "b", "cluster": "2"}))
    assert [(c.tags, c.threads) for c in explanation.clients] == [
        ((("cluster", "1"), ("zone", "a")), 1),
        ((("cluster", "2"), ("zone", "b")), 1),
        ((("cluster", "2"), ("zone", "a")), 1),
    ]


def test_lags_list_clients_with_state_and_where_placed() -> None:
    explanation = explained(group([client(1), client(2, {T0: 0, T1: 0})], T0, T1))
    story = next(s for s in explanation.tasks if s.task == T0)
    assert [(lag.process_id, lag.lag, lag.caught_up) for lag in story.lags] == [
        (uuid_for(1), END, False),
        (uuid_for(2), 0, True),
    ]
    assert story.previous_standby == (uuid_for(2),)


def _check_explains_every_replica(state: ApplicationState) -> None:
    assignment, _, explanation = run_explained(state)
    assert assignment == run(state)[0]
    listed = sorted(
        (s.task, p.process_id, p.kind is ReplicaKind.ACTIVE)
        for s in explanation.tasks
        for p in s.placements
    )
    held = sorted(
        (t, a.process_id, kind)
        for a in assignment.assignments
        for kind, tasks in ((True, a.active), (False, a.standby))
        for t in tasks
    )
    assert listed == held
    rules = {p.rule for s in explanation.tasks for p in s.placements}
    assert Rule.UNSPECIFIED not in rules
    warmups = [p for s in explanation.tasks for p in s.placements if p.kind is ReplicaKind.WARM_UP]
    assert len(warmups) == assignment.diagnostics.warmups == explanation.moves.warmups
    moved = sum(p.moved for s in explanation.tasks for p in s.placements)
    moves = explanation.moves
    assert (
        moved == moves.stateful_actives + moves.stateless_actives + moves.standbys + moves.warmups
    )
    _check_sources_held_the_task(state, explanation)


_TAKEN_FROM = re.compile(r"taken from (\S+)")


def _check_sources_held_the_task(state: ApplicationState, explanation: Explanation) -> None:
    """Issue 27: "taken from ...003 (lag 1000000)" named a client that never ran the task (an
    earlier step of the assignment had put it there). A named source held it before."""
    for story in explanation.tasks:
        for placement in story.placements:
            for named in _TAKEN_FROM.findall(placement.reason):
                source = next(c for pid, c in state.clients.items() if str(pid) == named)
                assert (
                    story.task in source.previous_active_tasks
                    or story.task in source.previous_standby_tasks
                    or story.task in source.task_lags
                ), (story.task, placement.reason)


ASSIGNORS = st.sampled_from(["high_availability", "sticky"])


@settings(max_examples=60, deadline=None)
@given(app_states(), ASSIGNORS)
def test_every_replica_explained_once_with_a_rule(state: ApplicationState, name: str) -> None:
    _check_explains_every_replica(replace(state, configs=replace(state.configs, assignor=name)))


@settings(max_examples=30, deadline=None)
@given(rack_cases.small_groups(tags=True), ASSIGNORS)
def test_rack_aware_groups_explained_alike(small: rack_cases.Small, name: str) -> None:
    state = small.state
    _check_explains_every_replica(replace(state, configs=replace(state.configs, assignor=name)))


def test_sticky_assignor_standbys_sticky_in_its_own_pass_tag_spread_with_tags() -> None:
    """The sticky assignor's legacy pass keeps a standby where its state is; with KIP-708 tags
    the shared tag-aware placement decides instead, and the rule says so."""

    def sticky_group(keys: tuple[str, ...]) -> ApplicationState:
        clients = [
            client(1, {T0: LATEST_OFFSET}, active=[T0], tags={"zone": "a"}),
            client(2, tags={"zone": "a"}),
            client(3, {T0: 10}, tags={"zone": "b"}),
        ]
        return group(
            clients, T0, assignor="sticky", num_standby_replicas=1, rack_aware_assignment_tags=keys
        )

    legacy = explained(sticky_group(()))
    assert rule_of(legacy, T0, 3, ReplicaKind.STANDBY) is Rule.STICKY
    assert reason_of(legacy, T0, 3).startswith("sticky: had its state (lag 10)")
    tagged = explained(sticky_group(("zone",)))
    assert rule_of(tagged, T0, 3, ReplicaKind.STANDBY) is Rule.TAG_SPREAD
