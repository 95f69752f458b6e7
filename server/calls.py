"""What every room's servicer does around its own phases: time them, and end errors as a status.

- ``PhaseClock`` runs one call's phases, timing each, and tells ``on_phase`` the time of each,
  with the parts timed inside (``kassign.assignor.timing``, such as the rack optimisation)
  reported apart and taken out of their phase;
- ``status_on_error`` is the edge: any exception becomes the gRPC status
  ``kassign.server.status`` maps it to (with its trailing metadata), never a traceback;
- ``record_quietly`` hands a request to a journal before it is answered: a failing journal is
  logged, never the call's failure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import grpc
from kassign.assignor.timing import measure
from kassign.server import status

__all__ = ["PhaseClock", "record_quietly", "status_on_error"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")


class PhaseClock:
    """Times the phases of one call and reports each to ``on_phase``."""

    def __init__(self, on_phase: Callable[[str, float], None]) -> None:
        self._on_phase = on_phase
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def run(self, phase: str, fn: Callable[[], _T]) -> _T:
        """Run one phase; parts the code inside timed (``kassign.assignor.timing``) are reported apart."""
        start = time.perf_counter()
        with measure() as parts:
            value = fn()
        elapsed = time.perf_counter() - start
        self.seconds[phase] = elapsed
        self._on_phase(phase, max(0.0, elapsed - sum(parts.values())))
        for part, seconds in parts.items():
            self._on_phase(part, seconds)
        return value

    def total(self) -> float:
        return time.perf_counter() - self.started


@contextmanager
def status_on_error(
    on_error: Callable[[grpc.StatusCode, BaseException], None], context: grpc.ServicerContext
) -> Iterator[None]:
    """Turn any exception into a gRPC status (by ``kassign.server.status``'s table), never a traceback."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the edge: everything becomes a status
        mapped = status.to_status(exc)
        on_error(mapped.code, exc)
        context.set_trailing_metadata(mapped.metadata)
        context.abort(mapped.code, mapped.message)


def record_quietly(record: Callable[[_T], None], request: _T) -> None:
    """``record(request)``; an exception is logged, so a failing journal never fails a call."""
    try:
        record(request)
    except Exception:
        log.exception("journal: could not record a %s", type(request).__name__)
