"""The command lines users run: ``kassign simulate`` then ``kassign report``, as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from server.cli import build_parser

KASSIGN = [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())"]


def test_the_pipeline_commands_are_registered() -> None:
    parser = build_parser()
    args = parser.parse_args(["replay", "in.jsonl", "out", "--grid", "g.json", "--master", "local[2]"])
    assert (args.input, args.output, args.grid, args.master) == ("in.jsonl", "out", "g.json", "local[2]")
    args = parser.parse_args(["simulate", "out", "--groups", "5", "--seed", "1"])
    assert (args.groups, args.seed, args.rounds, args.events) == (5, 1, 10, None)
    args = parser.parse_args(["report", "out", "site"])
    assert (args.input, args.report_dir) == ("out", "site")


def test_a_bad_grid_file_is_a_usage_error_before_spark_starts(tmp_path: Path) -> None:
    (tmp_path / "grid.json").write_text(json.dumps({"rack_aware_strategies": ["sideways"]}))
    done = subprocess.run([*KASSIGN, "replay", "in", "out", "--grid", str(tmp_path / "grid.json")],
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "sideways" in done.stderr


@pytest.mark.slow
def test_simulate_and_report_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "events.json").write_text(json.dumps([{"kind": "rack_fail", "rack": 0}]))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    simulate = subprocess.run(
        [*KASSIGN, "simulate", str(tmp_path / "sim"), "--groups", "4", "--seed", "3", "--rounds", "6",
         "--events", str(tmp_path / "events.json"), "--master", "local[2]"],
        check=False, capture_output=True, text=True, timeout=300, env=env,
    )
    assert simulate.returncode == 0, simulate.stderr[-2000:]
    assert "simulate finished" in simulate.stderr
    rows = pd.read_parquet(tmp_path / "sim")
    assert set(rows["event"]) == {"initial", "rack_fail:0"} and rows["group_index"].nunique() == 4
    report = subprocess.run([*KASSIGN, "report", str(tmp_path / "sim"), str(tmp_path / "site")],
                            check=False, capture_output=True, text=True, timeout=120, env=env)
    assert report.returncode == 0, report.stderr[-2000:]
    assert (tmp_path / "site" / "index.html").exists() and (tmp_path / "site" / "convergence.png").exists()
