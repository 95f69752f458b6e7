"""Prometheus metrics of the consumer room (``kassign.v1.ConsumerAssignmentService``).

Names of their own (``kassign_consumer_*``), so the Streams room's metrics keep their names,
labels and meaning; the gRPC server metrics (``grpc_server_*``, ``MetricsInterceptor``) already
tell the two services apart by ``grpc_service``.

- ``kassign_consumer_assignment_seconds{assignor, phase}``: decode, assign, rack_optimisation
  (kassign's own assignor only), encode;
- ``kassign_consumer_assignments_total{assignor, kafka_rack_aware}``: answers, and whether
  Kafka's assignor would have used racks on the group (KIP-881);
- ``kassign_consumer_group_members``, ``kassign_consumer_group_partitions``: group sizes;
- ``kassign_consumer_partitions_moved_total{assignor}``, ``…_revoked_total{assignor}``;
- ``kassign_consumer_cross_rack_partitions{assignor, stage}``: before (owned) and after;
- ``kassign_consumer_solver_fallbacks_total{assignor}``;
- ``kassign_consumer_invalid_requests_total{reason}``: INVALID_ARGUMENT by field (indices
  dropped), ``kassign_consumer_failed_preconditions_total{reason}``: groups Kafka cannot assign.

The answers and fallbacks of every assignor kassign knows exist from the start at 0, so a
fallback-rate alert sees the first fallback.
"""

from __future__ import annotations

import threading

import grpc
from kassign.assignor.consumer import ASSIGNORS, KAFKA_ASSIGNORS
from kassign.assignor.errors import InvalidAssignment
from kassign.server.consumer.servicer import ConsumerOutcome
from kassign.server.observe.metric_parts import (
    COST_BUCKETS,
    LATENCY_BUCKETS,
    SIZE_BUCKETS,
    UNKNOWN,
    invalid_reason,
)
from kassign.v1 import consumer_pb2 as cpb
from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["ConsumerMetrics"]


class _Phases(threading.local):
    """Per-call phase timings: the assignor label is known only once the call has succeeded."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []


class ConsumerMetrics:
    """The consumer servicer's observer (``kassign.server.consumer.servicer.ConsumerObserver``)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.seconds = Histogram(
            "kassign_consumer_assignment_seconds",
            "Time per phase of a consumer group assignment.",
            ("assignor", "phase"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.assignments = Counter(
            "kassign_consumer_assignments_total",
            "Consumer group assignments answered.",
            ("assignor", "kafka_rack_aware"),
            registry=registry,
        )
        self.group_members = Histogram(
            "kassign_consumer_group_members",
            "Members per assigned consumer group.",
            buckets=SIZE_BUCKETS,
            registry=registry,
        )
        self.group_partitions = Histogram(
            "kassign_consumer_group_partitions",
            "Partitions of subscribed topics per assigned consumer group.",
            buckets=SIZE_BUCKETS,
            registry=registry,
        )
        self.moved = Counter(
            "kassign_consumer_partitions_moved_total",
            "Claimed partitions given to another member.",
            ("assignor",),
            registry=registry,
        )
        self.revoked = Counter(
            "kassign_consumer_partitions_revoked_total",
            "Owned partitions a member must revoke first (cooperative).",
            ("assignor",),
            registry=registry,
        )
        self.cross_rack = Histogram(
            "kassign_consumer_cross_rack_partitions",
            "Partitions read across racks, owned before and assigned after.",
            ("assignor", "stage"),
            buckets=COST_BUCKETS,
            registry=registry,
        )
        self.solver_fallbacks = Counter(
            "kassign_consumer_solver_fallbacks_total",
            "Rack-optimal assignments whose solver fell back.",
            ("assignor",),
            registry=registry,
        )
        self.invalid_requests = Counter(
            "kassign_consumer_invalid_requests_total",
            "Consumer requests rejected as INVALID_ARGUMENT.",
            ("reason",),
            registry=registry,
        )
        self.failed_preconditions = Counter(
            "kassign_consumer_failed_preconditions_total",
            "Consumer groups Kafka's assignor cannot assign (FAILED_PRECONDITION).",
            ("reason",),
            registry=registry,
        )
        self._phases = _Phases()
        for assignor in sorted(ASSIGNORS):
            for rack_aware in ("false", "true"):
                self.assignments.labels(assignor, rack_aware)
            if assignor not in KAFKA_ASSIGNORS:  # Kafka's have no solver to fall back from
                self.solver_fallbacks.labels(assignor)

    def on_phase(self, phase: str, seconds: float) -> None:
        self._phases.seen.append((phase, seconds))

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
        report = outcome.wire.report
        assignor = report.assignor
        self._flush(assignor)
        self.assignments.labels(assignor, str(report.kafka_rack_aware).lower()).inc()
        self.group_members.observe(report.members)
        self.group_partitions.observe(report.partitions)
        self.moved.labels(assignor).inc(report.moved_partitions)
        self.revoked.labels(assignor).inc(report.revoked_partitions)
        self.cross_rack.labels(assignor, "before").observe(report.cross_rack_partitions_before)
        self.cross_rack.labels(assignor, "after").observe(report.cross_rack_partitions_after)
        if report.solver_fallback:
            self.solver_fallbacks.labels(assignor).inc()

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        self._flush(UNKNOWN)
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            self.invalid_requests.labels(invalid_reason(error)).inc()
        elif code is grpc.StatusCode.FAILED_PRECONDITION:
            reason = str(error.code) if isinstance(error, InvalidAssignment) else UNKNOWN
            self.failed_preconditions.labels(reason).inc()

    def _flush(self, assignor: str) -> None:
        for phase, seconds in self._phases.seen:
            self.seconds.labels(assignor, phase).observe(seconds)
        self._phases.seen = []
