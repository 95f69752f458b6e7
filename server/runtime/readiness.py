"""Health statuses several conditions vote on: a name is SERVING only while none holds it down.

Two conditions take a worker's whole-server status (``""``, the readiness probe's question) down:
saturation (``kassign.server.runtime.admission``: every slot busy, the line full) and a hung
worker of the same service being replaced (``kassign.server.runtime.heartbeat``). Set directly,
each would lift the other's NOT_SERVING when it cleared; here each reason is held or released and
a name is SERVING again only when no reason holds it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from grpc_health.v1 import health, health_pb2

__all__ = ["Readiness"]

_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class Readiness:
    """Votes on ``servicer``'s statuses. A servicer in graceful shutdown ignores ``set``, so a
    draining worker stays NOT_SERVING whatever is voted."""

    def __init__(self, servicer: health.HealthServicer) -> None:
        self._servicer = servicer
        self._held: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def hold(self, reason: str, names: Iterable[str], down: bool) -> None:
        """``reason`` holds ``names`` down (``down``) or lets them go; a status is set only when
        whether anything holds it changes."""
        with self._lock:
            for name in names:
                reasons = self._held.setdefault(name, set())
                was_down = bool(reasons)
                if down:
                    reasons.add(reason)
                else:
                    reasons.discard(reason)
                if bool(reasons) != was_down:
                    self._servicer.set(name, _NOT_SERVING if reasons else _SERVING)
