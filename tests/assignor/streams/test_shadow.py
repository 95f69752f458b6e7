"""Shadow mode's Streams figures (issue 26) on small groups where the right numbers are obvious,
and a property: an answer compared with itself is the same, its figures equal on both sides and
equal to what the report counts for it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from kassign.assignor.streams.api import run
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    application_state,
)
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.assignor.streams.shadow import compare, figures

from tests.assignor.builders import client, pid
from tests.assignor.strategies import app_states

T0, T1, T2 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)


def _task(task: TaskId, racks: str) -> TaskInfo:
    """A stateful task reading ``orders``-p (replicas on ``racks``), writing its changelog
    (replicas everywhere but rack c: never counted, only sources are)."""
    source = TaskTopicPartition("orders", task.partition, True, False, frozenset(racks))
    changelog = TaskTopicPartition("store-changelog", task.partition, False, True, frozenset("a"))
    return TaskInfo(task, True, ("store",), (source, changelog), 100)


def _group(**configs: object) -> ApplicationState:
    """Three clients in racks a, b, c (zone tags z1, z1, z2); client n owned task n before and
    had state for task n+1 too."""
    tasks = [_task(T0, "a"), _task(T1, "b"), _task(T2, "ab")]
    zones = ["z1", "z1", "z2"]
    clients = [
        client(
            n,
            active=[TaskId(0, n)],
            standby=[TaskId(0, (n + 1) % 3)],
            rack="abc"[n],
            tags={"zone": zones[n]},
        )
        for n in range(3)
    ]
    return application_state(tasks, clients, AssignmentConfigs(**configs))  # type: ignore[arg-type]


def _answer(*per_client: tuple[list[TaskId], list[TaskId]]) -> TaskAssignment:
    return task_assignment(
        KafkaStreamsAssignment.of(pid(n), active, standby)
        for n, (active, standby) in enumerate(per_client)
    )


def test_the_previous_assignment_kept_moves_nothing() -> None:
    state = _group(num_standby_replicas=1)
    kept = _answer(([T0], [T1]), ([T1], [T2]), ([T2], [T0]))
    got = figures(state, kept)
    assert (got.moved, got.standbys_moved) == (0, 0)  # each standby where its state was
    # T2 (replicas in a, b) on client 2 (rack c); its changelog's replica is only in a, and
    # T0's and T1's changelogs are read from c and b too: changelogs are not counted
    assert got.cross_rack_partitions == 1
    assert (got.max_per_member, got.min_per_member) == (2, 2)
    assert got.max_load is None  # no loads in the request
    assert got.standbys_sharing_rack_or_tag == 0  # every client its own rack


def test_a_rotated_assignment_moves_every_active_and_reads_across_racks() -> None:
    state = _group(num_standby_replicas=1)
    rotated = _answer(([T1], []), ([T2], []), ([T0], []))
    got = figures(state, rotated)
    assert got.moved == 3
    # T1 (replica in b) on rack a: across; T2 (a, b) on b: local; T0 (a) on c: across
    assert got.cross_rack_partitions == 2
    assert (got.max_per_member, got.min_per_member) == (1, 1)


def test_balance_counts_every_client_even_one_given_nothing() -> None:
    state = _group()
    piled = _answer(([T0, T1, T2], []), ([], []))  # client 2 not even listed
    got = figures(state, piled)
    assert (got.max_per_member, got.min_per_member) == (3, 0)


def test_a_standby_shares_its_actives_rack_or_every_tag() -> None:
    same_rack = application_state(
        [_task(T0, "a")],
        [client(0, rack="a"), client(1, rack="a")],
        AssignmentConfigs(num_standby_replicas=1),
    )
    assert figures(same_rack, _answer(([T0], []), ([], [T0]))).standbys_sharing_rack_or_tag == 1
    by_rack = _group(num_standby_replicas=1)
    answer = _answer(([T0], []), ([], [T0]), ([], []))  # active on 0 (a, z1), standby on 1 (b, z1)
    assert figures(by_rack, answer).standbys_sharing_rack_or_tag == 0  # racks a and b
    tagged = _group(num_standby_replicas=1, rack_aware_assignment_tags=("zone",))
    assert figures(tagged, answer).standbys_sharing_rack_or_tag == 1  # both in zone z1
    apart = _answer(([T0], []), ([], []), ([], [T0]))
    assert figures(tagged, apart).standbys_sharing_rack_or_tag == 0  # z1 against z2


def test_comparison_counts_the_clients_whose_tasks_differ() -> None:
    state = _group()
    one = _answer(([T0], []), ([T1], []), ([T2], []))
    other = _answer(([T0], []), ([T2], []), ([T1], []))
    compared = compare(state, one, other, "HighAvailabilityTaskAssignor")
    assert (compared.same, compared.differing_members) == (False, 2)
    assert compared.kafka_assignor == "HighAvailabilityTaskAssignor"
    assert compared.kafka == figures(state, one) and compared.kassign == figures(state, other)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(app_states())
def test_an_answer_against_itself_is_the_same_with_the_reports_counts(
    state: ApplicationState,
) -> None:
    assignment, _ = run(state)
    compared = compare(state, assignment, assignment, "kafka")
    assert compared.same and compared.differing_members == 0
    assert compared.kafka == compared.kassign
    assert (compared.kafka.moved, compared.kafka.standbys_moved) == moved_counts(state, assignment)
    held = [len(a.active) + len(a.standby) for a in assignment.assignments]
    held += [0] * (len(state.clients) - len(assignment.assignments))
    assert (compared.kafka.max_per_member, compared.kafka.min_per_member) == (max(held), min(held))
