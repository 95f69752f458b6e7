"""TaskAssignmentUtils mirrors: identity and default standby assignment, rack forwarding."""

from __future__ import annotations

import pytest
from kassign.assignor.streams.building_blocks import default_standby_assignment, identity_assignment
from kassign.assignor.streams.model import RackAwareStrategy
from kassign.assignor.streams.result import Diagnostics, KafkaStreamsAssignment, task_assignment
from kassign.assignor.streams.validate import AssignmentError, validate

from tests.assignor.builders import client, pid, state, tasks

T00, T01, T02, T10 = tasks("0_0 0_1 0_2 1_0")


def test_identity_keeps_what_every_client_had() -> None:
    app = state(
        [client(1, active=[T00, T10], standby=[T01]), client(2, active=[T01]), client(3)],
        [T00, T01],
        [T10],
    )
    result = identity_assignment(app)
    assert [(a.process_id, a.active, a.standby) for a in result.assignments] == [
        (pid(1), (T00, T10), (T01,)),
        (pid(2), (T01,), ()),
        (pid(3), (), ()),
    ]
    assert not result.followup_scheduled
    assert validate(app, result) is AssignmentError.NONE


def test_identity_keeps_tasks_the_topology_lost_and_validation_says_so() -> None:
    app = state([client(1, active=[T00, T02])], [T00])
    assert validate(app, identity_assignment(app)) is AssignmentError.UNKNOWN_TASK_ID


def test_identity_of_a_new_group_leaves_actives_unassigned() -> None:
    app = state([client(1), client(2)], [T00])
    assert validate(app, identity_assignment(app)) is AssignmentError.ACTIVE_TASK_UNASSIGNED


def test_default_standbys_replace_existing_and_keep_the_rest() -> None:
    app = state([client(1), client(2), client(3)], [T00, T01], [T10], num_standby_replicas=1)
    given = task_assignment(
        [
            KafkaStreamsAssignment.of(pid(1), [T00, T10], [T01], followup_rebalance_deadline_ms=99),
            KafkaStreamsAssignment.of(pid(2), [T01]),
            KafkaStreamsAssignment.of(pid(3)),
        ],
        Diagnostics(warmups=1, notes=("kept",)),
    )
    result = default_standby_assignment(app, given)
    by = result.by_process()
    assert [a.active for a in result.assignments] == [a.active for a in given.assignments]
    assert by[pid(1)].followup_rebalance_deadline_ms == 99
    assert by[pid(3)].standby == (T00, T01)  # the empty client is least loaded for both
    assert result.diagnostics.warmups == 1 and result.diagnostics.notes == ("kept",)
    assert validate(app, result) is AssignmentError.NONE


def test_default_standbys_follow_tags_when_configured() -> None:
    clients = [
        client(1, tags={"zone": "a"}),
        client(2, tags={"zone": "a"}),
        client(3, threads=4, tags={"zone": "b"}),
    ]
    app = state(clients, [T00], num_standby_replicas=1, rack_aware_assignment_tags=("zone",))
    given = task_assignment(
        [
            KafkaStreamsAssignment.of(pid(1), [T00]),
            KafkaStreamsAssignment.of(pid(2)),
            KafkaStreamsAssignment.of(pid(3), [T01, T02]),
        ]
    )
    assert default_standby_assignment(app, given).by_process()[pid(3)].standby == (T00,)


def test_rack_forwarding_reaches_the_rack_module() -> None:
    rack = pytest.importorskip("kassign.assignor.streams.rack.optimise")
    from kassign.assignor.streams import building_blocks as utils

    app = state(
        [client(1, active=[T00]), client(2)], [T00], rack_aware_strategy=RackAwareStrategy.NONE
    )
    active = {pid(1): frozenset({T00}), pid(2): frozenset()}
    ours = utils.optimize_active_tasks(app, [T00], active, traffic_cost=1, non_overlap_cost=10)
    theirs = rack.optimize_active_tasks(app, [T00], active, traffic_cost=1, non_overlap_cost=10)
    assert ours == theirs
    assert ours[0] == active  # strategy none: unchanged
