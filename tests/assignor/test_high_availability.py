"""The HA assignor: scenarios porting what Kafka's HighAvailabilityTaskAssignorTest asserts, and
hypothesis properties over random groups (tests/assignor/strategies.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from uuid import UUID

import pytest
from hypothesis import given, settings
from kassign.assignor.streams.api import get_assignor
from kassign.assignor.streams.high_availability import (
    HighAvailabilityTaskAssignor,
    assign_high_availability,
)
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    application_state,
)
from kassign.assignor.streams.result import TaskAssignment
from kassign.assignor.streams.validate import AssignmentError, validate

from tests.assignor.strategies import app_states, shuffled, uuid_for

FAR_BEHIND = 10**12
T = {f"{s}_{p}": TaskId(s, p) for s in range(3) for p in range(3)}
NINE = tuple(T.values())


def client(
    i: int,
    lags: Mapping[TaskId, int] | None = None,
    *,
    threads: int = 1,
    active: Iterable[TaskId] = (),
    standby: Iterable[TaskId] = (),
    tags: Mapping[str, str] | None = None,
) -> KafkaStreamsState:
    """Client ``i`` with explicit lags (a plain dict, as a hand-built state would have)."""
    consumers = tuple(ConsumerState(f"c{i}-{n}") for n in range(threads))
    return KafkaStreamsState(
        uuid_for(i),
        consumers,
        frozenset(active),
        frozenset(standby),
        dict(lags or {}),
        client_tags=dict(tags or {}),
    )


def group(
    clients: Iterable[KafkaStreamsState],
    stateful: Iterable[TaskId] = (),
    stateless: Iterable[TaskId] = (),
    /,
    *,
    end_offset: int = 1_000_000,
    **configs: object,
) -> ApplicationState:
    infos = [TaskInfo(t, True, ("store",), (), end_offset) for t in stateful]
    infos += [TaskInfo(t, False) for t in stateless]
    return application_state(infos, clients, AssignmentConfigs(**configs), now_ms=1_000)  # type: ignore[arg-type]


def actives(result: TaskAssignment, i: int) -> set[TaskId]:
    return set(result.by_process()[uuid_for(i)].active)


def standbys(result: TaskAssignment, i: int) -> set[TaskId]:
    return set(result.by_process()[uuid_for(i)].standby)


def held(result: TaskAssignment, i: int) -> int:
    return len(actives(result, i)) + len(standbys(result, i))


def followup(result: TaskAssignment) -> bool:
    deadlines = {a.followup_rebalance_deadline_ms for a in result.assignments}
    assert len(deadlines) == 1, "a follow-up is asked of every client or of none"
    return deadlines.pop() is not None


# --- scenarios -----------------------------------------------------------------------------------


def test_registered_as_the_default_assignor() -> None:
    assert isinstance(get_assignor("high_availability"), HighAvailabilityTaskAssignor)
    assert AssignmentConfigs().assignor == "high_availability"


def test_runs_through_the_api_and_validates() -> None:
    from kassign.assignor.streams.api import run

    app = group([client(1, {t: LATEST_OFFSET for t in NINE}, active=NINE), client(2)], NINE)
    result, error = run(app)
    assert error is AssignmentError.NONE
    assert result == assign_high_availability(app)


def test_no_clients_no_assignment() -> None:
    assert assign_high_availability(group([], NINE)).assignments == ()


def test_sticky_for_caught_up_clients_while_a_new_one_warms_up() -> None:
    # one client runs everything, one has caught-up standbys, one is new: the newcomer gets
    # only warm-ups (max 2), nothing moves yet, and a probing rebalance is scheduled
    app = group(
        [
            client(1, {t: 0 for t in NINE}, active=NINE),
            client(2, {t: 10 for t in NINE}, standby=NINE),
            client(3, {t: FAR_BEHIND for t in NINE}),
        ],
        NINE,
        acceptable_recovery_lag=11,
        max_warmup_replicas=2,
        num_standby_replicas=1,
    )
    result = assign_high_availability(app)
    assert (held(result, 1), held(result, 2), held(result, 3)) == (9, 9, 2)
    assert actives(result, 3) == set()
    assert result.diagnostics.warmups == 2
    assert followup(result)
    assert {a.followup_rebalance_deadline_ms for a in result.assignments} == {601_000}


def test_unbounded_recovery_lag_balances_at_once() -> None:
    app = group(
        [
            client(1, {t: 0 for t in NINE}, active=NINE),
            client(2, {t: 10 for t in NINE}, standby=NINE),
            client(3, {t: FAR_BEHIND for t in NINE}),
        ],
        NINE,
        acceptable_recovery_lag=2**63 - 1,
        num_standby_replicas=1,
    )
    result = assign_high_availability(app)
    assert [held(result, i) for i in (1, 2, 3)] == [6, 6, 6]
    assert [len(actives(result, i)) for i in (1, 2, 3)] == [3, 3, 3]
    assert not followup(result) and result.diagnostics.warmups == 0


def test_balanced_round_robin_when_everyone_is_caught_up() -> None:
    app = group([client(i) for i in (1, 2, 3)], NINE, end_offset=0)
    result = assign_high_availability(app)
    # Kafka's first guess: task i to client i mod 3 in process order
    assert actives(result, 1) == {T["0_0"], T["1_0"], T["2_0"]}
    assert actives(result, 2) == {T["0_1"], T["1_1"], T["2_1"]}
    assert actives(result, 3) == {T["0_2"], T["1_2"], T["2_2"]}
    assert not followup(result)


def test_balanced_per_thread_not_per_client() -> None:
    app = group([client(1, threads=1), client(2, threads=2)], NINE, end_offset=0)
    result = assign_high_availability(app)
    assert (len(actives(result, 1)), len(actives(result, 2))) == (3, 6)


def test_active_moves_to_the_caught_up_standby() -> None:
    t0, t1 = T["0_0"], T["0_1"]
    app = group(
        [
            client(1, {t0: 500, t1: 500}, active=[t0]),  # lags too much on its own task
            client(2, {t0: 0, t1: 500}, standby=[t0]),
        ],
        [t0, t1],
        acceptable_recovery_lag=100,
    )
    result = assign_high_availability(app)
    assert actives(result, 2) == {t0, t1}  # t1: nobody is caught up, the balanced guess stands
    assert standbys(result, 1) == {t0}  # the balanced client warms up
    assert followup(result)


def test_most_caught_up_client_wins_when_nobody_is_caught_up() -> None:
    t0 = T["0_0"]
    app = group([client(1, {t0: 5_000}), client(2, {t0: 200})], [t0], acceptable_recovery_lag=100)
    result = assign_high_availability(app)
    assert actives(result, 2) == {t0}  # balanced guess said client 1; client 2 lags less
    assert standbys(result, 1) == {t0}  # ...and client 1 warms up
    assert result.diagnostics.warmups == 1 and followup(result)


def test_not_caught_up_client_still_gets_the_task_when_it_lags_least() -> None:
    t0 = T["0_0"]
    app = group([client(1, {t0: 300}), client(2, {t0: 300})], [t0], acceptable_recovery_lag=100)
    result = assign_high_availability(app)
    assert actives(result, 1) == {t0}  # equal lags: no movement, no follow-up
    assert not followup(result)


def test_no_more_warmups_than_allowed() -> None:
    app = group(
        [client(1, {t: LATEST_OFFSET for t in NINE}, active=NINE), client(2), client(3)],
        NINE,
        max_warmup_replicas=1,
    )
    result = assign_high_availability(app)
    assert actives(result, 1) == set(NINE)
    assert held(result, 2) + held(result, 3) == 1
    assert result.diagnostics.warmups == 1 and followup(result)


def test_warmups_even_without_standbys() -> None:
    app = group([client(1, {t: LATEST_OFFSET for t in NINE}, active=NINE), client(2)], NINE)
    result = assign_high_availability(app)
    assert len(standbys(result, 2)) == 2 and actives(result, 2) == set()


def test_warmup_and_standby_never_on_the_same_client() -> None:
    app = group(
        [client(1, {t: LATEST_OFFSET for t in NINE}, active=NINE), client(2), client(3)],
        NINE,
        num_standby_replicas=1,
        max_warmup_replicas=5,
    )
    result = assign_high_availability(app)
    for a in result.assignments:
        assert not set(a.active) & set(a.standby)
        assert len(a.standby) == len(set(a.standby))


def test_standbys_only_for_stateful_tasks() -> None:
    stateless = [TaskId(5, p) for p in range(4)]
    app = group([client(i) for i in (1, 2, 3)], NINE[:3], stateless, num_standby_replicas=2)
    result = assign_high_availability(app)
    placed = Counter(t for a in result.assignments for t in a.standby)
    assert placed == {t: 2 for t in NINE[:3]}


def test_no_standby_without_room() -> None:
    app = group([client(1)], NINE, end_offset=0, num_standby_replicas=1)
    result = assign_high_availability(app)
    assert standbys(result, 1) == set() and actives(result, 1) == set(NINE)


def test_stateless_tasks_even_out_total_load() -> None:
    stateless = [TaskId(5, p) for p in range(4)]
    app = group(
        [client(1, {t: LATEST_OFFSET for t in NINE[:4]}, active=NINE[:4]), client(2)],
        NINE[:4],
        stateless,
        max_warmup_replicas=2,
    )
    result = assign_high_availability(app)
    assert len(actives(result, 1)) == 4 and len(actives(result, 2)) == 4
    assert set(stateless) <= actives(result, 2)


def test_stateless_only_group_spreads_evenly() -> None:
    stateless = [TaskId(0, p) for p in range(6)]
    result = assign_high_availability(group([client(i) for i in (1, 2, 3)], (), stateless))
    assert [len(actives(result, i)) for i in (1, 2, 3)] == [2, 2, 2]
    assert not followup(result)


def test_balanced_and_caught_up_group_is_left_alone() -> None:
    app = group([client(i) for i in (1, 2, 3)], NINE, end_offset=0, num_standby_replicas=1)
    first = assign_high_availability(app)
    again = group(
        [
            client(
                i,
                {t: LATEST_OFFSET if t in actives(first, i) else 0 for t in NINE},
                active=actives(first, i),
                standby=standbys(first, i),
            )
            for i in (1, 2, 3)
        ],
        NINE,
        end_offset=0,
        num_standby_replicas=1,
    )
    second = assign_high_availability(again)
    assert [a.active for a in second.assignments] == [a.active for a in first.assignments]
    assert [a.standby for a in second.assignments] == [a.standby for a in first.assignments]
    assert not followup(second)


def test_new_client_joins_existing_active_and_standby_assignment() -> None:
    # two caught-up clients hold everything (active + standby); a third joins with nothing
    one = {t for i, t in enumerate(NINE) if i % 2 == 0}
    two = set(NINE) - one
    caught = {t: 0 for t in NINE}
    app = group(
        [
            client(1, caught, active=one, standby=two),
            client(2, caught, active=two, standby=one),
            client(3, {t: FAR_BEHIND for t in NINE}),
        ],
        NINE,
        acceptable_recovery_lag=100,
        num_standby_replicas=1,
        max_warmup_replicas=3,
    )
    result = assign_high_availability(app)
    assert actives(result, 3) == set()  # it cannot take over before catching up
    assert 1 <= held(result, 3)
    assert result.diagnostics.warmups <= 3
    assert followup(result)


def test_processes_sort_like_java() -> None:
    # a UUID with its top bit set sorts *first* in Java: it gets the first round-robin task
    negative = UUID("f0000000-0000-0000-0000-000000000000")
    clients = [client(1), KafkaStreamsState(negative, (ConsumerState("n"),))]
    result = assign_high_availability(group(clients, NINE[:2], end_offset=0))
    assert result.by_process()[negative].active == (NINE[0],)


# --- properties ----------------------------------------------------------------------------------


def _check_valid(state: ApplicationState, result: TaskAssignment) -> None:
    assert {a.process_id for a in result.assignments} == set(state.clients)
    owners = Counter(t for a in result.assignments for t in a.active)
    assert owners == {t: 1 for t in state.tasks}, "every task exactly one active"
    for a in result.assignments:
        both = list(a.active) + list(a.standby)
        assert len(both) == len(set(both)), "a client holds a task at most once"
        assert all(state.tasks[t].stateful for t in a.standby), "standbys only for stateful tasks"


@settings(max_examples=60, deadline=None)
@given(app_states())
def test_valid_assignment_for_any_group(state: ApplicationState) -> None:
    result = assign_high_availability(state)
    _check_valid(state, result)
    assert validate(state, result) is AssignmentError.NONE
    assert followup(result) == (
        result.diagnostics.notes != () and "KIP-441" in result.diagnostics.notes[0]
    )
    assert result.diagnostics.warmups <= state.configs.max_warmup_replicas


@settings(max_examples=40, deadline=None)
@given(app_states())
def test_same_input_same_output_in_any_order(state: ApplicationState) -> None:
    result = assign_high_availability(state)
    assert assign_high_availability(state) == result
    assert assign_high_availability(shuffled(state, seed=7)) == result


@settings(max_examples=40, deadline=None)
@given(app_states(max_standbys=0))
def test_stateful_actives_balanced_per_thread_when_lags_allow(state: ApplicationState) -> None:
    caught_up_everywhere = AssignmentConfigs(
        acceptable_recovery_lag=2**63 - 1, num_standby_replicas=state.configs.num_standby_replicas
    )
    relaxed = ApplicationState(state.tasks, state.clients, caught_up_everywhere, state.now_ms)
    result = assign_high_availability(relaxed)
    per_thread = [
        sum(1 for t in a.active if state.tasks[t].stateful)
        / state.clients[a.process_id].num_threads
        for a in result.assignments
    ]
    threads = [state.clients[a.process_id].num_threads for a in result.assignments]
    assert max(per_thread) - min(per_thread) <= 1, "within one task per thread"
    # no task could move to a client and leave the source lighter per thread than the target
    for i, load in enumerate(per_thread):
        for j, other in enumerate(per_thread):
            if i != j:
                assert not (
                    (load * threads[i] - 1) / threads[i] >= (other * threads[j] + 1) / threads[j]
                )
    assert not followup(result)


@pytest.mark.parametrize("threads", [1, 2])
def test_counts_within_one_task_per_thread_for_equal_clients(threads: int) -> None:
    tasks = [TaskId(0, p) for p in range(17)]
    result = assign_high_availability(
        group([client(i, threads=threads) for i in range(1, 6)], tasks, end_offset=0)
    )
    counts = [len(a.active) for a in result.assignments]
    assert max(counts) - min(counts) <= 1


def test_rack_aware_strategy_moves_tasks_next_to_their_partitions() -> None:
    from dataclasses import replace

    from kassign.assignor.streams.model import RackAwareStrategy, TaskTopicPartition

    def task(p: int, rack: str) -> TaskInfo:
        parts = (
            TaskTopicPartition("in", p, True, False, frozenset({rack})),
            TaskTopicPartition("log", p, False, True, frozenset({rack})),
        )
        return TaskInfo(TaskId(0, p), True, ("s",), parts, 0)

    clients = [replace(client(1), rack_id="r1"), replace(client(2), rack_id="r2")]
    configs = AssignmentConfigs(rack_aware_strategy=RackAwareStrategy.MIN_TRAFFIC)
    app = application_state([task(0, "r2"), task(1, "r1")], clients, configs)
    result = assign_high_availability(app)
    # round-robin would put 0_0 on client 1 (rack r1); the optimiser swaps to save traffic
    assert actives(result, 1) == {TaskId(0, 1)} and actives(result, 2) == {TaskId(0, 0)}
    assert result.diagnostics.rack_optimisation == "optimal"
    assert result.diagnostics.cross_rack_cost_after < result.diagnostics.cross_rack_cost_before
    plain = assign_high_availability(replace(app, configs=AssignmentConfigs()))
    assert plain.diagnostics.rack_optimisation == "off"
    assert actives(plain, 1) == {TaskId(0, 0)}


def test_tagged_standbys_balance_only_within_equal_tags() -> None:
    tags = {1: {"zone": "a"}, 2: {"zone": "b"}, 3: {"zone": "b"}}
    app = group(
        [client(i, tags=tags[i]) for i in (1, 2, 3)],
        NINE[:6],
        end_offset=0,
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
    )
    result = assign_high_availability(app)
    zone = {uuid_for(i): tags[i]["zone"] for i in tags}
    for task in NINE[:6]:
        holders = [a.process_id for a in result.assignments if task in a.active + a.standby]
        assert len(holders) == 2 and zone[holders[0]] != zone[holders[1]]


# --- KIP-441's example scenarios -----------------------------------------------------------------

T1, T2, T3, T4 = (TaskId(0, p) for p in range(4))


def _caught_up(active: Iterable[TaskId], standby: Iterable[TaskId]) -> dict[TaskId, int]:
    return {**{t: 0 for t in standby}, **{t: LATEST_OFFSET for t in active}}


def test_kip_scaling_out_warms_up_then_balances() -> None:
    before = {1: ([T1, T3], [T2]), 2: ([T2], [T1, T3])}
    clients = [client(i, _caught_up(a, s), active=a, standby=s) for i, (a, s) in before.items()]
    config = {"num_standby_replicas": 1, "acceptable_recovery_lag": 100}
    first = assign_high_availability(group([*clients, client(3)], [T1, T2, T3], **config))
    assert actives(first, 3) == set() and standbys(first, 3)  # I3 catches up first
    assert actives(first, 1) | actives(first, 2) == {T1, T2, T3}
    assert followup(first)
    # I3 has caught up on its warm-ups and standbys: the next rebalance balances
    after = [
        client(i, _caught_up(actives(first, i), standbys(first, i)), active=actives(first, i))
        for i in (1, 2, 3)
    ]
    second = assign_high_availability(group(after, [T1, T2, T3], **config))
    assert [len(actives(second, i)) for i in (1, 2, 3)] == [1, 1, 1]
    assert [len(standbys(second, i)) for i in (1, 2, 3)] == [1, 1, 1]
    assert not followup(second)


def test_kip_scaling_in_with_standbys_in_sync_keeps_processing() -> None:
    # I1 (active T1, T4) leaves; I2 had standbys of both, so nothing waits for a restore
    survivors = {2: ([T2], [T1, T4]), 3: ([T3], [T2])}
    clients = [client(i, _caught_up(a, s), active=a, standby=s) for i, (a, s) in survivors.items()]
    lags = {i: c.task_lags for i, c in zip((2, 3), clients, strict=True)}
    result = assign_high_availability(
        group(clients, [T1, T2, T3, T4], num_standby_replicas=1, acceptable_recovery_lag=100)
    )
    for i in (2, 3):
        assert all(lags[i].get(t, FAR_BEHIND) <= 0 for t in actives(result, i))
    assert [len(actives(result, i)) for i in (2, 3)] == [2, 2]


# --- more of Kafka's HighAvailabilityTaskAssignorTest scenarios ------------------------------------

Q = [TaskId(0, p) for p in range(4)]  # 0_0 .. 0_3


def ran(
    i: int, active: Iterable[TaskId], stateful: Iterable[TaskId], threads: int = 1
) -> KafkaStreamsState:
    """Client ``i`` caught up (lag 0) on what it ran, far behind on every other stateful task."""
    ran_here = set(active)
    lags = {t: 0 if t in ran_here else FAR_BEHIND for t in stateful}
    return client(i, lags, active=ran_here, threads=threads)


KAFKA = {"acceptable_recovery_lag": 100, "max_warmup_replicas": 2}


def test_threads_one_two_three_get_one_two_three_actives() -> None:
    six = NINE[:6]
    clients = [client(i, {t: 10 for t in six}, threads=i) for i in (1, 2, 3)]
    result = assign_high_availability(group(clients, six, acceptable_recovery_lag=0))
    assert [len(actives(result, i)) for i in (1, 2, 3)] == [1, 2, 3]
    assert not followup(result)


def test_six_and_three_threads_split_nine_tasks_six_three() -> None:
    clients = [
        client(1, {t: 10 for t in NINE}, threads=6),
        client(2, {t: 10 for t in NINE}, threads=3),
    ]
    result = assign_high_availability(group(clients, NINE, acceptable_recovery_lag=0))
    assert (len(actives(result, 1)), len(actives(result, 2))) == (6, 3)
    assert not followup(result)


def test_more_clients_than_tasks() -> None:
    two = NINE[:2]
    clients = [client(i, {t: 10 for t in two}) for i in (1, 2, 3)]
    result = assign_high_availability(group(clients, two, acceptable_recovery_lag=0))
    assert sorted(len(actives(result, i)) for i in (1, 2, 3)) == [0, 1, 1]
    assert not followup(result)


def test_warmups_when_balanced_over_threads_but_not_over_clients() -> None:
    four = [T["0_0"], T["0_1"], T["1_0"], T["1_1"]]
    clients = [
        ran(1, four, four, threads=5),
        ran(2, (), four, threads=5),
        ran(3, (), four, threads=5),
    ]
    result = assign_high_availability(
        group(clients, four, acceptable_recovery_lag=0, max_warmup_replicas=2)
    )
    assert followup(result)
    assert len(standbys(result, 2)) >= 1 and len(standbys(result, 3)) >= 1
    assert actives(result, 1) == set(four)


def test_warmed_up_clients_take_their_share() -> None:
    four = [T["0_0"], T["0_1"], T["1_0"], T["1_1"]]
    warm2 = {t: 0 if t == T["0_1"] else FAR_BEHIND for t in four}
    warm3 = {t: 0 if t == T["1_0"] else FAR_BEHIND for t in four}
    clients = [
        ran(1, four, four, threads=5),
        client(2, warm2, standby=[T["0_1"]], threads=5),
        client(3, warm3, standby=[T["1_0"]], threads=5),
    ]
    result = assign_high_availability(
        group(clients, four, acceptable_recovery_lag=0, max_warmup_replicas=2)
    )
    assert not followup(result)
    assert sorted(len(actives(result, i)) for i in (1, 2, 3)) == [1, 1, 2]


def test_lagging_previous_owner_hands_over_to_the_caught_up_client() -> None:
    t0, t1 = T["0_0"], T["0_1"]
    clients = [client(1, {t0: 500}, active=[t0]), client(2, {t0: 0}, active=[t1])]
    result = assign_high_availability(group(clients, [t0], [t1], **KAFKA))
    assert actives(result, 1) == {t1} and actives(result, 2) == {t0}
    assert standbys(result, 1) == {t0}  # the balanced owner warms up
    assert followup(result)


def test_nobody_caught_up_most_caught_up_runs_it_with_standby_and_warmup() -> None:
    t0 = T["0_0"]
    clients = [client(1, {t0: FAR_BEHIND}), client(2, {t0: 1_000}), client(3, {t0: 500})]
    result = assign_high_availability(group(clients, [t0], num_standby_replicas=1, **KAFKA))
    assert [actives(result, i) for i in (1, 2, 3)] == [set(), set(), {t0}]
    assert [standbys(result, i) for i in (1, 2, 3)] == [{t0}, {t0}, set()]  # warm-up, standby
    assert followup(result)


def test_each_caught_up_owner_keeps_its_task_and_stands_by_for_the_other() -> None:
    two = Q[:2]
    clients = [ran(1, [Q[0]], two), ran(2, [Q[1]], two)]
    result = assign_high_availability(group(clients, two, num_standby_replicas=1, **KAFKA))
    assert (actives(result, 1), actives(result, 2)) == ({Q[0]}, {Q[1]})
    assert (standbys(result, 1), standbys(result, 2)) == ({Q[1]}, {Q[0]})
    assert not followup(result)


def test_warmup_budget_of_one_with_standbys_still_fills_standbys() -> None:
    clients = [ran(1, Q, Q), ran(2, (), Q)]
    configs = {**KAFKA, "max_warmup_replicas": 1}
    result = assign_high_availability(group(clients, Q, num_standby_replicas=1, **configs))
    assert actives(result, 1) == set(Q) and standbys(result, 2) == set(Q)
    assert standbys(result, 1) == set() and actives(result, 2) == set()
    assert followup(result)


def test_lone_client_without_state_runs_everything_without_followup() -> None:
    result = assign_high_availability(
        group([ran(1, (), Q[:2])], Q[:2], num_standby_replicas=1, **KAFKA)
    )
    assert actives(result, 1) == set(Q[:2]) and standbys(result, 1) == set()
    assert not followup(result)


def test_previous_balanced_assignment_is_kept() -> None:
    clients = [ran(1, [Q[0], Q[2]], Q), ran(2, [Q[1], Q[3]], Q)]
    result = assign_high_availability(group(clients, Q, **KAFKA))
    assert (actives(result, 1), actives(result, 2)) == ({Q[0], Q[2]}, {Q[1], Q[3]})
    assert not followup(result)


def test_stateless_tasks_go_where_the_stateful_ones_are_not() -> None:
    stateless = [TaskId(1, p) for p in range(3)]
    clients = [ran(1, Q, Q), ran(2, (), Q)]
    result = assign_high_availability(group(clients, Q, stateless, num_standby_replicas=1, **KAFKA))
    assert actives(result, 1) == set(Q)
    assert actives(result, 2) == set(stateless)
    assert followup(result)


def test_thread_heavy_clients_do_not_starve_the_small_one() -> None:
    nine = [*Q, *(TaskId(1, p) for p in range(4)), TaskId(2, 0)]
    clients = [client(i, {t: 0 for t in nine}, threads=n) for i, n in ((1, 100), (2, 50), (3, 1))]
    result = assign_high_availability(group(clients, nine, **KAFKA))
    assert all(actives(result, i) for i in (1, 2, 3))
    assert not followup(result)
