"""The gRPC servicer: decode, assign, distribute over threads, encode. Nothing else.

The servicer keeps no state between calls (any replica answers any call). Each phase is a plain
module function; the servicer only times them, tells an observer, and maps errors to a status once
(``kassign.server.status``). Metrics, journals and logs hang off the observer, not off this code:

    decode -> assign (kassign.assignor.streams.api.run) -> distribute (kassign.assignor.streams.threads) -> encode

The observer protocol is small on purpose; ``server/observe/assignment_metrics.py`` implements it with Prometheus.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

import grpc
from kassign.assignor.streams.api import distribute_if_valid, run, run_explained
from kassign.assignor.streams.result import TaskAssignment
from kassign.assignor.timing import RACK_OPTIMISATION
from kassign.server.calls import Deadline, PhaseClock, parse_request, status_on_error
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.loads.source import LoadSource
from kassign.server.shadow import SHADOW_PHASE
from kassign.server.streams import encode, shadow
from kassign.server.streams.decode.request import DecodedRequest, decode_request
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.source_loads import wants_source_loads, with_source_loads
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc

__all__ = [
    "LOAD_SOURCE",
    "PHASES",
    "AssignObserver",
    "NullObserver",
    "Outcome",
    "TaskAssignmentServicer",
    "assign_request",
]

LOAD_SOURCE = "load_source"
PHASES = ("decode", LOAD_SOURCE, "assign", RACK_OPTIMISATION, "distribute", "encode")
"""The phases ``on_phase`` reports, in the order they run. ``load_source`` only for balance
LOAD without task loads in the request (``source_loads``); ``rack_optimisation`` (KIP-925) runs
inside the assignor and is reported only when it ran; ``assign`` is then the rest of its time.
A shadow call (issue 26) adds ``shadow`` (``server.shadow.SHADOW_PHASE``) after ``encode``."""


@runtime_checkable
class AssignObserver(Protocol):
    """What the servicer tells the outside world about each call (metrics, logs).

    Called on the serving thread; implementations must be quick and must not raise. ``on_phase``
    comes once per completed phase; then exactly one of ``on_success`` or ``on_error`` per call.
    ``on_error`` receives the gRPC code the caller gets and the error (an ``InvalidRequest`` for
    bad input: its ``field`` names what was wrong).
    """

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None: ...

    def on_phase(self, phase: str, seconds: float) -> None: ...

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None: ...

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None: ...


class NullObserver:
    """The observer used when nobody listens."""

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None:
        pass

    def on_phase(self, phase: str, seconds: float) -> None:
        pass

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None:
        pass

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything one call produced, for the CLI and tests that want more than the response.

    ``wire`` is what the servicer sends (its lists as bytes, ``response_wire.py``);
    ``response`` builds the whole message from it, for callers that read the lists.
    """

    decoded: DecodedRequest
    assignment: TaskAssignment
    wire: WireResponse

    @property
    def shadow(self) -> bool:
        """Whether this was a shadow call (its report carries the comparison)."""
        return self.wire.head.report.HasField("shadow")

    @property
    def response(self) -> pb.AssignResponse:
        return self.wire.message()


