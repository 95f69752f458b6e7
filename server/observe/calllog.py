"""One log line per assignment: what an operator greps for when a group rebalanced badly.

Metrics say how the service is doing in aggregate; they cannot say what happened to group
``orders-app`` at 03:12. Kafka's own leader logs its assignment; so do we, one line per call,
from the servicer's observer (``CallLog``), beside the metrics (``Observers`` fans out to both):

    assigned group 'orders-app' (high_availability): 12 tasks, 3 clients, 6 members; moved 1
    active, 2 standby; 2 warm-ups; follow-up rebalance at 1700000600000; rack: disabled: ...;
    0.9 ms

The consumer room logs the same way (``ConsumerCallLog``, ``ConsumerObservers``):

    assigned consumer group 'orders' (cooperative-sticky): 6 members, 48 partitions; moved 3,
    revoked 3, withheld 3; cross-rack 12 -> 0 (Kafka rack-aware: some partition has no replica
    in some rack); 1.2 ms

Invalid requests are logged at WARNING with the field and member at fault (the caller's
mistake, worth seeing); other failures are already logged by ``kassign.server.status``. The
caller's text (group id, ids in messages) is quoted as a bounded ``excerpt``: a 64 MiB group id
must not become a 64 MiB log line.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.result import TaskAssignment
from kassign.server.consumer.servicer import (
    ConsumerObserver,
    ConsumerOutcome,
    NullConsumerObserver,
)
from kassign.server.status import error_text, excerpt
from kassign.server.streams.decode.request import DecodedRequest
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.servicer import AssignObserver, NullObserver
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "CallLog",
    "ConsumerCallLog",
    "ConsumerObservers",
    "Observers",
    "describe",
    "describe_consumer",
]

log = logging.getLogger("kassign.calls")


def describe(group_id: str, response: WireResponse) -> str:
    """The log line's text for one answer (no timestamp, no level)."""
    report = response.report
    first = response.first_followup_ms
    followup = f"follow-up rebalance at {first}" if first else "no follow-up"
    size = f"{report.tasks} tasks, {report.clients} clients, {response.members} members"
    parts = [
        f"assigned group {excerpt(group_id)!r} ({excerpt(report.assignor)}): {size}",
        f"moved {report.active_tasks_moved} active, {report.standby_tasks_moved} standby",
        f"{report.warmups} warm-ups",
        followup,
    ]
    if report.HasField("moves"):  # asked for (explain): the split, docs/explanations.md
        m = report.moves
        parts.insert(
            2,
            f"moves: {m.stateful_actives} stateful active, {m.stateless_actives} stateless active, "
            f"{m.standbys} standby, {m.warmups} warm-up",
        )
    if report.rack_optimisation:
        parts.append(f"rack: {report.rack_optimisation}")
    if response.error:
        parts.append(f"invalid assignment: {pb.AssignmentError.Name(response.error)}")
    parts.append(f"{1000 * report.total_seconds:.1f} ms")
    return "; ".join(parts)


class CallLog(NullObserver):
    """Logs each answer at INFO and each invalid request at WARNING (``kassign.calls``)."""

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None:
        if log.isEnabledFor(logging.INFO):
            log.info("%s", describe(request.group_id, response))

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        if isinstance(error, InvalidRequest):
            log.warning("refused a request: %s: %s", code.name, error_text(error))


class Observers:
    """Several observers as one, told in order; each is the servicer's "quick, never raises"."""

    def __init__(self, observers: Sequence[AssignObserver]) -> None:
        self._observers = tuple(observers)

    def on_decoded(self, request: pb.AssignRequest, decoded: DecodedRequest) -> None:
        for observer in self._observers:
            observer.on_decoded(request, decoded)

    def on_phase(self, phase: str, seconds: float) -> None:
        for observer in self._observers:
            observer.on_phase(phase, seconds)

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None:
        for observer in self._observers:
            observer.on_success(request, decoded, assignment, response)

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        for observer in self._observers:
            observer.on_error(code, error)


def describe_consumer(group_id: str, response: cpb.ConsumerAssignResponse) -> str:
    """The log line's text for one consumer group's answer."""
    r = response.report
    rack = "rack-aware" if r.kafka_rack_aware else "not rack-aware"
    size = f"{r.members} members, {r.partitions} partitions"
    moves = f"moved {r.moved_partitions}, revoked {r.revoked_partitions}"
    cross = f"cross-rack {r.cross_rack_partitions_before} -> {r.cross_rack_partitions_after}"
    parts = [
        f"assigned consumer group {excerpt(group_id)!r} ({excerpt(r.assignor)}): {size}",
        f"{moves}, withheld {r.withheld_partitions}",
        f"{cross} (Kafka {rack}: {r.kafka_rack_reason})",
    ]
    if r.solver_fallback:
        parts.append(f"solver fallback: {r.rack_reason}")
    parts.append(f"{1000 * r.total_seconds:.1f} ms")
    return "; ".join(parts)


class ConsumerCallLog(NullConsumerObserver):
    """The consumer room's log lines: each answer at INFO, each refusal at WARNING."""

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
        if log.isEnabledFor(logging.INFO):
            log.info("%s", describe_consumer(request.group_id, outcome.wire.head))

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        if isinstance(error, InvalidRequest) or code is grpc.StatusCode.FAILED_PRECONDITION:
            log.warning("refused a consumer request: %s: %s", code.name, error_text(error))


class ConsumerObservers:
    """Several consumer observers as one, told in order."""

    def __init__(self, observers: Sequence[ConsumerObserver]) -> None:
        self._observers = tuple(observers)

    def on_phase(self, phase: str, seconds: float) -> None:
        for observer in self._observers:
            observer.on_phase(phase, seconds)

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
        for observer in self._observers:
            observer.on_success(request, outcome)

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        for observer in self._observers:
            observer.on_error(code, error)
