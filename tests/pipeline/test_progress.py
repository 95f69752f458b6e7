"""Long work shows progress: plain lines every so often off a terminal, one redrawn line on it."""

from __future__ import annotations

import io
import time

import pytest
from kassign.pipeline.progress import Progress, progress_line, spark_progress


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


@pytest.mark.slow
def test_a_spark_job_reports_its_tasks(spark) -> None:
    """Eight tasks of a quarter second each on local[2]: about 1 s, lines every 0.2 s."""
    out = io.StringIO()
    with spark_progress(spark, "job", every=0.2, stream=out):
        spark.sparkContext.parallelize(range(8), 8).map(lambda x: time.sleep(0.25) or x).count()
    counts = [line.split(" ")[1] for line in out.getvalue().splitlines()]
    done = [int(count.split("/")[0]) for count in counts]
    assert counts and {count.split("/")[1] for count in counts} == {"8"}, out.getvalue()
    assert done == sorted(done) and done[-1] == 8, out.getvalue()
