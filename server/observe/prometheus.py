"""Prometheus metrics: gRPC server metrics by go-grpc-prometheus's names, plus assignment metrics.

Two parts, both fed from the edge of the service, never from the assignor:

- ``MetricsInterceptor`` (a ``grpc.ServerInterceptor``) counts every call of every service,
  health and reflection included: ``grpc_server_started_total``, ``grpc_server_handled_total``
  (``grpc_type, grpc_service, grpc_method, grpc_code``), ``grpc_server_handling_seconds``,
  ``grpc_server_msg_received_total``, ``grpc_server_msg_sent_total``; and
  ``kassign_calls_in_flight``, the calls started and not yet finished. ``GrpcMetrics.initialise``
  creates the series of named services' methods at 0 (every status code), as go-grpc-prometheus
  does, so an alert's ``rate()`` sees the first error rather than a series that appears with it.
- ``LoadMetrics`` is the admission gate's observer (``kassign.server.runtime.admission``):
  ``kassign_queue_depth``, assignment calls waiting for a slot, and ``kassign_calls_shed_total``
  (``grpc_service, grpc_method``), calls refused RESOURCE_EXHAUSTED because the worker was
  saturated; both exist at 0 from start-up.
- ``AssignmentMetrics`` is the servicer's observer (``kassign.server.streams.servicer.AssignObserver``): phase
  timings, group sizes, moves, warm-ups, follow-ups, cross-rack cost, solver fallbacks and
  invalid requests by reason.

Metrics are created on a registry handed in (no module globals), so a test can read a private
registry and a worker process can write to prometheus_client's multiprocess files
(see ``server/runtime/workers.py``). ``serve_metrics`` exposes a registry on ``/metrics``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import descriptor_pool
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.moves import MoveCounts, move_counts
from kassign.server.interceptors import Handler as _Handler
from kassign.server.interceptors import WrappingInterceptor
from kassign.server.runtime.heartbeat import SELF_PROBE
from kassign.server.streams.response_wire import WireResponse
from kassign.v1 import assignment_pb2 as pb
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from kassign.assignor.streams.result import TaskAssignment
    from kassign.server.runtime.admission import Load
    from kassign.server.streams.decode.request import DecodedRequest

__all__ = [
    "AssignmentMetrics",
    "GrpcMetrics",
    "LoadMetrics",
    "MetricsInterceptor",
    "invalid_reason",
    "serve_metrics",
]

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)
"""Seconds: from a health check (sub-millisecond) to a large group with rack optimisation."""
SIZE_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 50000)
COST_BUCKETS = (0, 1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000)
UNKNOWN = "unknown"
"""Label value for an assignor or strategy a failed call never got to decode."""

_KINDS = {
    (False, False): "unary",
    (True, False): "client_stream",
    (False, True): "server_stream",
    (True, True): "bidi_stream",
}
"""``grpc_type`` by (request streaming, response streaming)."""


class GrpcMetrics:
    """The go-grpc-prometheus server metrics, on one registry."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        method = ("grpc_type", "grpc_service", "grpc_method")
        self.started = Counter(
            "grpc_server_started_total", "RPCs started on the server.", method, registry=registry
        )
        self.handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed on the server, regardless of success.",
            (*method, "grpc_code"),
            registry=registry,
        )
        self.handling_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time to handle an RPC until the server finished it.",
            method,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.msg_received = Counter(
            "grpc_server_msg_received_total",
            "Stream messages received on the server.",
            method,
            registry=registry,
        )
        self.msg_sent = Counter(
            "grpc_server_msg_sent_total",
            "Stream messages sent by the server.",
            method,
            registry=registry,
        )
        self.in_flight = Gauge(
            "kassign_calls_in_flight",
            "Calls started and not yet finished.",
            method,
            multiprocess_mode="livesum",  # summed over the live workers; a dead one's go
            registry=registry,
        )

    def initialise(self, services: Iterable[str]) -> None:
        """Every method of the named services at 0: each series, and ``handled`` for every code."""
        for service, method in _methods(services):
            kind = _KINDS[(method.client_streaming, method.server_streaming)]
            labels = (kind, service, method.name)
            for metric in (
                self.started,
                self.handling_seconds,
                self.msg_received,
                self.msg_sent,
                self.in_flight,
            ):
                metric.labels(*labels)
            for code in grpc.StatusCode:
                self.handled.labels(*labels, code.name)


