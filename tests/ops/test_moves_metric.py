"""``kassign_moves_total{kind}``: the report's moves split, counted whether or not a call asks
for an explanation (issue 17: one definition per kind, used everywhere)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.assignor.streams.moved import MOVE_KINDS
from kassign.server.observe.prometheus import AssignmentMetrics
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from prometheus_client import CollectorRegistry

from tests.ops.serving import DATA

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _moves(registry: CollectorRegistry) -> tuple[float, ...]:
    return tuple(
        registry.get_sample_value("kassign_moves_total", {"kind": kind}) or 0.0
        for kind in MOVE_KINDS
    )


@pytest.mark.parametrize(
    "path", [DATA / "group_200.json", EXAMPLES / "kip441-scale-out.json"], ids=lambda p: p.stem
)
def test_moves_counted_alike_with_and_without_explain(path: Path) -> None:
    request = json_format.Parse(path.read_text(encoding="utf-8"), pb.AssignRequest())
    request.now_ms = 1_000
    asked, plain = CollectorRegistry(), CollectorRegistry()
    request.explain = True
    response = assign_request(request, observer=AssignmentMetrics(asked)).response
    request.explain = False
    assign_request(request, observer=AssignmentMetrics(plain))
    m = response.report.moves
    expected = (m.stateful_actives, m.stateless_actives, m.standbys, m.warmups)
    assert _moves(asked) == _moves(plain) == tuple(float(v) for v in expected)
    assert m.stateful_actives + m.stateless_actives == response.report.active_tasks_moved
