"""glibc malloc's thresholds in a serving worker, and the memory given back once it is idle.

By default glibc hands a block of 128 KiB or more out by ``mmap`` (that threshold rising with
what is freed, to 32 MiB at most) and returns the heap's free top past the trim threshold, so a
call's numpy columns and the compiled core's buffers land on fresh pages the kernel must zero,
often several times a call (issue 24: about 4,300 page faults in a 10,000 x 1,000
``min_traffic`` call). With ``kassign serve --malloc-tuning`` a worker raises both thresholds
with ``mallopt`` at start (``tune``): blocks up to ``MMAP_THRESHOLD`` come from the heap and freed memory stays there
for the next allocation. What a large call leaves free is given back by ``malloc_trim(0)``
once the worker has had no call for ``IDLE_TRIM_SECONDS`` (``IdleTrim``), so a 1,000,000-
partition call's memory is not kept for ever.

glibc only: elsewhere (musl's ``mallopt`` does nothing useful, or none exists) nothing is set.
Off by default: measured, it took about 10% off that library call in a burst of calls, but
nothing measurable off a served call, and the trim that bounds memory gives the pages back
before the sparse calls rebalances make (docs/performance.md, "Allocation and page faults").
The library (``kassign.assignor``) never
sets them: a process-wide allocator setting is the serving process's choice.
"""

from __future__ import annotations

import ctypes
import logging
import platform
import threading
import time
from collections.abc import Callable

from kassign.server.runtime.admission import Load, LoadObserver

__all__ = [
    "IDLE_TRIM_SECONDS",
    "MMAP_THRESHOLD",
    "TRIM_THRESHOLD",
    "IdleTrim",
    "serving",
    "trim",
    "tune",
]

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 << 20
"""Blocks below this come from the heap (glibc's own ceiling for its moving threshold is 32 MiB;
larger ones, such as a 1,000,000-partition call's biggest columns, are still mapped apart)."""
TRIM_THRESHOLD = 512 << 20
"""The heap's free top kept between calls before glibc gives it back on its own."""
IDLE_TRIM_SECONDS = 2.0
"""A worker this long without an assignment call gives its free heap back (``malloc_trim``)."""


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc, else None."""
    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # pragma: no cover - a static interpreter
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def tune(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Set both thresholds in this process; whether they were set (False: not glibc)."""
    libc = _glibc()
    if libc is None:
        return False
    ok: bool = libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold) == 1
    ok = libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold) == 1 and ok
    if not ok:  # pragma: no cover - glibc refuses only values past its bounds
        log.warning("mallopt refused the thresholds %d, %d", mmap_threshold, trim_threshold)
    return ok


def trim() -> bool:
    """Give the heap's free pages back to the kernel; whether any were (False off glibc)."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0) == 1)


class IdleTrim:
    """A ``LoadObserver`` that trims once no assignment call has run for ``seconds``.

    ``on_load`` only records the load (it runs under the admission gate's lock); one daemon
    thread waits for the worker to stay idle, then calls ``trim_memory`` (ctypes releases the
    GIL) once per idle spell.
    """

    def __init__(
        self, seconds: float = IDLE_TRIM_SECONDS, trim_memory: Callable[[], object] = trim
    ) -> None:
        self._seconds = seconds
        self._trim = trim_memory
        self._changed = threading.Condition()
        self._idle_since: float | None = None
        self._trimmed = True  # nothing to give back before the first call
        self._thread = threading.Thread(target=self._run, name="kassign-trim", daemon=True)
        self._thread.start()

    def on_load(self, load: Load) -> None:
        with self._changed:
            if load.computing or load.queued:
                self._idle_since, self._trimmed = None, False
            elif self._idle_since is None:
                self._idle_since = time.monotonic()
                self._changed.notify()

    def on_shed(self, service: str, method: str) -> None:
        pass

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._trimmed or self._idle_since is None:
                    self._changed.wait()
                left = self._idle_since + self._seconds - time.monotonic()
                if left > 0:
                    self._changed.wait(left)
                    continue
                self._trimmed = True
            self._trim()


class _Both:
    """Two load observers told in turn."""

    def __init__(self, first: LoadObserver, second: LoadObserver) -> None:
        self._first, self._second = first, second

    def on_load(self, load: Load) -> None:
        self._first.on_load(load)
        self._second.on_load(load)

    def on_shed(self, service: str, method: str) -> None:
        self._first.on_shed(service, method)
        self._second.on_shed(service, method)


def serving(
    observer: LoadObserver | None, helper_trim: Callable[[], object]
) -> LoadObserver | None:
    """Tune this process; ``observer`` with the idle trim beside it (of this process and, by
    ``helper_trim``, its solver helper), or ``observer`` alone where nothing was tuned."""
    if not tune():
        return observer
    log.info(
        "malloc tuned: mmap threshold %d MiB, trim threshold %d MiB, free heap given back after"
        " %g s idle",
        MMAP_THRESHOLD >> 20,
        TRIM_THRESHOLD >> 20,
        IDLE_TRIM_SECONDS,
    )

    def trim_both() -> None:
        trim()
        helper_trim()

    idle = IdleTrim(trim_memory=trim_both)
    return idle if observer is None else _Both(observer, idle)
