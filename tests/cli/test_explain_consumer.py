"""``kassign explain --kind consumer``: a plain consumer group's partitions told like tasks.

Every figure is checked against the answer's report (moved, withheld, cross-rack partitions) over
each of the five assignors on the racked group of tests/server/consumer, and the stories against
the answer's own members and explanation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.explain_consumer import consumer_view, partition_name
from kassign.cli.journal_entry import read_entry
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.observe.journal import request_line
from kassign.v1 import consumer_pb2 as cpb

from tests.server.consumer.requests import racked_group
from tests.server.running import ROOT

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky", "rack-optimal")
SCALE_OUT = ROOT / "examples" / "consumer" / "cooperative-sticky-scale-out.json"


def _answer(request: cpb.ConsumerAssignRequest) -> cpb.ConsumerAssignResponse:
    asked = cpb.ConsumerAssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    return assign_consumer_request(asked).response


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["explain", "--kind", "consumer", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, request: cpb.ConsumerAssignRequest) -> str:
    path = tmp_path / "consumer.json"
    path.write_text(json_format.MessageToJson(request))
    return str(path)


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_summary_figures_are_the_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, assignor: str
) -> None:
    request = racked_group(assignor)
    report = _answer(request).report
    code, out, _ = _run(capsys, _write(tmp_path, request))
    assert code == 0
    found = re.search(r"assigned: (\d+), withheld this round: (\d+)", out)
    moved = re.search(r"partitions moved: (\d+) to another member, (\d+) withheld", out)
    cross = re.search(r"partitions cross-rack: (\d+)", out)
    assert found and moved and cross
    assert int(found[1]) + int(found[2]) == report.partitions
    assert int(found[2]) == report.withheld_partitions
    assert int(moved[1]) + int(moved[2]) == report.moved_partitions
    assert int(cross[1]) == report.cross_rack_partitions_after


def test_each_member_is_told_its_partitions_and_what_it_lost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    request = cli.read_consumer_request(str(SCALE_OUT))
    response = _answer(request)
    view = consumer_view(request, response)
    for member in response.members:
        code, out, _ = _run(capsys, str(SCALE_OUT), "--client", member.member_id)
        assert code == 0
        now = out.split("\nnow:\n")[1]
        shown = re.findall(r"^  assigned (\S+)", now, re.MULTILINE)
        assert shown == [partition_name(tp) for tp in member.partitions]
        lost = re.findall(r"^  lost     (\S+) +withheld", now, re.MULTILINE)
        assert lost == [partition_name(tp) for tp in member.revoked]
        for name in lost:
            assert view.task(name).withheld in now


def test_a_withheld_partition_says_why_and_who_owned_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    request = cli.read_consumer_request(str(SCALE_OUT))
    told = {partition_name(p.partition): p for p in _answer(request).explanation.partitions}
    withheld = [name for name, p in told.items() if not p.member_id]
    assert withheld, "the cooperative scale-out withholds partitions"
    code, out, _ = _run(capsys, str(SCALE_OUT), "--task", withheld[0])
    assert code == 0
    assert f"owned by {', '.join(told[withheld[0]].previous_owners)}" in out
    assert f"withheld this round: {told[withheld[0]].reason}" in out


def test_a_moved_partition_names_its_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = racked_group("range")
    explanation = _answer(request).explanation
    moved = next(
        p
        for p in explanation.partitions
        if p.previous_owners and p.member_id not in p.previous_owners
    )
    code, out, _ = _run(
        capsys, _write(tmp_path, request), "--task", partition_name(moved.partition)
    )
    assert code == 0
    assert f"assigned on {moved.member_id}" in out and "[moved" in out
    assert f"why: {moved.reason}" in out


def test_diff_between_two_assignors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before, after = racked_group("range"), racked_group("rack-optimal")
    a = tmp_path / "a.json"
    a.write_text(json_format.MessageToJson(before))
    b = tmp_path / "b.json"
    b.write_text(json_format.MessageToJson(after))
    code, out, _ = _run(capsys, str(a), "--diff", str(b))
    assert code == 0
    assert "assignor: range -> rack-optimal" in out
    first = {
        partition_name(p.partition): p.member_id for p in _answer(before).explanation.partitions
    }
    second = {
        partition_name(p.partition): p.member_id for p in _answer(after).explanation.partitions
    }
    changed = [n for n in first if first[n] != second[n]]
    assert changed
    for name in changed:
        assert f"{name:<10} assigned {first[name] or '-'} -> {second[name] or '-'}" in out


def test_a_consumer_journal_entry(tmp_path: Path) -> None:
    folder = tmp_path / "journal" / "consumer"
    folder.mkdir(parents=True)
    first, second = racked_group("range"), racked_group("sticky")
    (folder / "requests-3-000001.jsonl").write_bytes(request_line(first) + request_line(second))
    assert read_entry(f"{folder}#-1", cpb.ConsumerAssignRequest).request == second


def test_the_wrong_kind_is_refused_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(ROOT / "examples" / "kip441-scale-out.json"))
    assert (code, out) == (2, "")
    assert "--kind consumer reads a ConsumerAssignRequest" in err
