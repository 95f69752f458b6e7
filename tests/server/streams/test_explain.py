"""The explanation on the wire (issue 17): only when asked, and never changing the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.assignor.placement import Rule
from kassign.assignor.streams.moves import move_counts
from kassign.server.placement import RULES
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.json"))


def _request(path: Path, *, explain: bool) -> pb.AssignRequest:
    request = json_format.Parse(path.read_text(encoding="utf-8"), pb.AssignRequest())
    request.now_ms = request.now_ms or 1_000
    request.explain = explain
    return request


def test_rules_map_one_to_one_onto_the_contract() -> None:
    assert set(RULES) == set(Rule)
    assert sorted(RULES.values()) == sorted(pb.PlacementRule.values())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_explaining_adds_fields_and_changes_nothing_else(path: Path) -> None:
    plain = assign_request(_request(path, explain=False)).response
    assert not plain.HasField("explanation") and not plain.report.HasField("moves")
    outcome = assign_request(_request(path, explain=True))
    explained = pb.AssignResponse()
    explained.CopyFrom(outcome.response)
    assert explained.HasField("explanation") and explained.report.HasField("moves")
    explained.ClearField("explanation")
    explained.report.ClearField("moves")
    assert canonical_bytes(explained) == canonical_bytes(plain)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_report_moves_and_the_placements_agree(path: Path) -> None:
    outcome = assign_request(_request(path, explain=True))
    response = outcome.response
    moves = move_counts(outcome.decoded.state, outcome.assignment)
    report = response.report.moves
    assert (report.stateful_actives, report.stateless_actives, report.standbys, report.warmups) == (
        moves.stateful_actives,
        moves.stateless_actives,
        moves.standbys,
        moves.warmups,
    )
    assert report.stateful_actives + report.stateless_actives == response.report.active_tasks_moved
    placements = [p for t in response.explanation.tasks for p in t.placements]
    assert sum(p.moved for p in placements) == (
        report.stateful_actives + report.stateless_actives + report.standbys + report.warmups
    )
    assert all(p.rule != pb.PLACEMENT_RULE_UNSPECIFIED and p.reason for p in placements)
    listed = sorted((p.process_id, p.kind == pb.REPLICA_KIND_ACTIVE) for p in placements)
    held = sorted(
        (c.process_id, active)
        for c in response.clients
        for active, tasks in ((True, c.active_tasks), (False, c.standby_tasks))
        for _ in tasks
    )
    assert listed == held
    assert [c.process_id for c in response.explanation.clients] == [
        c.process_id for c in response.clients
    ]


def test_the_snapshot_corpus_answers_alike_with_explain() -> None:
    """Every snapshot request (tests/snapshots: errors, rack-aware, sticky, tags, ...) gives
    the same answer with ``explain`` set, once its two added fields are cleared."""
    from tests.snapshots.corpus import cases
    from tests.snapshots.record import respond

    checked = 0
    for name, request in cases():
        plain = respond(request)
        request.explain = True
        told = respond(request)
        if isinstance(plain, str) or isinstance(told, str):
            assert told == plain, name
            continue
        told_message, plain_message = told.message(), plain.message()
        assert told_message.HasField("explanation"), name
        told_message.ClearField("explanation")
        told_message.report.ClearField("moves")
        assert canonical_bytes(told_message) == canonical_bytes(plain_message), name
        checked += 1
    assert checked > 100
