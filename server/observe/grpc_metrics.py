"""The go-grpc-prometheus server metrics, and the interceptor that feeds them.

``MetricsInterceptor`` (a ``grpc.ServerInterceptor``) counts every call of every service,
health and reflection included: ``grpc_server_started_total``, ``grpc_server_handled_total``
(``grpc_type, grpc_service, grpc_method, grpc_code``), ``grpc_server_handling_seconds``,
``grpc_server_msg_received_total``, ``grpc_server_msg_sent_total``; and
``kassign_calls_in_flight``, the calls started and not yet finished. ``GrpcMetrics.initialise``
creates the series of named services' methods at 0 (every status code), as go-grpc-prometheus
does, so an alert's ``rate()`` sees the first error rather than a series that appears with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from kassign.server.interceptors import Handler as _Handler
from kassign.server.interceptors import WrappingInterceptor
from kassign.server.observe.metric_parts import KINDS, LATENCY_BUCKETS, UNKNOWN, children, methods
from kassign.server.runtime.heartbeat import SELF_PROBE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["HEALTH_CHECK_METHOD", "GrpcMetrics", "MetricsInterceptor"]


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
        for service, method in methods(services):
            kind = KINDS[(method.client_streaming, method.server_streaming)]
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


@dataclass(frozen=True, slots=True)
class _Method:
    grpc_type: str
    service: str
    method: str

    @staticmethod
    def of(full_method: str, handler: _Handler) -> _Method:
        service, _, method = full_method.lstrip("/").rpartition("/")
        kind = KINDS[(bool(handler.request_streaming), bool(handler.response_streaming))]
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
        started, in_flight = children(metrics.started), children(metrics.in_flight)
        received_, sent_ = children(metrics.msg_received), children(metrics.msg_sent)
        handled, handling = children(metrics.handled), children(metrics.handling_seconds)
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
