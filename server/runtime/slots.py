"""Worker slots given up for good, told to every worker so its health service can report them.

``kassign serve --workers N`` gives up a slot whose workers keep failing at start
(``kassign.server.runtime.supervisor``); the service then runs on fewer processes than it was
configured for. Only the parent knows, and probers ask the workers' health service, so the
parent marks the slot in a page of shared memory mapped before any worker is forked, and each
worker reports it under the health service name ``WORKERS_SERVICE``: SERVING while every slot is
filled (or being refilled), NOT_SERVING once one is lost. The whole server's status (``""``)
stays SERVING, since the workers left still answer: a readiness probe asks ``""``, a liveness
probe ``WORKERS_SERVICE`` (deploy/k8s/), so Kubernetes restarts a pod that lost a worker.

One byte per slot, written only by the parent: a byte store is atomic, so a worker never reads
a torn value, and it needs no lock.
"""

from __future__ import annotations

import mmap
import threading
import time

from grpc_health.v1 import health, health_pb2

__all__ = ["POLL_SECONDS", "WORKERS_SERVICE", "LostSlots", "report_lost_slots"]

WORKERS_SERVICE = "kassign.workers"
"""Health service name whose status says whether every configured worker slot is kept."""
POLL_SECONDS = 0.5
"""How often a worker reads the slots: the delay before a lost slot shows in its health."""


class LostSlots:
    """``slots`` flags in memory shared with every process forked after it is made."""

    def __init__(self, slots: int) -> None:
        # An anonymous mapping is MAP_SHARED: the parent's writes reach the forked workers.
        self._flags = mmap.mmap(-1, max(1, slots))
        self._slots = slots

    def lose(self, index: int) -> None:
        """The parent gave up slot ``index``."""
        if not 0 <= index < self._slots:
            raise IndexError(f"no worker slot {index} of {self._slots}")
        self._flags[index] = 1

    def lost(self) -> tuple[int, ...]:
        """The slots given up, by index."""
        return tuple(i for i in range(self._slots) if self._flags[i])


def _status(lost: LostSlots) -> int:
    return (
        health_pb2.HealthCheckResponse.NOT_SERVING
        if lost.lost()
        else health_pb2.HealthCheckResponse.SERVING
    )


def report_lost_slots(
    lost: LostSlots, servicer: health.HealthServicer, *, poll_seconds: float = POLL_SECONDS
) -> threading.Thread:
    """Set ``WORKERS_SERVICE``'s status now and keep it current from a daemon thread.

    A servicer in graceful shutdown ignores ``set``, so a draining worker stays NOT_SERVING.
    """
    status = _status(lost)
    servicer.set(WORKERS_SERVICE, status)

    def follow() -> None:
        shown = status
        while True:
            time.sleep(poll_seconds)
            now = _status(lost)
            if now != shown:
                servicer.set(WORKERS_SERVICE, now)
                shown = now

    thread = threading.Thread(target=follow, name="kassign-slots", daemon=True)
    thread.start()
    return thread
