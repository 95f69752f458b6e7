"""What every room's servicer does around its own phases: time them, and end errors as a status.

- ``PhaseClock`` runs one call's phases, timing each, and tells ``on_phase`` the time of each,
  with the parts timed inside (``kassign.assignor.timing``, such as the rack optimisation)
  reported apart and taken out of their phase;
- ``status_on_error`` is the edge: any exception becomes the gRPC status
  ``kassign.server.status`` maps it to (with its trailing metadata), never a traceback;
- ``record_quietly`` hands a request to a journal before it is answered: a failing journal is
  logged, never the call's failure; ``record_shadow`` records a shadow call (issue 26) once
  answered, stamped at its arrival, with kassign's answer added;
- ``add_unary_service`` registers a service's unary methods as the generated
  ``add_*_to_server`` would, except that a body which does not parse as the request message is
  answered INVALID_ARGUMENT (field ``request``) through the same edge, where grpcio would log an
  ERROR traceback and answer INTERNAL "Exception deserializing request!".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

import grpc
from google.protobuf.message import Message
from kassign.assignor import interrupt
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.timing import measure
from kassign.server import status

__all__ = [
    "BUDGET_SHARE",
    "Deadline",
    "Malformed",
    "PhaseCheck",
    "PhaseClock",
    "Unary",
    "add_unary_service",
    "record_quietly",
    "status_on_error",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_M = TypeVar("_M", bound=Message)
_M_contra = TypeVar("_M_contra", bound=Message, contravariant=True)
_O = TypeVar("_O")


class PhaseCheck(Protocol):
    """May end a call before ``phase`` or, ``during`` it, at a checkpoint (``Deadline.check``)."""

    def __call__(self, phase: str, *, during: bool = False) -> None: ...


class PhaseClock:
    """Times the phases of one call and reports each to ``on_phase``; ``check`` (a call's
    ``Deadline.check``) runs before each phase and at the library's checkpoints inside it
    (``kassign.assignor.interrupt``), and may end the call there."""

    def __init__(
        self,
        on_phase: Callable[[str, float], None],
        check: PhaseCheck | None = None,
    ) -> None:
        self._on_phase = on_phase
        self._check = check
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def run(self, phase: str, fn: Callable[[], _T]) -> _T:
        """Run one phase; parts the code inside timed (``kassign.assignor.timing``) are reported apart."""
        check = self._check
        if check is not None:
            check(phase)
        start = time.perf_counter()
        with measure() as parts, _checked(check, phase):
            value = fn()
        elapsed = time.perf_counter() - start
        self.seconds[phase] = elapsed
        self._on_phase(phase, max(0.0, elapsed - sum(parts.values())))
        for part, seconds in parts.items():
            self._on_phase(part, seconds)
        return value

    def total(self) -> float:
        return time.perf_counter() - self.started


def _checked(check: PhaseCheck | None, phase: str) -> AbstractContextManager[None]:
    """``check(phase, during=True)`` behind the library's checkpoints while ``phase`` runs."""
    if check is None:
        return nullcontext()
    return interrupt.checked(lambda: check(phase, during=True))


