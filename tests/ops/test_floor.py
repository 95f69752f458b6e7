"""bench/ghz/floor.py: its "touch" handler writes kassign's exact answer, and the bench runs."""

from __future__ import annotations

import re
import subprocess
import sys

from google.protobuf import json_format
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.ops.serving import ROOT, load_script

floor = load_script("bench/ghz/floor.py")


def test_touch_builds_the_answer_kassign_gives_and_reads_the_whole_request() -> None:
    request = json_format.Parse(floor.DATA.read_text(), pb.AssignRequest())
    answer = assign_request(request, clock_ms=lambda: floor.NOW_MS).response
    assert floor._build(pb, floor._plain(answer)) == answer
    before = floor._read_request(request)
    request.members[0].subscription.info.task_offset_sums[0].offset_sum += 5
    request.tasks[-1].topic_partitions[0].partition += 7
    assert floor._read_request(request) == before + 12


def test_a_short_run_prints_the_share_of_the_baseline() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ghz" / "floor.py"),
            "--modes",
            "touch",
            "--seconds",
            "0.5",
            "--warmup",
            "0.2",
            "--repeats",
            "1",
            "--processes",
            "1",
            "--concurrency",
            "2",
            "--connections",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    row = re.search(
        r"^touch\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+)x$",
        result.stdout,
        re.MULTILINE,
    )
    assert row is not None, result.stdout
    health_rps, _, group_rps, _, share, versus_touch = map(float, row.groups())
    assert health_rps > 0 and group_rps > 0
    assert abs(share - 100 * group_rps / health_rps) < 0.1
    assert versus_touch == 1.0  # each mode's CPU per call against touch's
    switching = re.search(
        r"^\s+group_12 per call: system CPU ([\d.]+) ms, ([\d.]+) voluntary context switches$",
        result.stdout,
        re.MULTILINE,
    )
    assert switching is not None, result.stdout
    assert float(switching.group(2)) > 0  # a gRPC call hands work between threads at least once
