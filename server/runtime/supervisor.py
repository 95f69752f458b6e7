"""Keeps ``kassign serve --workers N`` at N worker processes until it is told to stop.

A supervisor (Kubernetes, systemd) sees only the parent, which stays healthy while its workers
die one by one, so the parent itself replaces a worker that exits while the service is up: same
slot, a fresh fork. Two limits keep that from turning into a loop:

- Stopping wins. Stop signals are held off while a worker is forked, so a signal arriving then
  reaches the new worker too, and nothing is forked once one has arrived.
- A slot whose workers keep failing soon after they start (a broken install, say) is given up
  after ``QUICK_FAILURES`` failures in a row, each within ``QUICK_SECONDS`` of its start. When
  every slot is given up the parent exits 1 and the supervisor above it takes over. A slot given
  up while others serve is reported: ``on_lost(index)`` (the parent's health status and metrics,
  ``kassign.server.runtime.slots``), besides the log line.

Signals: SIGTERM or SIGINT to the parent becomes one SIGTERM to each worker (a drain); a repeat
within ``DUPLICATE_SIGNAL_SECONDS`` is the same signal delivered twice (``timeout`` and some
supervisors signal the process and then its group) and is dropped; a later one is forwarded too,
which stops the workers at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

__all__ = ["QUICK_FAILURES", "QUICK_SECONDS", "STOP_SIGNALS", "Supervisor"]

log = logging.getLogger(__name__)

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})
DUPLICATE_SIGNAL_SECONDS = 1.0
QUICK_SECONDS = 10.0
QUICK_FAILURES = 3


@dataclass(frozen=True, slots=True)
class _Slot:
    index: int
    started: float
    quick_failures: int  # failures in a row, each within QUICK_SECONDS of its start


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Stop signals wait; one that arrived meanwhile is handled when this block ends."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@dataclass(slots=True)
class Supervisor:
    """Forks workers with ``fork(index) -> pid`` and keeps their slots filled.

    ``on_exit(pid)`` runs for every worker that exits (the metrics mark it dead), ``on_lost(index)``
    for every slot given up. Call ``install_signal_handlers`` and ``start`` in the parent's main
    thread, then ``wait``. ``configured``, ``restarts`` and ``lost`` are read by the metrics.
    """

    fork: Callable[[int], int]
    on_exit: Callable[[int], None] = lambda pid: None
    on_lost: Callable[[int], None] = lambda index: None
    clock: Callable[[], float] = time.monotonic
    slots: dict[int, _Slot] = field(default_factory=dict)  # live workers by pid
    stopping: bool = False
    failed: int = 0  # workers that exited with an error
    configured: int = 0  # slots asked for by start()
    restarts: int = 0  # workers forked to replace one that exited while serving
    hung: int = 0  # workers killed for answering no probe (``heartbeat.Watchdog``)
    lost: list[int] = field(default_factory=list)  # slots given up, in the order they were
    _first_signal: float | None = None

    def install_signal_handlers(self) -> None:
        for sig in sorted(STOP_SIGNALS):
            signal.signal(sig, self._on_signal)

    def start(self, workers: int) -> None:
        self.configured += workers
        for index in range(workers):
            self._spawn(index, quick_failures=0)

    def wait(self) -> int:
        """Reap (and replace) workers until none is left; the number that exited with an error."""
        while self.slots:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                log.error("workers %s vanished", sorted(self.slots))
                return self.failed + len(self.slots)
            slot = self.slots.pop(pid, None)
            if slot is not None:
                self.on_exit(pid)
                self._exited(pid, slot, os.waitstatus_to_exitcode(status))
        return self.failed

    def live(self) -> dict[int, int]:
        """Live workers' pids by slot index; safe to call from another thread (the metrics')."""
        return {slot.index: pid for pid, slot in dict(self.slots).items()}

    def started(self, pid: int) -> float | None:
        """When live worker ``pid`` was forked (``clock``'s time); None if it is not live."""
        slot = self.slots.get(pid)
        return None if slot is None else slot.started

    def kill_unresponsive(self, pid: int) -> bool:
        """SIGKILL to a live worker that stopped answering; ``wait`` reaps and replaces it like
        any worker that died. Whether it was sent (not once stopping, not to a worker gone)."""
        if self.stopping or pid not in self.slots:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            self.hung += 1
            return True
        return False

    def stop(self) -> None:
        """SIGTERM to every live worker; none is replaced from now on."""
        self._signal_all(signal.SIGTERM)

    def kill_all(self) -> None:
        """SIGKILL to whatever is still running (the parent's last resort on its way out)."""
        self._signal_all(signal.SIGKILL)

    def _signal_all(self, sig: signal.Signals) -> None:
        self.stopping = True
        for pid in sorted(self.slots):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        now = self.clock()
        if self._first_signal is not None and now - self._first_signal < DUPLICATE_SIGNAL_SECONDS:
            return
        if self._first_signal is None:
            self._first_signal = now
        log.info("received %s, stopping %d worker(s)", signal.Signals(signum).name, len(self.slots))
        self.stop()

    def _spawn(self, index: int, *, quick_failures: int) -> bool:
        """Whether it forked (not once stopping)."""
        with _stop_signals_held():
            if self.stopping:
                return False
            pid = self.fork(index)
            self.slots[pid] = _Slot(index, self.clock(), quick_failures)
            return True

    def _exited(self, pid: int, slot: _Slot, code: int) -> None:
        if code != 0:
            self.failed += 1
        if self.stopping:
            if code != 0:
                log.error("worker pid %d exited with %d; %d left", pid, code, len(self.slots))
            else:
                log.info("worker pid %d exited", pid)
            return
        quick = code != 0 and self.clock() - slot.started < QUICK_SECONDS
        failures = slot.quick_failures + 1 if quick else 0
        if failures >= QUICK_FAILURES:
            log.error(
                "worker pid %d exited with %d; worker %d failed %d times within %g s of starting, "
                "not replacing it; %d left",
                pid,
                code,
                slot.index,
                failures,
                QUICK_SECONDS,
                len(self.slots),
            )
            self.lost.append(slot.index)
            self.on_lost(slot.index)
            return
        log.error("worker pid %d exited with %d; replacing worker %d", pid, code, slot.index)
        if self._spawn(slot.index, quick_failures=failures):
            self.restarts += 1
