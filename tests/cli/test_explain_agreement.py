"""One word per meaning, units stated, the same numbers in explain's text, its diff and its page.

Issue 27: "moves" and "cross-rack" meant replicas in one place and partitions in another, before
or after in a third. Here one scenario (four clients scale out to six, then a client fails) is
told three ways and every figure that appears in more than one of them must agree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.v1 import assignment_pb2 as pb

from tests.cli.explain_scenario import scale_out

KINDS = ("stateful active", "stateless active", "standby", "warm-up")


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["explain", *argv]) == 0
    return capsys.readouterr().out


def _write(path: Path, request: pb.AssignRequest) -> str:
    path.write_text(json_format.MessageToJson(request))
    return str(path)


def _summary(out: str) -> dict[str, int]:
    """A summary's replicas moved by kind, and its replicas cross-rack."""
    moved = re.search(
        r"^replicas moved \(against the previous assignment\): (.*)$", out, re.MULTILINE
    )
    cross = re.search(r"^replicas cross-rack \(.*\): (\d+)$", out, re.MULTILINE)
    assert moved and cross, out
    figures = {kind: int(n) for n, kind in re.findall(r"(\d+) ([a-z -]+?)(?:,|$)", moved[1])}
    assert set(figures) == set(KINDS)
    return figures | {"cross-rack": int(cross[1])}


def test_text_diff_and_page_say_the_same_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = _write(tmp_path / "first.json", scale_out())
    second = _write(tmp_path / "second.json", scale_out(leaving=(3,)))
    page = tmp_path / "page.html"
    before, after = _summary(_explain(capsys, first)), _summary(_explain(capsys, second))
    diff = _explain(capsys, first, "--diff", second, "--html", str(page))

    moved = re.search(r"^replicas moved \(each answer against .*\): (.*)$", diff, re.MULTILINE)
    assert moved is not None
    for kind in KINDS:
        pair = re.search(rf"{kind} (\d+) -> (\d+)", moved[1])
        assert pair and (int(pair[1]), int(pair[2])) == (before[kind], after[kind]), kind
    cross = re.search(r"^replicas cross-rack: (\d+) -> (\d+)$", diff, re.MULTILINE)
    assert cross and (int(cross[1]), int(cross[2])) == (before["cross-rack"], after["cross-rack"])
    changed = re.search(
        r"^replicas changed \(in the second answer, not in the first\): (\d+)", diff, re.MULTILINE
    )
    assert changed and int(changed[1]) > 0

    counts = {
        name: int(value)
        for name, value in re.findall(
            r'<div data-count="([^"]+)"><dt>[^<]+</dt><dd>(\d+)</dd></div>', page.read_text()
        )
    }
    assert {k: counts[f"replicas moved: {k}"] for k in KINDS} == {k: after[k] for k in KINDS}
    assert counts["replicas cross-rack"] == after["cross-rack"] > 0
    assert counts["replicas changed"] == int(changed[1])
