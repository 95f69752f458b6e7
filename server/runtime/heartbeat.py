"""Whether each worker still answers: its own probe, timed, in memory the supervisor reads.

Issue 27: with one worker SIGSTOPped, 4 of 7 new connections timed out while health said
SERVING. The kernel spreads connections over every worker on the port, and the parent knew only
whether its workers had exited. Now:

- each worker, once serving, asks its own gRPC health service every ``PROBE_SECONDS`` over a
  Unix socket of its own (the shared TCP port could reach any worker) and writes the time of each
  answer (any status: a saturated or draining worker still answers) in its slot of
  ``Heartbeats``;
- the parent's ``Watchdog`` reads the slots: a worker with no answer for ``timeout`` seconds (or
  none at all within ``STARTUP_SECONDS`` of its fork), found so twice in a row, is SIGKILLed and
  replaced like any worker that died; until the replacement has answered, the slot is marked
  *replacing* and every worker's whole-server status (``""``, the readiness probe's question) is
  NOT_SERVING.

Times are ``time.monotonic()`` (CLOCK_MONOTONIC, one clock for every process of a host); each
field is an aligned 8-byte store in an anonymous shared mapping made before the first fork, the
answer's time written before the pid that claims it.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.server.runtime.readiness import Readiness

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "PROBE_SECONDS",
    "SELF_PROBE",
    "STARTUP_SECONDS",
    "Heartbeats",
    "Watchdog",
    "keep_probing",
]

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.5
"""How often a worker probes itself, and the watchdog reads the answers."""
STARTUP_SECONDS = 60.0
"""How long a new worker may take to answer its first probe (imports on a busy host)."""
DEFAULT_TIMEOUT_SECONDS = 5.0
"""``--worker-timeout``: longer than a GIL-holding solve within the default 5 s budget needs to
let a probe through (a 1 ms switch interval), short enough that a stuck worker is gone soon."""
REPLACING = "a hung worker is being replaced"
SELF_PROBE = ("kassign-probe", "self")
"""Metadata of a worker's probe of itself, which the call metrics leave out
(``kassign.server.observe.prometheus.MetricsInterceptor``)."""

_SLOT = 24  # pid (q), answered at (d), replacing (q)


class Heartbeats:
    """Per worker slot: the pid and time of the last answer to the worker's own probe, and
    whether the slot is being refilled after its worker hung."""

    def __init__(self, slots: int) -> None:
        self._cells = mmap.mmap(-1, max(1, slots) * _SLOT)  # MAP_SHARED: seen across forks
        self._slots = slots

    def answered(self, index: int, pid: int, at: float) -> None:
        struct.pack_into("d", self._cells, index * _SLOT + 8, at)
        struct.pack_into("q", self._cells, index * _SLOT, pid)

    def last(self, index: int) -> tuple[int, float]:
        """(pid, time) of the slot's last answer; pid 0 if none yet."""
        (pid,) = struct.unpack_from("q", self._cells, index * _SLOT)
        (at,) = struct.unpack_from("d", self._cells, index * _SLOT + 8)
        return pid, at

    def mark_replacing(self, index: int, replacing: bool) -> None:
        struct.pack_into("q", self._cells, index * _SLOT + 16, int(replacing))

    def replacing(self) -> bool:
        """Whether any slot's hung worker is being replaced."""
        return any(
            struct.unpack_from("q", self._cells, i * _SLOT + 16)[0] for i in range(self._slots)
        )


def keep_probing(
    heartbeats: Heartbeats,
    index: int,
    probe_path: Path,
    readiness: Readiness,
    *,
    every: float = PROBE_SECONDS,
) -> threading.Thread:
    """In a worker that serves on ``probe_path`` too: a daemon thread that asks the worker's
    own health service every ``every`` seconds, records each answer in slot ``index``, and
    holds ``""`` down while any slot is being replaced."""
    channel = grpc.insecure_channel(f"unix:{probe_path}")
    check = health_pb2_grpc.HealthStub(channel).Check  # type: ignore[attr-defined]
    pid = os.getpid()

    def probe() -> None:
        while True:
            try:
                check(
                    health_pb2.HealthCheckRequest(),
                    timeout=max(1.0, 4 * every),
                    metadata=(SELF_PROBE,),
                )
            except grpc.RpcError:
                pass  # no answer: no heartbeat; the watchdog decides
            else:
                heartbeats.answered(index, pid, time.monotonic())
            readiness.hold(REPLACING, ("",), heartbeats.replacing())
            time.sleep(every)

    thread = threading.Thread(target=probe, name="kassign-probe", daemon=True)
    thread.start()
    return thread


class WorkerPool(Protocol):
    """What the watchdog needs of ``kassign.server.runtime.supervisor.Supervisor``."""

    stopping: bool

    def live(self) -> dict[int, int]: ...

    def started(self, pid: int) -> float | None: ...

    def kill_unresponsive(self, pid: int) -> bool: ...


class Watchdog:
    """The parent's side: kills a worker that stopped answering (the supervisor replaces it)."""

    def __init__(
        self,
        heartbeats: Heartbeats,
        pool: WorkerPool,
        *,
        timeout: float,
        startup: float = STARTUP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._heartbeats = heartbeats
        self._pool = pool
        self._timeout = timeout
        self._startup = startup
        self._clock = clock
        self._suspects: set[int] = set()
        self._killed: set[int] = set()  # until reaped, a killed worker is still live

    def check(self) -> list[int]:
        """One look at every live worker; the pids killed (found late twice in a row)."""
        now = self._clock()
        killed, late = [], set()
        live = self._pool.live()
        self._killed &= set(live.values())
        for index, pid in sorted(live.items()):
            if pid in self._killed:
                continue
            answered_by, at = self._heartbeats.last(index)
            if answered_by == pid:
                self._heartbeats.mark_replacing(index, False)
                silent = now - at
                limit = self._timeout
            else:
                started = self._pool.started(pid)
                silent = 0.0 if started is None else now - started
                limit = self._startup
            if silent <= limit:
                continue
            if pid not in self._suspects:
                late.add(pid)
                continue
            log.error(
                "worker %d (pid %d) answered no probe for %.1f s (--worker-timeout %g s);"
                " killing it to be replaced",
                index,
                pid,
                silent,
                self._timeout,
            )
            self._heartbeats.mark_replacing(index, True)
            if self._pool.kill_unresponsive(pid):
                killed.append(pid)
                self._killed.add(pid)
        self._suspects = late
        return killed

    def run(self, every: float = PROBE_SECONDS) -> threading.Thread:
        """``check`` every ``every`` seconds from a daemon thread until the pool stops."""

        def watch() -> None:
            while not self._pool.stopping:
                time.sleep(every)
                if not self._pool.stopping:
                    self.check()

        thread = threading.Thread(target=watch, name="kassign-watchdog", daemon=True)
        thread.start()
        return thread
