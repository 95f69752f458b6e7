"""The ``kassign`` command line: assign locally, call a real server, tables, errors, extension."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli import table as cli_table
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.server.requests import group
from tests.server.running import ROOT, in_process

EXAMPLE = ROOT / "examples" / "small-three-clients.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _expected(path: Path) -> pb.AssignResponse:
    return assign_request(cli.read_request(str(path))).response


def test_assign_prints_the_response_as_protobuf_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "assign", str(EXAMPLE), "--no-timings")
    assert code == 0
    response = json_format.Parse(out, pb.AssignResponse())
    assert response.report.total_seconds == 0.0
    assert canonical_bytes(response) == canonical_bytes(_expected(EXAMPLE))


def test_assign_reads_stdin_for_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(EXAMPLE.read_text()))
    code, out, _ = _run(capsys, "assign", "-")
    assert code == 0
    response = json_format.Parse(out, pb.AssignResponse())
    assert response.report.total_seconds > 0
    assert canonical_bytes(response) == canonical_bytes(_expected(EXAMPLE))


def test_table_lists_each_client_with_rack_and_tasks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "request.json"
    path.write_text(json_format.MessageToJson(group()))
    code, out, _ = _run(capsys, "assign", str(path), "--format", "table")
    assert code == 0
    expected = _expected(path)
    for client in expected.clients:
        row = next(line for line in out.splitlines() if line.startswith(client.process_id))
        assert client.rack_id in row
        assert f" {len(client.active_tasks)} " in row
    assert "active" in out and "standby" in out and "assignor high_availability" in out


def test_table_shows_warm_ups_as_warm_ups_not_standbys(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: KIP-441 warm-ups were listed (and counted) as standbys. The answer carries
    them among the standbys, as Kafka's wire does; the explanation tells them apart."""
    code, out, _ = _run(capsys, "assign", str(ROOT / "examples" / "kip441-scale-out.json"),
                        "--format", "table")  # fmt: skip
    assert code == 0
    assert out.splitlines()[0].split()[4:6] == ["STANDBY", "WARM-UP"]
    newcomer = next(
        line
        for line in out.splitlines()
        if line.startswith("0" * 8 + "-") and line.split()[0].endswith("03")
    )
    assert newcomer.split()[3:6] == ["0", "0", "2"]  # active, standby, warm-up
    assert "    warm-up  0_1 0_2" in out


def test_table_shows_follow_up_deadlines_as_utc_times(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17: the table printed raw epoch milliseconds."""
    example = ROOT / "examples" / "kip441-scale-out.json"
    code, out, _ = _run(capsys, "assign", str(example), "--format", "table")
    assert code == 0
    deadlines = {c.followup_rebalance_deadline_ms for c in _expected(example).clients} - {0}
    assert deadlines, "the example plans a follow-up"
    for ms in deadlines:
        assert str(ms) not in out and cli_table.deadline_text(ms) in out
    assert cli_table.deadline_text(1_700_000_600_000) == "2023-11-14 22:23:20.000Z"
    assert cli_table.deadline_text(2**63 - 1) == "never"
    assert cli_table.deadline_text(0) == "-"


def test_invalid_request_exits_2_and_names_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = group()
    request.configs.num_standby_replicas = -1
    path = tmp_path / "bad.json"
    path.write_text(json_format.MessageToJson(request))
    code, out, err = _run(capsys, "assign", str(path))
    assert code == 2 and out == ""
    assert "configs.num_standby_replicas" in err and "Traceback" not in err


def test_not_a_request_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"members": 3}')
    code, _, err = _run(capsys, "assign", str(path))
    assert code == 2 and "members" in err


def test_kafkas_strategy_spellings_are_accepted_and_bad_ones_list_the_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 17: ``min_traffic`` (Kafka's value of rack.aware.assignment.strategy) was refused,
    and the error did not say what would do."""
    example = ROOT / "examples" / "rack-aware-min-traffic.json"
    text = example.read_text()
    assert '"RACK_AWARE_STRATEGY_MIN_TRAFFIC"' in text
    for spelling in ("min_traffic", "MIN_TRAFFIC"):
        path = tmp_path / f"{spelling}.json"
        path.write_text(text.replace('"RACK_AWARE_STRATEGY_MIN_TRAFFIC"', f'"{spelling}"'))
        assert cli.read_request(str(path)) == cli.read_request(str(example))
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace('"RACK_AWARE_STRATEGY_MIN_TRAFFIC"', '"least_traffic"'))
    code, _, err = _run(capsys, "assign", str(bad))
    assert code == 2
    assert "RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY" in err and "min_traffic" in err


def test_missing_file_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "assign", str(tmp_path / "nope.json"))
    assert code == 1 and "nope.json" in err


def test_call_gives_what_assign_gives(capsys: pytest.CaptureFixture[str]) -> None:
    with in_process() as (_, target):
        code, out, _ = _run(capsys, "call", "--target", target, str(EXAMPLE))
    assert code == 0
    assert canonical_bytes(json_format.Parse(out, pb.AssignResponse())) == canonical_bytes(
        _expected(EXAMPLE)
    )


def test_call_reports_invalid_requests_and_unreachable_servers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "empty.json"
    path.write_text("{}")
    with in_process() as (_, target):
        code, _, err = _run(capsys, "call", "--target", target, str(path))
    assert code == 2 and "members" in err
    code, _, err = _run(capsys, "call", "--target", target, "--timeout", "2", str(EXAMPLE))
    assert code == 1 and ("nothing accepts connections at" in err or "DEADLINE_EXCEEDED" in err)
    assert "TLS" not in err  # nothing answered: no guess about TLS


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """A subcommand registered the way other modules register theirs."""
    p = subparsers.add_parser("hello-test")
    p.add_argument("--name", default="world")
    p.set_defaults(func=lambda args: print(f"hello {args.name}") or 0)


def test_modules_listed_in_command_modules_add_subcommands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, __name__))
    code, out, _ = _run(capsys, "hello-test", "--name", "kassign")
    assert (code, out) == (0, "hello kassign\n")


def test_python_dash_m_server_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kassign.cli", "assign", str(EXAMPLE), "--format", "table"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "00000000-0000-0000-0000-000000000001" in result.stdout
