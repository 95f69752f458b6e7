"""Prometheus metrics: gRPC server metrics by go-grpc-prometheus's names, plus assignment metrics.

Three parts, all fed from the edge of the service, never from the assignor:

- ``MetricsInterceptor`` with ``GrpcMetrics`` (module ``grpc_metrics``): go-grpc-prometheus's
  server metrics, for every call of every service, health and reflection included.
- ``LoadMetrics``, here, is the admission gate's observer (``kassign.server.runtime.admission``):
  ``kassign_queue_depth``, assignment calls waiting for a slot, and ``kassign_calls_shed_total``
  (``grpc_service, grpc_method``), calls refused RESOURCE_EXHAUSTED because the worker was
  saturated; both exist at 0 from start-up.
- ``AssignmentMetrics`` (module ``assignment_metrics``) is the Streams servicer's observer.

What they share is in ``metric_parts``; this module is where all of them are imported from.

Metrics are created on a registry handed in (no module globals), so a test can read a private
registry and a worker process can write to prometheus_client's multiprocess files
(see ``server/runtime/workers.py``). ``serve_metrics`` exposes a registry on ``/metrics``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kassign.server.observe.assignment_metrics import AssignmentMetrics
from kassign.server.observe.grpc_metrics import GrpcMetrics, MetricsInterceptor
from kassign.server.observe.metric_parts import invalid_reason, methods
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from kassign.server.runtime.admission import Load

__all__ = [
    "AssignmentMetrics",
    "GrpcMetrics",
    "LoadMetrics",
    "MetricsInterceptor",
    "invalid_reason",
    "serve_metrics",
]


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
        for service, method in methods(services):
            self.shed.labels(service, method.name)

    def on_load(self, load: Load) -> None:
        """Sets the gauge only when the queue changed: a call reports its load on entering and
        on leaving, mostly the same (the gate calls this under its lock, one call at a time)."""
        if load.queued != self._queued:
            self._queued = load.queued
            self.queue_depth.set(load.queued)

    def on_shed(self, service: str, method: str) -> None:
        self.shed.labels(service, method).inc()


def serve_metrics(registry: CollectorRegistry, *, port: int, host: str = "0.0.0.0") -> WSGIServer:
    """Serve ``registry`` on ``http://host:port/metrics`` from a daemon thread; port 0 picks one.

    The returned server's ``server_port`` is the bound port; ``shutdown()`` stops it.
    """
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server
