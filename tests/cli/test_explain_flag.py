"""``-v`` explains the answer (issue 17); the Streams table splits the moves by kind."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.v1 import assignment_pb2 as pb

from tests.server.running import ROOT

SCALE_OUT = ROOT / "examples" / "kip441-scale-out.json"
NINE = ROOT / "examples" / "kip708-nine-nodes.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def test_json_carries_the_explanation_only_with_v(capsys: pytest.CaptureFixture[str]) -> None:
    plain = json_format.Parse(_run(capsys, "assign", str(SCALE_OUT)), pb.AssignResponse())
    assert not plain.HasField("explanation")
    for argv in (("-v", "assign", str(SCALE_OUT)), ("assign", "-v", str(SCALE_OUT))):
        told = json_format.Parse(_run(capsys, *argv), pb.AssignResponse())
        assert told.HasField("explanation") and told.report.HasField("moves")
        assert len(told.explanation.tasks) == told.report.tasks


def test_table_splits_moves_and_v_adds_each_tasks_story(capsys: pytest.CaptureFixture[str]) -> None:
    table = _run(capsys, "assign", str(SCALE_OUT), "--format", "table")
    assert "stateless active" in table and "2 warm-up" in table
    assert "reasons (" not in table
    told = _run(capsys, "assign", "-v", str(SCALE_OUT), "--format", "table")
    assert told.startswith(table.split("\n", 1)[0])
    story = told[told.index("reasons (") :]
    assert "warm-up  00000000-0000-0000-0000-000000000003  warm-up: lag 1000000" in story
    assert "sticky: ran it before" in story


def test_table_lists_client_tags_for_kip708(capsys: pytest.CaptureFixture[str]) -> None:
    table = _run(capsys, "assign", str(NINE), "--format", "table")
    assert "    tags     cluster=K8s_Cluster1 zone=eu-central-1a" in table


def test_consumer_table_with_v_lists_each_partitions_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = str(ROOT / "examples" / "consumer" / "rack-aware-range.json")
    plain = _run(capsys, "assign", "--kind", "consumer", example, "--format", "table")
    assert "reasons (" not in plain
    told = _run(capsys, "assign", "-v", "--kind", "consumer", example, "--format", "table")
    assert told.startswith(plain.split("\n", 1)[0])
    assert "rack cost: KIP-881, rack eu-west-1a holds a replica" in told
