"""What the Prometheus observers share: buckets, label values and cached label children.

The gRPC metrics (``grpc_metrics``), the admission gate's (``prometheus.LoadMetrics``), the Streams
assignment metrics (``assignment_metrics``) and the consumer group's (``consumer_metrics``) each
use some of these, so they live here once rather than in any one of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from google.protobuf import descriptor_pool
from kassign.assignor.errors import InvalidRequest

__all__ = [
    "COST_BUCKETS",
    "KINDS",
    "LATENCY_BUCKETS",
    "SIZE_BUCKETS",
    "UNKNOWN",
    "add",
    "children",
    "invalid_reason",
    "methods",
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

KINDS = {
    (False, False): "unary",
    (True, False): "client_stream",
    (False, True): "server_stream",
    (True, True): "bidi_stream",
}
"""``grpc_type`` by (request streaming, response streaming)."""


def methods(services: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(service name, method descriptor) of every method of the named services."""
    pool = descriptor_pool.Default()  # type: ignore[no-untyped-call]
    for service in services:
        for method in pool.FindServiceByName(service).methods:
            yield service, method


def invalid_reason(error: BaseException) -> str:
    """The ``reason`` label of an invalid request: its field with list indices dropped.

    ``members[3].info_bytes`` becomes ``members[].info_bytes``, so the label set stays bounded by
    the request schema, not by the sizes of the groups that were sent.
    """
    if isinstance(error, InvalidRequest):
        return re.sub(r"\[\d+\]", "[]", error.field) or UNKNOWN
    return type(error).__name__


def children(metric: Any) -> Callable[..., Any]:
    """``metric.labels``, each child asked for once: ``labels`` checks and locks on every call,
    and a call used 20 of them (issue 24). Children are never removed, so the cache holds."""
    children: dict[tuple[str, ...], Any] = {}

    def labels(*values: str) -> Any:
        child = children.get(values)
        if child is None:
            child = children[values] = metric.labels(*values)
        return child

    return labels


def add(child: Any, amount: float) -> None:
    """``child.inc(amount)``, without the lock and file write when there is nothing to add."""
    if amount:
        child.inc(amount)
