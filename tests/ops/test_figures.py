"""bench/ghz/figures.py: a tiny run with both generators, load.py and ghz, prints what it says.

Only the shape and the arithmetic are checked (every case from each generator, every call OK,
the shares computed from the printed requests/s), never a timed figure.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.ops.serving import ROOT

GHZ = ROOT / ".venv" / "bin" / "ghz"
CASES = ("health", "group_12", "group_200")


@pytest.mark.skipif(not GHZ.exists(), reason="make ghz installs .venv/bin/ghz")
def test_a_short_run_prints_ghz_beside_load_py_against_the_same_baseline() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ghz" / "figures.py"),
            *["--workers", "1", "--seconds", "0.3", "--warmup", "0.1", "--repeats", "1"],
            *["--processes", "1", "--concurrency", "2", "--connections", "2"],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    progress = re.findall(
        r"workers=1 (\w+)\s+(load|ghz)\s+[\d.]+ req/s \{'OK': \d+\}$", result.stderr, re.MULTILINE
    )
    assert sorted(progress) == sorted((c, g) for c in CASES for g in ("load", "ghz")), result.stderr
    rps: dict[tuple[str, str], float] = {}
    p50: dict[tuple[str, str], float] = {}
    for case, generator, median, latency in re.findall(
        r"^\s+1 (\w+)\s+(load|ghz)\s+([\d.]+) \[[\d.-]+\]\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+$",
        result.stdout,
        re.MULTILINE,
    ):
        rps[case, generator], p50[case, generator] = float(median), float(latency)
    assert set(rps) == {(c, g) for c in CASES for g in ("load", "ghz")}, result.stdout
    assert all(v > 0 for v in rps.values()) and all(v > 0 for v in p50.values())
    for case in ("group_12", "group_200"):
        line = re.search(
            rf"^workers=1: {case}: load ([\d.]+)% .*; ghz ([\d.]+)% ", result.stdout, re.MULTILINE
        )
        assert line is not None, result.stdout
        for generator, share in zip(("load", "ghz"), map(float, line.groups()), strict=True):
            expected = 100 * rps[case, generator] / rps["health", generator]
            assert share == pytest.approx(expected, abs=0.1 + expected / 100)
