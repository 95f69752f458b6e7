"""Long work shows progress: plain lines every so often off a terminal, one redrawn line on it."""

from __future__ import annotations

import io
import itertools
import time

import pytest
from kassign.pipeline import progress as progress_module
from kassign.pipeline.progress import (
    SILENT_SECONDS,
    Progress,
    command_progress,
    progress_line,
    spark_progress,
)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_line_names_the_count_the_share_and_the_time_left() -> None:
    assert progress_line("replay", 3, 12, 90.0, "tasks") == (
        "replay: 3/12 tasks (25%), 1m30s elapsed, about 4m30s left"
    )
    assert progress_line("input", 0, 0, 5.0, "groups") == "input: 0/0 groups, 5s elapsed"
    assert progress_line("input", 8, 8, 61.0, "groups") == "input: 8/8 groups (100%), 1m01s elapsed"


def test_off_a_terminal_a_line_is_written_once_per_interval() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("input", unit="groups", stream=out, every=10.0, clock=clock)
    for done in range(1, 31):
        clock.now += 1.0
        progress.update(done, 30)
    progress.close()
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "input: 10/30 groups (33%)",
        "input: 20/30 groups (66%)",
        "input: 30/30 groups (100%)",
        "input: 30/30 groups (100%)",
    ]
    assert "\r" not in out.getvalue()


def test_short_work_stays_quiet() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("input", stream=out, every=10.0, clock=clock)
    clock.now += 3.0
    progress.update(5, 5)
    progress.close()
    assert out.getvalue() == ""


def test_on_a_terminal_one_line_is_redrawn_and_ended() -> None:
    clock, out = _Clock(), _Terminal()
    progress = Progress("input", unit="groups", stream=out, every=10.0, clock=clock)
    for done in range(1, 4):
        clock.now += 1.0
        progress.update(done, 3)
    progress.close()
    text = out.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    assert "input: 3/3 groups (100%)" in text.rsplit("\r", 1)[1]


def test_a_commands_clock_counts_from_the_commands_start() -> None:
    """Issue 27: the clock started once Spark was up, so a job said "3s elapsed" 20 s in."""
    clock, out = _Clock(), io.StringIO()
    progress = Progress("replay", stream=out, every=1.0, clock=clock, started=clock.now - 20.0)
    clock.now += 1.0
    progress.update(1, 4)
    assert out.getvalue().startswith("replay: 1/4  (25%), 21s elapsed")


def test_a_command_is_never_silent_for_more_than_three_seconds() -> None:
    """Nothing counted yet (Spark starting): a line saying so still comes every few seconds."""
    clock, out = _Clock(), io.StringIO()
    progress = Progress("replay", stream=out, clock=clock, doing="starting Spark")
    written: list[float] = [clock.now]
    for _ in range(100):  # 50 s in the ticking thread's steps
        clock.now += progress_module._TICK_SECONDS
        before = out.getvalue()
        progress.tick()
        if out.getvalue() != before:
            written.append(clock.now)
    gaps = [b - a for a, b in itertools.pairwise(written)]
    assert len(written) > 10 and max(gaps) <= SILENT_SECONDS
    assert out.getvalue().splitlines()[0] == "replay: starting Spark, 2s elapsed"


def test_a_command_says_what_it_does_then_follows_what_it_counts() -> None:
    out = io.StringIO()
    counts = iter([None, (1, 3), (3, 3)])
    with command_progress(
        "simulate", started=time.monotonic(), doing="starting Spark", every=0.05, stream=out
    ) as progress:
        time.sleep(0.6)
        progress.follow(lambda: next(counts, (3, 3)), doing="waiting for Spark tasks")
        time.sleep(0.6)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("simulate: starting Spark, 0s elapsed"), lines
    assert lines[-1].startswith("simulate: 3/3 Spark tasks (100%)"), lines


@pytest.mark.slow
def test_a_spark_job_reports_its_tasks(spark) -> None:
    """Eight tasks of a quarter second each on local[2]: about 1 s, lines every 0.2 s (the
    first ones may say the job is waiting for Spark, before its stage is seen)."""
    out = io.StringIO()
    with spark_progress(spark, "job", every=0.2, stream=out):
        spark.sparkContext.parallelize(range(8), 8).map(lambda x: time.sleep(0.25) or x).count()
    lines = out.getvalue().splitlines()
    counted = [line for line in lines if "Spark tasks" in line]
    waiting = lines[: len(lines) - len(counted)]
    assert all(line.startswith("job: waiting for Spark, ") for line in waiting), lines
    counts = [line.split(" ")[1] for line in counted]
    done = [int(count.split("/")[0]) for count in counts]
    assert counts and {count.split("/")[1] for count in counts} == {"8"}, out.getvalue()
    assert done == sorted(done) and done[-1] == 8, out.getvalue()
    assert all("/8 Spark tasks" in line for line in counted)