def _methods(services: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(service name, method descriptor) of every method of the named services."""
    pool = descriptor_pool.Default()  # type: ignore[no-untyped-call]
    for service in services:
        for method in pool.FindServiceByName(service).methods:
            yield service, method


class LoadMetrics:
    """The admission gate's observer: the queue and the calls shed, per worker process."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.queue_depth = Gauge(
            "kassign_queue_depth",
            "Assignment calls waiting for a slot (summed over the live workers).",
            multiprocess_mode="livesum",
            registry=registry,
        )
        self.shed = Counter(
            "kassign_calls_shed_total",
            "Assignment calls refused RESOURCE_EXHAUSTED at once: every slot busy, the queue full.",
            ("grpc_service", "grpc_method"),
            registry=registry,
        )
        self._queued = 0  # what the gauge holds (a new gauge holds 0)

    def initialise(self, services: Iterable[str]) -> None:
        """Every method of the named services at 0 shed, so ``rate()`` sees the first one."""
        for service, method in _methods(services):
            self.shed.labels(service, method.name)

    def on_load(self, load: Load) -> None:
        """Sets the gauge only when the queue changed: a call reports its load on entering and
        on leaving, mostly the same (the gate calls this under its lock, one call at a time)."""
        if load.queued != self._queued:
            self._queued = load.queued
            self.queue_depth.set(load.queued)

    def on_shed(self, service: str, method: str) -> None:
        self.shed.labels(service, method).inc()


@dataclass(frozen=True, slots=True)
class _Method:
    grpc_type: str
    service: str
    method: str

    @staticmethod
    def of(full_method: str, handler: _Handler) -> _Method:
        service, _, method = full_method.lstrip("/").rpartition("/")
        kind = _KINDS[(bool(handler.request_streaming), bool(handler.response_streaming))]
        return _Method(kind, service or UNKNOWN, method)

    @property
    def labels(self) -> tuple[str, str, str]:
        return (self.grpc_type, self.service, self.method)


HEALTH_CHECK_METHOD = "/grpc.health.v1.Health/Check"


