"""The command lines users run: ``kassign simulate`` then ``kassign report``, as processes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from kassign.cli.main import build_parser, main
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.group import to_request
from kassign.server.observe.journal import Journal

KASSIGN = [sys.executable, "-c", "import sys; from kassign.cli.main import main; sys.exit(main())"]


def _kassign(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``kassign ARGS`` as a process, its output captured."""
    return subprocess.run(
        [*KASSIGN, *args], check=False, capture_output=True, text=True, timeout=timeout
    )


def test_the_pipeline_commands_are_registered() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["replay", "in.jsonl", "out", "--grid", "g.json", "--master", "local[2]"]
    )
    assert (args.input, args.output, args.grid, args.master) == (
        "in.jsonl",
        "out",
        "g.json",
        "local[2]",
    )
    args = parser.parse_args(["simulate", "out", "--groups", "5", "--seed", "1"])
    assert (args.groups, args.seed, args.rounds, args.events) == (5, 1, 10, None)
    args = parser.parse_args(["report", "out", "site"])
    assert (args.input, args.report_dir) == ("out", "site")


def test_a_bad_grid_file_is_a_usage_error_before_spark_starts(tmp_path: Path) -> None:
    (tmp_path / "grid.json").write_text(json.dumps({"rack_aware_strategies": ["sideways"]}))
    done = _kassign("replay", "in", "out", "--grid", str(tmp_path / "grid.json"))
    assert done.returncode == 2 and "sideways" in done.stderr


@pytest.mark.slow
def test_simulate_replay_and_report_from_the_command_line(spark, tmp_path: Path, caplog) -> None:
    """In-process, on the tests' session (the command leaves a running session alone)."""
    (tmp_path / "events.json").write_text(json.dumps([{"kind": "rack_fail", "rack": 0}]))
    caplog.set_level(logging.INFO, logger="kassign.pipeline")
    code = main(
        [
            "simulate",
            str(tmp_path / "sim"),
            "--groups",
            "4",
            "--seed",
            "3",
            "--rounds",
            "6",
            "--events",
            str(tmp_path / "events.json"),
            "--master",
            "local[2]",
        ]
    )
    assert code == 0 and "simulate finished" in caplog.text
    rows = pd.read_parquet(tmp_path / "sim")
    assert set(rows["event"]) == {"initial", "rack_fail:0"} and rows["group_index"].nunique() == 4
    assert main(["report", str(tmp_path / "sim"), str(tmp_path / "site")]) == 0
    assert 'id="plot-convergence"' in (tmp_path / "site" / "index.html").read_text()
    journal = Journal(tmp_path / "journal")
    journal.record(to_request(random_group(GroupSpec(), seed=3, index=0)))
    journal.close()
    assert main(["replay", str(tmp_path / "journal"), str(tmp_path / "replayed")]) == 0
    assert list(pd.read_parquet(tmp_path / "replayed")["config"]) == ["request"]
    assert spark.sparkContext._jsc is not None  # the shared session is still up


@pytest.mark.slow
def test_replay_of_a_journal_folder_prints_no_java_stack_trace(tmp_path: Path) -> None:
    """As a process, so the JVM's own start-up output is on the captured stderr (about 20 s)."""
    journal = Journal(tmp_path / "journal")
    journal.record(to_request(random_group(GroupSpec(), seed=5, index=0)))
    journal.close()
    out = str(tmp_path / "out")
    done = _kassign("replay", str(tmp_path / "journal"), out, "--master", "local[1]", timeout=240)
    assert done.returncode == 0, done.stderr
    assert "replay: 1 rows, 0 errors" in done.stderr
    traces = [line for line in done.stderr.splitlines() if line.startswith("\tat ")]
    assert traces == [] and "Exception" not in done.stderr, done.stderr
    assert "log4j profile" not in done.stderr and "NativeCodeLoader" not in done.stderr


def test_replay_of_a_folder_without_journal_files_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for missing in (tmp_path / "empty", tmp_path / "absent"):
        done = _kassign("replay", str(missing), str(tmp_path / "out"))
        assert done.returncode == 2 and str(missing) in done.stderr, done.stderr