BUDGET_SHARE = 0.5
"""Of the time a call has left when it starts, the share its solver budget may take: the
rest is for decoding, the other phases and encoding (issue 16: the budget used to ignore the
deadline, so a caller could give up long before the solver did)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """One call's deadline and cancellation, read from its gRPC context.

    ``check`` runs between phases and, through ``kassign.assignor.interrupt``, inside the long
    loops of a phase: a call whose caller cancelled, or whose deadline passed, ends there
    (``CallEnded``), so no work goes on for nobody. ``budget_cap_ms`` bounds the solver's budget
    by the time left. OR-Tools cannot be interrupted, so a solve may still overrun; the cap keeps
    it within the deadline by its own estimate.
    """

    context: grpc.ServicerContext

    def check(self, phase: str, *, during: bool = False) -> None:
        remaining = self.context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise status.CallEnded(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"the deadline passed {_where(phase, during)}"
            )
        if not self.context.is_active():
            raise status.CallEnded(
                grpc.StatusCode.CANCELLED, f"the caller left {_where(phase, during)}"
            )

    def budget_cap_ms(self) -> int | None:
        """``BUDGET_SHARE`` of the time left, in ms (at least 1); ``None`` without a deadline."""
        remaining = self.context.time_remaining()
        if remaining is None:
            return None
        return max(1, int(remaining * 1000 * BUDGET_SHARE))


def _where(phase: str, during: bool) -> str:
    """Where a call ended, for its status (only spelt out when it did)."""
    return f"{'during' if during else 'before'} {phase}"


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


class ShadowJournal(Protocol[_M_contra]):
    """A journal that stamps a call on arrival and records it later (``observe/journal.py``)."""

    def stamp(self, group_key: str) -> Message: ...

    def record(self, request: _M_contra, stamp: Message | None = None) -> None: ...


def record_shadow(
    journal: ShadowJournal[_M],
    copy: _M,
    answer: Callable[[], _O],
    fill: Callable[[_M, _O], None],
) -> _O:
    """A shadow call (issue 26): stamped now, answered, then ``copy`` (the journal's copy of
    the request) recorded with what ``fill`` adds from the outcome: kassign's answer and the
    comparison. A call that fails is recorded as it came; a failing journal never fails it."""
    stamp: Message | None = None
    try:
        stamp = journal.stamp(getattr(copy, "group_id", ""))
    except Exception:
        log.exception("journal: could not stamp a %s", type(copy).__name__)
    record = partial(_record_stamped, journal, stamp)
    try:
        outcome = answer()
    except BaseException:
        record_quietly(record, copy)
        raise
    try:
        fill(copy, outcome)
    except Exception:
        log.exception("journal: could not add kassign's answer to a %s", type(copy).__name__)
    record_quietly(record, copy)
    return outcome


def _record_stamped(journal: ShadowJournal[_M], stamp: Message | None, request: _M) -> None:
    journal.record(request, stamp)


@dataclass(frozen=True, slots=True)
class Malformed:
    """A request body that did not parse: handed to the handler in place of the message."""

    message_type: str
    error: str


class Serializable(Protocol):
    """What a method may answer: a message, or anything that writes the message's bytes
    (the Streams room's ``WireResponse``, whose lists are bytes already)."""

    def SerializeToString(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Unary:
    """One unary method: what it does, and the message types it reads and writes."""

    behaviour: Callable[[Any, grpc.ServicerContext], Serializable]
    request_type: type[Message]
    response_type: type[Message]
    raw: bool = False
    """The behaviour takes the request's bytes and parses them itself (``parse_request``), so
    it can let the message go once it has read it (issue 16: the Streams room's peak)."""


def _serialize(response: Serializable) -> bytes:
    return response.SerializeToString()


def _parser(request_type: type[Message]) -> Callable[[bytes], Message | Malformed]:
    """The request deserializer: never raises (grpcio would turn that into INTERNAL)."""
    name = request_type.DESCRIPTOR.full_name

    def parse(data: bytes) -> Message | Malformed:
        try:
            return request_type.FromString(data)
        except Exception as exc:  # noqa: BLE001 - whatever the bytes did, the caller sent them
            return Malformed(name, str(exc))

    return parse


def parse_request(request_type: type[Message], data: bytes) -> Message:
    """``data`` as a ``request_type``, or ``InvalidRequest`` as a malformed body gets."""
    parsed = _parser(request_type)(data)
    if isinstance(parsed, Malformed):
        raise InvalidRequest(_malformed(parsed), field="request")
    return parsed


def _malformed(request: Malformed) -> str:
    return f"not a valid {request.message_type} message: {request.error}"


def _refusing_malformed(
    method: Unary, on_error: Callable[[grpc.StatusCode, BaseException], None]
) -> Callable[[Message | Malformed, grpc.ServicerContext], Serializable]:
    def handle(request: Message | Malformed, context: grpc.ServicerContext) -> Serializable:
        if not isinstance(request, Malformed):
            return method.behaviour(request, context)
        with status_on_error(on_error, context):
            raise InvalidRequest(_malformed(request), field="request")
        raise AssertionError("unreachable: status_on_error aborts the call")  # pragma: no cover

    return handle


def add_unary_service(
    server: grpc.Server,
    service: str,
    methods: Mapping[str, Unary],
    *,
    on_error: Callable[[grpc.StatusCode, BaseException], None],
) -> None:
    """Register ``service``'s ``methods`` on ``server``; a malformed body is INVALID_ARGUMENT.

    ``on_error`` is the observer's, so the refusal is counted and logged like any other.
    """
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            _refusing_malformed(method, on_error),
            request_deserializer=None if method.raw else _parser(method.request_type),
            response_serializer=_serialize,
        )
        for name, method in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)