class MetricsInterceptor(WrappingInterceptor):
    """Wraps every handler the server resolves so each call is counted and timed.

    The code of a call is what the handler left on its context (``context.code()``): ``OK``
    when it returned without setting one, ``UNKNOWN`` when it raised without one.
    """

    def __init__(self, metrics: GrpcMetrics) -> None:
        super().__init__()
        self._metrics = metrics

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], _Handler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _Handler | None:
        """A worker's probe of itself (``SELF_PROBE``, every half second) is no caller's call:
        counted, it would swamp the health checks operators read."""
        if (
            handler_call_details.method == HEALTH_CHECK_METHOD
            and SELF_PROBE in handler_call_details.invocation_metadata
        ):
            return continuation(handler_call_details)
        return super().intercept_service(continuation, handler_call_details)

    def wrap(self, name: str, handler: _Handler) -> _Handler:
        method = _Method.of(name, handler)
        wrap = {
            "unary": (grpc.unary_unary_rpc_method_handler, handler.unary_unary),
            "server_stream": (grpc.unary_stream_rpc_method_handler, handler.unary_stream),
            "client_stream": (grpc.stream_unary_rpc_method_handler, handler.stream_unary),
            "bidi_stream": (grpc.stream_stream_rpc_method_handler, handler.stream_stream),
        }
        make_handler, behaviour = wrap[method.grpc_type]
        if behaviour is None:  # grpc sets the behaviour its streaming flags name; nothing to time
            return handler
        return make_handler(
            self._wrapped(method, behaviour),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _wrapped(self, method: _Method, behaviour: Callable[..., Any]) -> Callable[..., Any]:
        metrics = self._metrics
        labels = method.labels
        started, in_flight = _children(metrics.started), _children(metrics.in_flight)
        received_, sent_ = _children(metrics.msg_received), _children(metrics.msg_sent)
        handled, handling = _children(metrics.handled), _children(metrics.handling_seconds)
        streams_in = method.grpc_type in ("client_stream", "bidi_stream")
        streams_out = method.grpc_type in ("server_stream", "bidi_stream")

        def finish(context: grpc.ServicerContext, start: float, failed: bool) -> grpc.StatusCode:
            # ServicerContext.code() exists since grpc 1.38; types-grpcio does not declare it.
            left: grpc.StatusCode | None = context.code()  # type: ignore[attr-defined]
            code = left or (grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK)
            in_flight(*labels).dec()
            handled(*labels, code.name).inc()
            handling(*labels).observe(time.perf_counter() - start)
            return code

        def received(requests: Iterator[Any]) -> Iterator[Any]:
            for request in requests:
                received_(*labels).inc()
                yield request

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            start = time.perf_counter()
            started(*labels).inc()
            in_flight(*labels).inc()
            if streams_in:
                request = received(request)
            else:
                received_(*labels).inc()
            if streams_out:
                return sent(behaviour(request, context), context, start)
            try:
                response = behaviour(request, context)
            except BaseException:
                finish(context, start, failed=True)
                raise
            if finish(context, start, failed=False) is grpc.StatusCode.OK:
                sent_(*labels).inc()  # a non-OK status sends no message
            return response

        def sent(responses: Iterator[Any], context: grpc.ServicerContext, start: float) -> Any:
            try:
                for response in responses:
                    sent_(*labels).inc()
                    yield response
            except BaseException:
                finish(context, start, failed=True)
                raise
            finish(context, start, failed=False)

        return call


def invalid_reason(error: BaseException) -> str:
    """The ``reason`` label of an invalid request: its field with list indices dropped.

    ``members[3].info_bytes`` becomes ``members[].info_bytes``, so the label set stays bounded by
    the request schema, not by the sizes of the groups that were sent.
    """
    if isinstance(error, InvalidRequest):
        return re.sub(r"\[\d+\]", "[]", error.field) or UNKNOWN
    return type(error).__name__


def _children(metric: Any) -> Callable[..., Any]:
    """``metric.labels``, each child asked for once: ``labels`` checks and locks on every call,
    and a call used 20 of them (issue 24). Children are never removed, so the cache holds."""
    children: dict[tuple[str, ...], Any] = {}

    def labels(*values: str) -> Any:
        child = children.get(values)
        if child is None:
            child = children[values] = metric.labels(*values)
        return child

    return labels


def _add(child: Any, amount: float) -> None:
    """``child.inc(amount)``, without the lock and file write when there is nothing to add."""
    if amount:
        child.inc(amount)


class _Call(threading.local):
    """Per-call scratch for the observer: each call runs on one server thread from start to end."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float]] = []
        self.labels: tuple[str, str] = (UNKNOWN, UNKNOWN)


class AssignmentMetrics:
    """The servicer's observer: assignment metrics none of Kafka's assignors export.

    Phase timings arrive before the call's assignor and strategy are known (decode comes first),
    so they wait in per-thread scratch and are recorded when the call ends, with its labels.
    """

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.seconds = Histogram(
            "kassign_assignment_seconds",
            "Time per phase of an assignment.",
            ("assignor", "strategy", "phase"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.group_tasks = Histogram(
            "kassign_group_tasks",
            "Tasks per assigned group.",
            buckets=SIZE_BUCKETS,
            registry=registry,
        )
        self.group_clients = Histogram(
            "kassign_group_clients",
            "Clients (processes) per assigned group.",
            buckets=SIZE_BUCKETS,
            registry=registry,
        )
        self.tasks_moved = Counter(
            "kassign_tasks_moved_total",
            "Tasks placed away from their previous owner.",
            ("type",),
            registry=registry,
        )
        self.warmups = Counter(
            "kassign_warmups_total", "Warm-up replicas assigned (KIP-441).", registry=registry
        )
        self.moves = Counter(
            "kassign_moves_total",
            "Moves by kind, as the report's moves split (docs/explanations.md).",
            ("kind",),
            registry=registry,
        )
        self.followups = Counter(
            "kassign_followup_rebalances_total",
            "Assignments that scheduled a follow-up rebalance.",
            registry=registry,
        )
        self.cross_rack_cost = Histogram(
            "kassign_cross_rack_cost",
            "Cross-rack cost of assignments the rack optimiser ran on.",
            ("stage",),
            buckets=COST_BUCKETS,
            registry=registry,
        )
        self.solver_fallbacks = Counter(
            "kassign_solver_fallbacks_total",
            "Rack optimisations that fell back (KIP-925).",
            registry=registry,
        )
        self.invalid_requests = Counter(
            "kassign_invalid_requests_total",
            "Requests rejected as INVALID_ARGUMENT.",
            ("reason",),
            registry=registry,
        )
        self._call = _Call()
        self._seconds, self._moved = _children(self.seconds), _children(self.tasks_moved)
        self._moves, self._costs = _children(self.moves), _children(self.cross_rack_cost)

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None:
        configs = decoded.state.configs
        self._call.labels = (configs.assignor, configs.rack_aware_strategy.value)

    def on_phase(self, phase: str, seconds: float) -> None:
        self._call.phases.append((phase, seconds))

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None:
        self._flush_phases()
        report = response.report
        self.group_tasks.observe(len(decoded.state.tasks))
        self.group_clients.observe(len(decoded.state.clients))
        _add(self._moved("active"), report.active_tasks_moved)
        _add(self._moved("standby"), report.standby_tasks_moved)
        _add(self.warmups, report.warmups)
        self._count_moves(decoded, assignment, report)
        if report.followup_scheduled:
            self.followups.inc()
        if report.solver_fallback:
            self.solver_fallbacks.inc()
        if report.rack_status in _OPTIMISER_RAN:
            self._costs("before").observe(report.cross_rack_cost_before)
            self._costs("after").observe(report.cross_rack_cost_after)

    def _count_moves(
        self, decoded: DecodedRequest, assignment: TaskAssignment, report: pb.AssignmentReport
    ) -> None:
        """The moves split: the report's when the call asked for it, else counted here."""
        if report.HasField("moves"):
            m = report.moves
            counts = MoveCounts(m.stateful_actives, m.stateless_actives, m.standbys, m.warmups)
        else:
            counts = move_counts(decoded.state, assignment)
        for kind, value in counts.by_kind():
            _add(self._moves(kind), value)

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        self._flush_phases()
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            self.invalid_requests.labels(invalid_reason(error)).inc()

    def _flush_phases(self) -> None:
        assignor, strategy = self._call.labels
        for phase, seconds in self._call.phases:
            self._seconds(assignor, strategy, phase).observe(seconds)
        self._call.phases = []
        self._call.labels = (UNKNOWN, UNKNOWN)


_OPTIMISER_RAN = frozenset({pb.RACK_OPTIMISATION_OPTIMAL, pb.RACK_OPTIMISATION_FALLBACK})
"""Rack statuses for which costs were computed (so the cross-rack cost histogram is observed)."""


def serve_metrics(registry: CollectorRegistry, *, port: int, host: str = "0.0.0.0") -> WSGIServer:
    """Serve ``registry`` on ``http://host:port/metrics`` from a daemon thread; port 0 picks one.

    The returned server's ``server_port`` is the bound port; ``shutdown()`` stops it.
    """
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server