def assign_request(
    request: pb.AssignRequest | bytes,
    *,
    default_budget_ms: int | None = None,
    observer: AssignObserver | None = None,
    clock_ms: Callable[[], int] | None = None,
    deadline: Deadline | None = None,
    limits: RequestLimits = DEFAULT_LIMITS,
    loads: LoadSource | None = None,
) -> Outcome:
    """Compute the response to one request; raises ``KassignError`` subclasses for bad input.

    ``request.now_ms`` 0 means "now": the server's clock is read here, once, so everything below
    stays pure. The CLI's ``assign`` and the servicer share this function. ``deadline`` (the
    servicer's): the call ends between phases once its caller is gone, and the solver budget
    takes at most ``calls.BUDGET_SHARE`` of the time the call has left. ``limits``: the
    server's per-request limits (``kassign.server.limits``), checked while decoding. ``loads``:
    the server's load source, read (within the same share of the time left) for balance LOAD
    without task loads in the request (``source_loads``).
    """
    obs = observer or NullObserver()
    clock = PhaseClock(obs.on_phase, None if deadline is None else deadline.check)
    if isinstance(request, pb.AssignRequest):
        message, given, data = request, True, None
    else:
        message, given, data = _parse(request), False, request
    del request
    now_ms = message.now_ms or (clock_ms or _wall_clock_ms)()
    cap = None if deadline is None else deadline.budget_cap_ms()
    decoded, kafka = clock.run(
        "decode",
        lambda: _decoded(
            message,
            now_ms=now_ms,
            default_budget_ms=default_budget_ms,
            budget_cap_ms=cap,
            limits=limits,
            data=data,
        ),
    )
    if not given:
        message = _head(message)  # keeps ``shadow.kafka_assignor``, not Kafka's lists
    obs.on_decoded(message, decoded)
    if wants_source_loads(decoded):
        left = None if deadline is None else deadline.budget_cap_ms()
        timeout = None if left is None else left / 1000.0
        decoded = clock.run(LOAD_SOURCE, lambda: with_source_loads(decoded, loads, timeout))
    explanation = None
    if message.explain:  # opt-in (issue 17): the default call takes the path it always took
        assignment, error, explanation = clock.run("assign", lambda: run_explained(decoded.state))
    else:
        assignment, error = clock.run("assign", lambda: run(decoded.state))
    members = clock.run("distribute", lambda: distribute_if_valid(decoded.state, assignment, error))
    wire = clock.run(
        "encode",
        lambda: encode.encode_wire(
            decoded, assignment, members, error=error, explanation=explanation
        ),
    )
    if kafka is not None:  # issue 26: Kafka's answer against this one, in the report
        compared = clock.run(
            SHADOW_PHASE,
            lambda: shadow.comparison(message.shadow, decoded.state, kafka, assignment),
        )
        wire.head.report.shadow.CopyFrom(compared)
    encode.set_timings(wire.head, encode.Timings(clock.seconds["assign"], clock.total()))
    obs.on_success(message, decoded, assignment, wire)
    return Outcome(decoded, assignment, wire)


def _decoded(
    message: pb.AssignRequest,
    *,
    now_ms: int,
    default_budget_ms: int | None,
    budget_cap_ms: int | None,
    limits: RequestLimits,
    data: bytes | None,
) -> tuple[DecodedRequest, TaskAssignment | None]:
    """The request decoded, and with ``shadow`` (issue 26) Kafka's answer, checked; ``data``:
    the message's bytes when the call received them."""
    decoded = decode_request(
        message,
        now_ms=now_ms,
        default_budget_ms=default_budget_ms,
        budget_cap_ms=budget_cap_ms,
        limits=limits,
        data=data,
    )
    if not message.HasField("shadow"):
        return decoded, None
    return decoded, shadow.decode_kafka_answer(message.shadow, decoded.state)


def _parse(data: bytes) -> pb.AssignRequest:
    return cast("pb.AssignRequest", parse_request(pb.AssignRequest, data))


def _head(request: pb.AssignRequest) -> pb.AssignRequest:
    """What observers read of a request, without its members and tasks."""
    head = pb.AssignRequest(
        group_id=request.group_id, now_ms=request.now_ms, explain=request.explain
    )
    head.configs.CopyFrom(request.configs)
    if request.HasField("shadow"):
        head.shadow.kafka_assignor = request.shadow.kafka_assignor
    return head


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class TaskAssignmentServicer(assignment_pb2_grpc.TaskAssignmentServiceServicer):
    """``kassign.v1.TaskAssignmentService``: one unary ``Assign``; stateless."""

    def __init__(
        self,
        *,
        default_budget_ms: int | None = None,
        observer: AssignObserver | None = None,
        limits: RequestLimits = DEFAULT_LIMITS,
        loads: LoadSource | None = None,
    ) -> None:
        self._default_budget_ms = default_budget_ms
        self._observer: AssignObserver = observer or NullObserver()
        self._limits = limits
        self._loads = loads

    def Assign(
        self, request: pb.AssignRequest | bytes, context: grpc.ServicerContext
    ) -> WireResponse:
        """The answer as ``WireResponse``: the registered serializer (``calls.py``) calls its
        ``SerializeToString``, so the lists are never built as messages (issue 16)."""
        return self.outcome(request, context).wire

    def outcome(self, request: pb.AssignRequest | bytes, context: grpc.ServicerContext) -> Outcome:
        """``Assign``'s whole outcome (the journal's shadow lines read kassign's answer)."""
        with status_on_error(self._observer.on_error, context):
            return assign_request(
                request,
                default_budget_ms=self._default_budget_ms,
                observer=self._observer,
                deadline=Deadline(context),
                limits=self._limits,
                loads=self._loads,
            )
        raise AssertionError("unreachable: status_on_error aborts the call")  # pragma: no cover
