"""``kassign assign --kind consumer`` and ``kassign call --kind consumer``: JSON and tables, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.server.consumer.encode import canonical_bytes
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb

from tests.server.consumer.requests import null_pointer_group, racked_group
from tests.server.running import ROOT, in_process

EXAMPLE = ROOT / "examples" / "consumer" / "cooperative-sticky-scale-out.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _expected(path: Path) -> cpb.ConsumerAssignResponse:
    return assign_consumer_request(cli.read_consumer_request(str(path))).response


def _write(tmp_path: Path, request: cpb.ConsumerAssignRequest) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json_format.MessageToJson(request))
    return path


def test_assign_prints_the_consumer_response_as_protobuf_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(capsys, "assign", "--kind", "consumer", str(EXAMPLE), "--no-timings")
    assert code == 0
    response = json_format.Parse(out, cpb.ConsumerAssignResponse())
    assert response.report.total_seconds == 0.0
    assert canonical_bytes(response) == canonical_bytes(_expected(EXAMPLE))


def test_table_lists_each_member_its_partitions_and_revocations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, racked_group("cooperative-sticky"))
    code, out, _ = _run(capsys, "assign", "--kind", "consumer", str(path), "--format", "table")
    assert code == 0
    expected = _expected(path)
    lines = out.splitlines()
    for m in expected.members:
        row = next(line for line in lines if line.startswith(f"{m.member_id} "))
        assert row.split()[1:] == [str(len(m.partitions)), str(len(m.revoked))]
        for tp in m.revoked:
            assert f"{tp.topic}-{tp.partition}" in out
    r = expected.report
    assert f"assignor cooperative-sticky: {r.partitions} partitions on 7 members" in out
    assert f"revoked {r.revoked_partitions}, withheld {r.withheld_partitions}" in out
    assert "Kafka rack-aware: some partition has no replica in some rack" in out


def test_invalid_consumer_request_exits_2_naming_field_and_member(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = racked_group("range")
    request.members[3].subscription.owned_partitions.add(topic="orders", partition=99)
    code, out, err = _run(capsys, "assign", "--kind", "consumer", str(_write(tmp_path, request)))
    assert code == 2 and out == ""
    assert "subscription.owned_partitions" in err and "'m3'" in err and "Traceback" not in err


def test_a_group_kafka_cannot_assign_exits_1_with_failed_precondition(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, null_pointer_group())
    code, out, err = _run(capsys, "assign", "--kind", "consumer", str(path))
    assert code == 1 and out == ""
    assert "FAILED_PRECONDITION" in err and "KAFKA_NULL_POINTER" in err


def test_a_consumer_request_is_not_a_streams_one(capsys: pytest.CaptureFixture[str]) -> None:
    """The default kind stays streams: a consumer file read as an AssignRequest is refused."""
    code, _, err = _run(capsys, "assign", str(EXAMPLE))
    assert code == 2 and "assignor" in err


def test_call_gives_what_assign_gives_and_reports_refusals(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = racked_group("range")
    bad.assignor = "fastest"
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json_format.MessageToJson(bad))
    with in_process() as (_, target):
        code, out, _ = _run(capsys, "call", "--kind", "consumer", "--target", target, str(EXAMPLE))
        assert code == 0
        got = json_format.Parse(out, cpb.ConsumerAssignResponse())
        assert canonical_bytes(got) == canonical_bytes(_expected(EXAMPLE))
        code, table, _ = _run(
            capsys,
            "call",
            "--kind",
            "consumer",
            "--target",
            target,
            str(EXAMPLE),
            "--format",
            "table",
        )
        assert code == 0 and table.startswith("MEMBER")
        code, _, err = _run(capsys, "call", "--kind", "consumer", "--target", target, str(bad_path))
        assert code == 2 and "assignor" in err and "fastest" in err
        path = _write(tmp_path, null_pointer_group())
        code, _, err = _run(capsys, "call", "--kind", "consumer", "--target", target, str(path))
        assert code == 1 and "FAILED_PRECONDITION" in err
