"""Progress of long work on stderr: one rewritten line on a terminal, a line every so often otherwise.

Why our own and not Spark's console bar: Spark's bar writes carriage returns into logs and CI
output, shows one stage at a time with no elapsed time, and says nothing about the Python work
before the JVM starts (generating a benchmark's input). ``Progress`` reports any counted work;
``spark_progress`` feeds it the tasks of a Spark job's running stages from the status tracker.

A command reports from its own start (``command_progress``): its clock includes the seconds
Spark takes to start, it says what it is doing while there is nothing to count yet (starting
Spark, writing a report), and it is never silent for more than ``SILENT_SECONDS`` (issue 27).
The unit is "Spark tasks": a Streams request has tasks of its own.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "EVERY_SECONDS",
    "SILENT_SECONDS",
    "SPARK_TASKS",
    "Progress",
    "command_progress",
    "progress_line",
    "spark_progress",
    "spark_tasks",
]

SILENT_SECONDS = 3.0
"""The longest a command stays silent (issue 27): a line is due every ``EVERY_SECONDS``, and the
ticking thread looks every ``_TICK_SECONDS``, so one is written at most this long after the last."""

_TICK_SECONDS = 0.5
EVERY_SECONDS = SILENT_SECONDS - _TICK_SECONDS
"""Seconds between lines when stderr is not a terminal."""

_TERMINAL_SECONDS = 0.2
"""Seconds between redraws on a terminal: smooth enough, cheap enough."""

SPARK_TASKS = "Spark tasks"
"""The unit of a Spark job's progress: not the Streams tasks its requests assign."""

Counts = Callable[[], tuple[int, int] | None]
"""Where a ticking ``Progress`` reads (done, total); ``None`` while there is nothing to count."""


def progress_line(
    label: str, done: int, total: int, elapsed: float, unit: str, *, doing: str = ""
) -> str:
    """``label: done/total unit (pct%), elapsed`` with a rough time left once there is a rate;
    ``label: doing, elapsed`` while there is nothing counted and ``doing`` says why."""
    if doing and total == 0:
        return f"{label}: {doing}, {_clock(elapsed)} elapsed"
    line = f"{label}: {done}/{total} {unit}"
    if total > 0:
        line += f" ({100 * done // total}%)"
    line += f", {_clock(elapsed)} elapsed"
    if 0 < done < total:
        line += f", about {_clock(elapsed * (total - done) / done)} left"
    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """Counted work reported to ``stream``: redrawn in place on a terminal, else every ``every``s."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "",
        stream: TextIO | None = None,
        every: float = EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        started: float | None = None,
        doing: str = "",
    ) -> None:
        """``started``: when the work began on ``clock`` (default: now), so a command's clock
        counts from the command's start; ``doing``: what is shown while nothing is counted."""
        self.label, self.unit, self.doing = label, unit, doing
        self._stream = stream if stream is not None else sys.stderr
        self._terminal = self._stream.isatty()
        self.interval = _TERMINAL_SECONDS if self._terminal else every
        self._clock = clock
        self._started = clock() if started is None else started
        self._last_shown = self._started
        self._state = (0, 0)
        self._shown = False
        self._counts: Counts | None = None

    def follow(self, counts: Counts, *, doing: str = "") -> None:
        """From now on ``tick`` reads the counts from ``counts``; ``doing`` until there are any."""
        self._counts, self.doing = counts, doing

    def tick(self) -> None:
        """Read the followed counts, if any, and print a line if one is due."""
        found = self._counts() if self._counts is not None else None
        if found is not None:
            self._state = found
        if self._clock() - self._last_shown >= self.interval:
            self.show()

    def update(self, done: int, total: int) -> None:
        """Record ``done`` of ``total``; printed if a line is due."""
        self._state = (done, total)
        if self._clock() - self._last_shown >= self.interval:
            self.show()

    def close(self) -> None:
        """End the terminal line; a final line only if one was shown (short work stays quiet)."""
        if self._shown:
            self.show()
            if self._terminal:
                self._stream.write("\n")
                self._stream.flush()

    def show(self) -> None:
        """Print the line now."""
        now = self._clock()
        line = progress_line(
            self.label, *self._state, now - self._started, self.unit, doing=self.doing
        )
        if self._terminal:
            self._stream.write(f"\r{line}\x1b[K")
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
        self._last_shown, self._shown = now, True


@contextlib.contextmanager
def command_progress(
    label: str,
    *,
    started: float,
    doing: str,
    every: float = EVERY_SECONDS,
    stream: TextIO | None = None,
    at_once: bool = True,
) -> Iterator[Progress]:
    """A command's progress from ``started`` (``time.monotonic``), ticked by a thread while the
    block runs: ``doing`` until the block ``follow``s something to count (a Spark job's tasks).
    Its first line comes ``at_once``: the Python start-up before it already took a second or two."""
    progress = Progress(
        label, unit=SPARK_TASKS, stream=stream, every=every, started=started, doing=doing
    )
    if at_once:
        progress.show()
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(min(_TICK_SECONDS, progress.interval)):
            progress.tick()

    thread = threading.Thread(target=run, name=f"progress-{label}", daemon=True)
    thread.start()
    try:
        yield progress
    finally:
        stop.set()
        thread.join()
        progress.tick()
        progress.close()


def spark_tasks(spark: SparkSession) -> Counts:
    """The tasks of the stages ``spark`` runs, counted over every stage seen running so far: a
    job's later stages add their tasks to the total when they start."""
    tracker = spark.sparkContext.statusTracker()
    seen: set[int] = set()

    def counts() -> tuple[int, int] | None:
        seen.update(tracker.getActiveStageIds())
        stages = [s for s in map(tracker.getStageInfo, sorted(seen)) if s is not None]
        if not stages:
            return None
        return sum(s.numCompletedTasks for s in stages), sum(s.numTasks for s in stages)

    return counts


@contextlib.contextmanager
def spark_progress(
    spark: SparkSession, label: str, *, every: float = EVERY_SECONDS, stream: TextIO | None = None
) -> Iterator[Progress]:
    """Report the tasks of the stages ``spark`` runs while the block runs (a polling thread);
    a last poll after the block brings finished stages to their end count."""
    with command_progress(
        label,
        started=time.monotonic(),
        doing="waiting for Spark",
        every=every,
        stream=stream,
        at_once=False,
    ) as progress:
        progress.follow(spark_tasks(spark), doing="waiting for Spark")
        yield progress
