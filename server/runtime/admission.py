"""Load shedding: at most ``slots`` assignments computed at once, at most ``queue`` waiting.

A worker's gRPC thread pool has a thread for every slot and every place in the line, plus
``RESERVED_THREADS`` that assignments never take: health checks, reflection and refusals run
there, so a worker busy with heavy calls still answers its probes. An assignment call:

- takes a free slot at once; else waits in line (first come, first served) while the line has
  room; else is refused at once with RESOURCE_EXHAUSTED (it is *shed*);
- leaves the line when its deadline passes or its caller cancels, never reaching a slot;
- is parsed only once it holds a slot, so a shed or queued call costs its bytes, not a message.

A worker is *saturated* while every slot is busy and the line is full: the next call would be
shed. ``Gate`` tells ``on_load`` every change (the metrics' queue depth, the health service:
NOT_SERVING while saturated, ``saturation_health``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

import grpc
from kassign.server.interceptors import Handler, WrappingInterceptor
from kassign.server.runtime.readiness import Readiness

__all__ = [
    "DEFAULT_MAX_QUEUE",
    "RESERVED_THREADS",
    "AdmissionInterceptor",
    "Entry",
    "Gate",
    "Load",
    "LoadObserver",
    "saturation_health",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_QUEUE = 16
"""Assignment calls a worker keeps waiting for a slot before it sheds the next (``--max-queue``)."""
RESERVED_THREADS = 4
"""Server threads assignments never take: health checks, reflection, refusals."""


@dataclass(frozen=True, slots=True)
class Load:
    """A worker's assignment calls: ``computing`` hold a slot, ``queued`` wait for one."""

    computing: int
    queued: int
    saturated: bool


class LoadObserver(Protocol):
    """Told of every change of load and every shed call (the metrics); quick, never raising."""

    def on_load(self, load: Load) -> None: ...

    def on_shed(self, service: str, method: str) -> None: ...


class Entry(Enum):
    """How ``Gate.enter`` ended."""

    HELD = "holds a slot (call leave() when done)"
    SHED = "refused: every slot busy, the line full"
    LEFT = "the caller gave up while in line"


class Gate:
    """``slots`` computing at once, ``queue`` waiting; thread-safe, FIFO, grpc-free."""

    def __init__(self, slots: int, queue: int, on_load: Callable[[Load], None]) -> None:
        if slots < 1 or queue < 0:
            raise ValueError(f"need at least one slot and a queue of 0 or more: {slots}, {queue}")
        self._slots = slots
        self._queue = queue
        self._on_load = on_load
        self._lock = threading.Lock()
        self._busy = 0
        self._line: deque[threading.Event] = deque()
        # tickets ``leave`` handed a slot: a ticket is also set when its caller goes, so being
        # set does not say which
        self._handed: set[threading.Event] = set()
        on_load(self._load())

    def enter(self, wait: Callable[[threading.Event], object]) -> Entry:
        """Take a slot, at once or after waiting in line; ``wait(ticket)`` blocks until the
        ticket is set (the slot is handed over) or the caller is gone, whichever is first."""
        with self._lock:
            if self._busy < self._slots:
                self._busy += 1
                self._on_load(self._load())
                return Entry.HELD
            if len(self._line) >= self._queue:
                return Entry.SHED
            ticket = threading.Event()
            self._line.append(ticket)
            self._on_load(self._load())
        wait(ticket)
        with self._lock:
            if ticket in self._handed:  # maybe just as the caller gave up: it holds the slot
                self._handed.remove(ticket)
                return Entry.HELD
            self._line.remove(ticket)
            self._on_load(self._load())
            return Entry.LEFT

    def leave(self) -> None:
        """Give the slot back: to the first call in line, or free."""
        with self._lock:
            if self._line:
                ticket = self._line.popleft()
                self._handed.add(ticket)
                ticket.set()
            else:
                self._busy -= 1
            self._on_load(self._load())

    def _load(self) -> Load:
        queued = len(self._line)
        return Load(self._busy, queued, self._busy >= self._slots and queued >= self._queue)


class AdmissionInterceptor(WrappingInterceptor):
    """Puts the unary methods of ``services`` behind one ``Gate``; other calls pass untouched.

    Last in the server's interceptors, so the metrics' interceptor counts a shed call with its
    RESOURCE_EXHAUSTED.
    """

    def __init__(self, gate: Gate, services: Collection[str], observer: LoadObserver) -> None:
        super().__init__()
        self._gate = gate
        self._services = frozenset(services)
        self._observer = observer

    def wrap(self, name: str, handler: Handler) -> Handler:
        service, _, method = name.lstrip("/").rpartition("/")
        behaviour = handler.unary_unary
        if service not in self._services or behaviour is None:  # streaming: not gated
            return handler
        parse = handler.request_deserializer or (lambda data: data)
        return grpc.unary_unary_rpc_method_handler(
            self._admitted(service, method, behaviour, parse),
            request_deserializer=None,  # parsed once admitted
            response_serializer=handler.response_serializer,
        )

    def _admitted(
        self,
        service: str,
        method: str,
        behaviour: Callable[[Any, grpc.ServicerContext], Any],
        parse: Callable[[bytes], Any],
    ) -> Callable[[bytes, grpc.ServicerContext], Any]:
        gate, observer = self._gate, self._observer

        def call(data: bytes, context: grpc.ServicerContext) -> Any:
            entry = gate.enter(lambda ticket: _wait_in_line(ticket, context))
            if entry is Entry.SHED:
                observer.on_shed(service, method)
                context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "kassign: this worker is saturated (every slot computing, the queue full);"
                    " retry later or elsewhere",
                )
            if entry is Entry.LEFT:
                _abort_gone(context)
            if not context.is_active():  # handed a slot just as it gave up
                gate.leave()
                _abort_gone(context)
            try:
                return behaviour(parse(data), context)
            finally:
                gate.leave()

        return call


def _wait_in_line(ticket: threading.Event, context: grpc.ServicerContext) -> None:
    """Until the slot is handed over or the call ends (its deadline, its caller's cancel)."""
    if not context.add_callback(ticket.set):
        return  # the call already ended
    ticket.wait(context.time_remaining())


def _abort_gone(context: grpc.ServicerContext) -> None:
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed while queued")
    context.abort(grpc.StatusCode.CANCELLED, "the caller left while queued")


def saturation_health(readiness: Readiness, services: Iterable[str]) -> Callable[[Load], None]:
    """``on_load`` for a health service: ``services`` held NOT_SERVING while saturated.

    Only on a change, and logged, so an operator sees when shedding starts and stops.
    """
    names = tuple(services)
    saturated = False

    def on_load(load: Load) -> None:
        nonlocal saturated
        if load.saturated == saturated:
            return
        saturated = load.saturated
        if saturated:
            log.warning(
                "saturated: %d computing, %d queued; shedding assignment calls",
                load.computing,
                load.queued,
            )
        else:
            log.info("no longer saturated: %d computing, %d queued", load.computing, load.queued)
        readiness.hold("saturated", names, saturated)

    return on_load
