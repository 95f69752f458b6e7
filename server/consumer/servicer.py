"""The consumer room's servicer: decode, assign, encode. Nothing else.

    decode (ConsumerAssignRequest -> ConsumerGroup) -> assign (kassign.assignor.consumer.api)
    -> encode (-> ConsumerAssignResponse, Kafka's ConsumerProtocolAssignment bytes per member)

Stateless, like the Streams servicer: each phase is a module function, timed and told to an
observer (metrics, call log); errors become a status once, at the edge
(``kassign.server.status``: bad input INVALID_ARGUMENT naming field and member; a group on which
Kafka's sticky assignors would throw, FAILED_PRECONDITION).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, cast, runtime_checkable

import grpc
from kassign.assignor.consumer import api
from kassign.assignor.consumer.explain import explain_consumer
from kassign.assignor.consumer.model import TopicPartition
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.timing import RACK_OPTIMISATION
from kassign.server.calls import Deadline, PhaseClock, parse_request, status_on_error
from kassign.server.consumer import encode, shadow
from kassign.server.consumer.decode import DecodedConsumerRequest, decode_request
from kassign.server.consumer.explain import add_consumer_explanation
from kassign.server.consumer.request_paths import located
from kassign.server.consumer.response_wire import ConsumerWireResponse
from kassign.server.consumer.source_loads import wants_source_loads, with_source_loads
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.loads.source import LoadSource
from kassign.server.shadow import SHADOW_PHASE
from kassign.v1 import consumer_pb2 as cpb
from kassign.v1 import consumer_pb2_grpc

__all__ = [
    "LOAD_SOURCE",
    "PHASES",
    "ConsumerAssignmentServicer",
    "ConsumerObserver",
    "ConsumerOutcome",
    "NullConsumerObserver",
    "assign_consumer_request",
]

LOAD_SOURCE = "load_source"
PHASES = ("decode", LOAD_SOURCE, "assign", RACK_OPTIMISATION, "encode")
"""The phases ``on_phase`` reports, in order; ``load_source`` only for balance LOAD without
loads in the request (``source_loads``); ``rack_optimisation`` only if the assignor times
its solver (``kassign.assignor.timing``; ``rack-optimal`` does not, so its solver counts in
``assign``), ``assign`` then being the rest of its time. A shadow call (issue 26) adds
``shadow`` (``server.shadow.SHADOW_PHASE``) after ``encode``."""


@dataclass(frozen=True, slots=True)
class ConsumerOutcome:
    """Everything one call produced, for observers, the CLI and tests.

    ``wire`` is what the servicer sends (its members as bytes, ``response_wire.py``);
    ``response`` builds the whole message from it, for callers that read the members.
    """

    decoded: DecodedConsumerRequest
    assignment: GroupAssignment
    wire: ConsumerWireResponse

    @property
    def shadow(self) -> bool:
        """Whether this was a shadow call (its report carries the comparison)."""
        return self.wire.head.report.HasField("shadow")

    @property
    def response(self) -> cpb.ConsumerAssignResponse:
        return self.wire.message()


@runtime_checkable
class ConsumerObserver(Protocol):
    """What the servicer tells the outside world about each call (metrics, logs).

    Called on the serving thread; must be quick and must not raise. ``on_phase`` once per
    completed phase, then exactly one of ``on_success`` or ``on_error`` per call, ``on_error``
    with the code the caller gets.
    """

    def on_phase(self, phase: str, seconds: float) -> None: ...

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None: ...

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None: ...


class NullConsumerObserver:
    """The observer used when nobody listens."""

    def on_phase(self, phase: str, seconds: float) -> None:
        pass

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
        pass

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        pass


def assign_consumer_request(
    request: cpb.ConsumerAssignRequest,
    *,
    observer: ConsumerObserver | None = None,
    deadline: Deadline | None = None,
    limits: RequestLimits = DEFAULT_LIMITS,
    loads: LoadSource | None = None,
    data: bytes | None = None,
) -> ConsumerOutcome:
    """The response to one request; raises ``KassignError`` subclasses (the CLI shares this).

    ``data``: the bytes ``request`` was parsed from, when the caller has them (the server):
    the members are read from them (``decode.decode_request``), not serialised again.

    ``deadline`` as for the Streams room: the call ends between phases once its caller is gone,
    and ``rack-optimal``'s budget takes at most ``calls.BUDGET_SHARE`` of the time left, as
    does a read of ``loads`` (the server's load source, ``source_loads``);
    ``limits`` (``kassign.server.limits``) are checked while decoding."""
    obs = observer or NullConsumerObserver()
    clock = PhaseClock(obs.on_phase, None if deadline is None else deadline.check)
    cap = None if deadline is None else deadline.budget_cap_ms()
    decoded, kafka = clock.run("decode", lambda: _decoded(request, limits, data))
    if wants_source_loads(decoded):
        left = None if deadline is None else deadline.budget_cap_ms()
        timeout = None if left is None else left / 1000.0
        decoded = clock.run(LOAD_SOURCE, lambda: with_source_loads(decoded, loads, timeout))
    if cap is not None and cap / 1000.0 < decoded.options.time_budget_s:
        decoded = replace(decoded, options=replace(decoded.options, time_budget_s=cap / 1000.0))
    assignment = clock.run("assign", lambda: _assign(decoded))
    wire = clock.run("encode", lambda: _encode(request, decoded, assignment))
    if kafka is not None:  # issue 26: Kafka's answer against this one, in the report
        compared = clock.run(
            SHADOW_PHASE, lambda: shadow.comparison(request.shadow, decoded, kafka, assignment)
        )
        wire.head.report.shadow.CopyFrom(compared)
    encode.set_timings(wire.head, encode.Timings(clock.seconds["assign"], clock.total()))
    outcome = ConsumerOutcome(decoded, assignment, wire)
    obs.on_success(request, outcome)
    return outcome


def _decoded(
    request: cpb.ConsumerAssignRequest, limits: RequestLimits, data: bytes | None
) -> tuple[DecodedConsumerRequest, dict[str, tuple[TopicPartition, ...]] | None]:
    """The request decoded, and with ``shadow`` (issue 26) Kafka's answer, checked."""
    decoded = decode_request(request, limits, data)
    if not request.HasField("shadow"):
        return decoded, None
    return decoded, shadow.decode_kafka_answer(request.shadow, decoded)


def _encode(
    request: cpb.ConsumerAssignRequest,
    decoded: DecodedConsumerRequest,
    assignment: GroupAssignment,
) -> ConsumerWireResponse:
    """The response; with ``request.explain`` (opt-in, issue 17) its explanation too."""
    wire = encode.encode_response(decoded, assignment)
    if request.explain:
        explanation = explain_consumer(decoded.group, assignment, decoded.options)
        add_consumer_explanation(wire.head, explanation)
    return wire


def _assign(decoded: DecodedConsumerRequest) -> GroupAssignment:
    """The library's answer; member errors found now (sticky userData) get the request's paths."""
    with located(decoded.user_data_fields, decoded.compact_fields):
        return api.assign(decoded.assignor, decoded.group, decoded.options)


class ConsumerAssignmentServicer(consumer_pb2_grpc.ConsumerAssignmentServiceServicer):
    """``kassign.v1.ConsumerAssignmentService``: one unary ``Assign``; stateless."""

    def __init__(
        self,
        *,
        observer: ConsumerObserver | None = None,
        limits: RequestLimits = DEFAULT_LIMITS,
        loads: LoadSource | None = None,
    ) -> None:
        self._observer: ConsumerObserver = observer or NullConsumerObserver()
        self._limits = limits
        self._loads = loads

    def Assign(
        self, request: cpb.ConsumerAssignRequest | bytes, context: grpc.ServicerContext
    ) -> ConsumerWireResponse:
        """The answer as ``ConsumerWireResponse``; ``request`` as it came (the service
        registers the method raw: ``calls.Unary``), or parsed."""
        return self.outcome(request, context).wire

    def outcome(
        self,
        request: cpb.ConsumerAssignRequest | bytes,
        context: grpc.ServicerContext,
        parsed: cpb.ConsumerAssignRequest | None = None,
    ) -> ConsumerOutcome:
        """``Assign``'s whole outcome (the journal's shadow lines read kassign's answer);
        ``parsed``: ``request``'s bytes parsed already (the journal's)."""
        with status_on_error(self._observer.on_error, context):
            data = request if isinstance(request, bytes) else None
            message = parsed or (parse(request) if isinstance(request, bytes) else request)
            return assign_consumer_request(
                message,
                observer=self._observer,
                deadline=Deadline(context),
                limits=self._limits,
                loads=self._loads,
                data=data,
            )
        raise AssertionError("unreachable: status_on_error aborts the call")  # pragma: no cover


def parse(data: bytes) -> cpb.ConsumerAssignRequest:
    """A request's body parsed, or ``InvalidRequest`` (field ``request``) if it does not."""
    return cast("cpb.ConsumerAssignRequest", parse_request(cpb.ConsumerAssignRequest, data))
