"""Per-assignment measures on small hand-made groups whose answers can be counted by eye."""

from __future__ import annotations

from uuid import UUID

from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    application_state,
)
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import (
    Diagnostics,
    KafkaStreamsAssignment,
    MemberAssignment,
    RackStatus,
    task_assignment,
)
from kassign.pipeline.measures import (
    MEASURE_COLUMNS,
    cross_rack_partitions,
    failed,
    measure,
    tag_violations,
    thread_balance,
)

P1, P2, P3 = (UUID(int=i) for i in (1, 2, 3))
T0, T1, T2 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)


def _task(task: TaskId, racks: set[str]) -> TaskInfo:
    source = TaskTopicPartition("in", task.partition, True, False, frozenset(racks))
    changelog = TaskTopicPartition("log", task.partition, False, True, frozenset(racks))
    return TaskInfo(id=task, stateful=True, topic_partitions=(source, changelog))


def _client(
    pid: UUID, rack: str, zone: str, active: set[TaskId], standby: set[TaskId]
) -> KafkaStreamsState:
    lags = {t: LATEST_OFFSET if t in active else 0 if t in standby else 100 for t in (T0, T1, T2)}
    return KafkaStreamsState(
        process_id=pid,
        consumers=(ConsumerState(f"{pid}-a"), ConsumerState(f"{pid}-b")),
        previous_active_tasks=frozenset(active),
        previous_standby_tasks=frozenset(standby),
        task_lags=lags,
        rack_id=rack,
        client_tags={"zone": zone},
    )


def _state(tags: tuple[str, ...] = ()) -> ApplicationState:
    tasks = [_task(T0, {"r1"}), _task(T1, {"r2"}), _task(T2, {"r1", "r2"})]
    clients = [
        _client(P1, "r1", "z1", {T0}, {T1}),
        _client(P2, "r2", "z1", {T1}, set()),
        _client(P3, "r2", "z2", set(), set()),
    ]
    configs = AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_tags=tags)
    return application_state(tasks, clients, configs, now_ms=5)


def _assignment():  # type: ignore[no-untyped-def]
    # T0 stays on P1; T1 moves P2 -> P1; T2 (no previous owner) lands on P3.
    # Standbys: T0 on P2 (fresh), T1 on P2 (it had T1 as active, so it has state), T2 on P1 (fresh).
    return task_assignment(
        [
            KafkaStreamsAssignment.of(P1, active=[T0, T1], standby=[T2]),
            KafkaStreamsAssignment.of(P2, standby=[T0, T1], followup_rebalance_deadline_ms=99),
            KafkaStreamsAssignment.of(P3, active=[T2]),
        ],
        Diagnostics(
            warmups=1,
            rack_status=RackStatus.OPTIMAL,
            cross_rack_cost_before=30,
            cross_rack_cost_after=12,
        ),
    )


def test_a_task_moves_only_when_it_leaves_a_previous_owner() -> None:
    assert moved_counts(_state(), _assignment())[0] == 1  # T1; T2 had no owner


def test_standby_moves_count_clients_without_local_state() -> None:
    assert moved_counts(_state(), _assignment())[1] == 2  # T0 on P2, T2 on P1


def test_cross_rack_partitions_count_partitions_without_a_replica_in_the_clients_rack() -> None:
    # P1 (r1) runs T0 (r1: 0) and T1 (r2: 2 partitions); P3 (r2) runs T2 (r1+r2: 0)
    assert cross_rack_partitions(_state(), _assignment()) == 2


def test_thread_balance_is_the_spread_of_tasks_per_thread() -> None:
    members = [
        MemberAssignment("a", P1, active=(T0, T1)),
        MemberAssignment("b", P1, standby=(T2,)),
        MemberAssignment("c", P2),
    ]
    assert thread_balance(members) == 2
    assert thread_balance([]) == 0


def test_tag_violations_count_only_avoidable_shared_values() -> None:
    state = _state(tags=("zone",))
    # zone has two values. T0: P1(z1)+P2(z1) -> one short; T1: P1(z1)+P2(z1) -> one short;
    # T2: P3(z2)+P1(z1) -> spans both.
    assert tag_violations(state, _assignment()) == 2
    assert tag_violations(_state(), _assignment()) == 0  # no tags configured


def test_measure_collects_diagnostics_and_counts() -> None:
    members = [MemberAssignment("a", P1, active=(T0,)), MemberAssignment("b", P1, active=(T1,))]
    result = measure(_state(), _assignment(), members, seconds=0.25)
    assert (result.tasks, result.clients, result.cost_before, result.cost_after) == (3, 3, 30, 12)
    assert (result.warmups, result.followup, result.balance, result.error) == (1, True, 0, "")
    assert result.rack_optimisation == "optimal" and result.assign_seconds == 0.25
    assert tuple(result.row()) == MEASURE_COLUMNS


def test_failed_keeps_the_reason_and_never_leaves_it_empty() -> None:
    assert failed("bad member").error == "bad member"
    assert failed("").error == "error"


def test_moves_split_by_kind_with_named_warm_ups() -> None:
    """Issue 17: the split's definitions (``moved.move_counts``), as the response reports them."""
    stateless = TaskInfo(TaskId(1, 0), stateful=False)
    p1, p2, _ = _state().clients.values()
    p3 = KafkaStreamsState(
        P3, (ConsumerState(f"{P3}-a"),), previous_active_tasks=frozenset({stateless.id})
    )
    state = application_state([*_state().tasks.values(), stateless], [p1, p2, p3], _state().configs)
    on1, on2, on3 = _assignment().assignments
    # the stateless task leaves P3 for P1; P2's standby of T0 is a warm-up, not a standby move
    assignment = task_assignment(
        [KafkaStreamsAssignment.of(P1, [*on1.active, stateless.id], on1.standby), on2, on3],
        Diagnostics(warmups=1, warmup_replicas=((T0, P2),)),
    )
    row = measure(state, assignment, [])
    assert (row.stateful_actives_moved, row.stateless_actives_moved) == (1, 1)
    assert (row.standbys_moved, row.warmups) == (1, 1)  # T2 on P1; the warm-up T0 on P2
    assert row.active_moved == 2 and row.standby_moved == 2  # the older figures
