"""The Streams servicer's observer: assignment metrics none of Kafka's assignors export.

``AssignmentMetrics`` implements ``kassign.server.streams.servicer.AssignObserver``: phase
timings, group sizes, moves, warm-ups, follow-ups, cross-rack cost, solver fallbacks and invalid
requests by reason.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import grpc
from kassign.assignor.streams.moves import MoveCounts, move_counts
from kassign.server.observe.metric_parts import (
    COST_BUCKETS,
    LATENCY_BUCKETS,
    SIZE_BUCKETS,
    UNKNOWN,
    add,
    children,
    invalid_reason,
)
from kassign.server.streams.response_wire import WireResponse
from kassign.v1 import assignment_pb2 as pb
from prometheus_client import CollectorRegistry, Counter, Histogram

if TYPE_CHECKING:
    from kassign.assignor.streams.result import TaskAssignment
    from kassign.server.streams.decode.request import DecodedRequest

__all__ = ["AssignmentMetrics"]


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
        self._seconds, self._moved = children(self.seconds), children(self.tasks_moved)
        self._moves, self._costs = children(self.moves), children(self.cross_rack_cost)

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
        add(self._moved("active"), report.active_tasks_moved)
        add(self._moved("standby"), report.standby_tasks_moved)
        add(self.warmups, report.warmups)
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
            add(self._moves(kind), value)

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
