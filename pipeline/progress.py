"""Progress of long work on stderr: one rewritten line on a terminal, a line every so often otherwise.

Why our own and not Spark's console bar: Spark's bar writes carriage returns into logs and CI
output, shows one stage at a time with no elapsed time, and says nothing about the Python work
before the JVM starts (generating a benchmark's input). ``Progress`` reports any counted work;
``spark_progress`` feeds it the tasks of a Spark job's running stages from the status tracker.
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

__all__ = ["EVERY_SECONDS", "Progress", "progress_line", "spark_progress"]

EVERY_SECONDS = 15.0
"""Seconds between lines when stderr is not a terminal: a 10-minute run prints about 40."""

_TERMINAL_SECONDS = 0.2
"""Seconds between redraws on a terminal: smooth enough, cheap enough."""


def progress_line(label: str, done: int, total: int, elapsed: float, unit: str) -> str:
    """``label: done/total unit (pct%), elapsed`` with a rough time left once there is a rate."""
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
    ) -> None:
        self.label, self.unit = label, unit
        self._stream = stream if stream is not None else sys.stderr
        self._terminal = self._stream.isatty()
        self.interval = _TERMINAL_SECONDS if self._terminal else every
        self._clock = clock
        self._started = clock()
        self._last_shown = self._started
        self._state = (0, 0)
        self._shown = False

    def update(self, done: int, total: int) -> None:
        """Record ``done`` of ``total``; printed if a line is due."""
        self._state = (done, total)
        if self._clock() - self._last_shown >= self.interval:
            self._show()

    def close(self) -> None:
        """End the terminal line; a final line only if one was shown (short work stays quiet)."""
        if self._shown:
            self._show()
            if self._terminal:
                self._stream.write("\n")
                self._stream.flush()

    def _show(self) -> None:
        now = self._clock()
        line = progress_line(self.label, *self._state, now - self._started, self.unit)
        if self._terminal:
            self._stream.write(f"\r{line}\x1b[K")
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
        self._last_shown, self._shown = now, True


@contextlib.contextmanager
def spark_progress(
    spark: SparkSession, label: str, *, every: float = EVERY_SECONDS, stream: TextIO | None = None
) -> Iterator[Progress]:
    """Report the tasks of the stages ``spark`` runs while the block runs (a polling thread).

    Counts are over every stage seen running so far: a job's later stages add their tasks to the
    total when they start. A last poll after the block brings finished stages to their end count.
    """
    progress = Progress(label, unit="tasks", stream=stream, every=every)
    tracker = spark.sparkContext.statusTracker()
    seen: set[int] = set()
    stop = threading.Event()

    def poll() -> None:
        seen.update(tracker.getActiveStageIds())
        stages = [s for s in map(tracker.getStageInfo, sorted(seen)) if s is not None]
        if stages:
            progress.update(
                sum(s.numCompletedTasks for s in stages), sum(s.numTasks for s in stages)
            )

    def run() -> None:
        while not stop.wait(min(1.0, progress.interval)):
            poll()

    thread = threading.Thread(target=run, name=f"progress-{label}", daemon=True)
    thread.start()
    try:
        yield progress
    finally:
        stop.set()
        thread.join()
        poll()
        progress.close()
