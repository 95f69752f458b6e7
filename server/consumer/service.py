"""The consumer room's gRPC service, ``kassign.v1.ConsumerAssignmentService``, added to a server.

Beside the Streams room's (``kassign.server.streams.service``), with an ``add_to_server`` of
the same shape: ``create_server`` calls both, and health and reflection follow the names they
return.
"""

from __future__ import annotations

from typing import Protocol

import grpc
from google.protobuf.message import Message
from kassign.assignor.errors import InvalidRequest
from kassign.server.calls import Unary, add_unary_service, record_quietly, record_shadow
from kassign.server.consumer.response_wire import ConsumerWireResponse
from kassign.server.consumer.servicer import (
    ConsumerAssignmentServicer,
    ConsumerObserver,
    ConsumerOutcome,
    NullConsumerObserver,
    parse,
)
from kassign.server.consumer.shadow import journal_answer
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.loads.source import LoadSource
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["SERVICE_NAME", "ConsumerRequestJournal", "add_to_server"]

SERVICE_NAME: str = cpb.DESCRIPTOR.services_by_name["ConsumerAssignmentService"].full_name


class ConsumerRequestJournal(Protocol):
    """Where requests are recorded (``kassign.server.observe.journal.Journal``)."""

    def record(self, request: cpb.ConsumerAssignRequest, stamp: Message | None = None) -> None: ...

    def stamp(self, group_key: str) -> Message: ...


class _JournalingServicer(ConsumerAssignmentServicer):
    """Records each request before answering it; a failing journal never fails a call.

    A shadow call (issue 26) is stamped on arrival and recorded once answered, with kassign's
    answer and the comparison in its ``shadow`` (``calls.record_shadow``)."""

    def __init__(
        self,
        journal: ConsumerRequestJournal,
        *,
        observer: ConsumerObserver | None,
        limits: RequestLimits,
        loads: LoadSource | None,
    ) -> None:
        super().__init__(observer=observer, limits=limits, loads=loads)
        self._journal = journal

    def Assign(
        self, request: cpb.ConsumerAssignRequest | bytes, context: grpc.ServicerContext
    ) -> ConsumerWireResponse:
        parsed = _parsed(request) if isinstance(request, bytes) else request
        if parsed is None:  # a malformed body: refused by Assign, not journaled
            return super().Assign(request, context)
        if parsed.HasField("shadow"):
            copy = cpb.ConsumerAssignRequest()
            copy.CopyFrom(parsed)  # the journal's, filled once answered
            answer = lambda: self.outcome(request, context, parsed)
            return record_shadow(self._journal, copy, answer, _fill).wire
        record_quietly(self._journal.record, parsed)
        return self.outcome(request, context, parsed).wire


def _parsed(data: bytes) -> cpb.ConsumerAssignRequest | None:
    try:
        return parse(data)
    except InvalidRequest:  # Assign refuses it, with the reason
        return None


def _fill(copy: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
    """kassign's answer and the comparison, in the journal's copy of a shadow call."""
    copy.shadow.kassign.extend(journal_answer(outcome.assignment))
    copy.shadow.comparison.CopyFrom(outcome.wire.head.report.shadow)


def add_to_server(
    server: grpc.Server,
    *,
    observer: ConsumerObserver | None = None,
    journal: ConsumerRequestJournal | None = None,
    limits: RequestLimits = DEFAULT_LIMITS,
    loads: LoadSource | None = None,
) -> str:
    """Add ``ConsumerAssignmentService`` to ``server``; returns its full name (for health,
    reflection). ``loads``: the server's load source, for requests with balance LOAD and none."""
    servicer = (
        _JournalingServicer(journal, observer=observer, limits=limits, loads=loads)
        if journal is not None
        else ConsumerAssignmentServicer(observer=observer, limits=limits, loads=loads)
    )
    # raw: the servicer parses the body and reads the members from its bytes (issue 24)
    method = Unary(servicer.Assign, cpb.ConsumerAssignRequest, cpb.ConsumerAssignResponse, raw=True)
    on_error = (observer or NullConsumerObserver()).on_error
    add_unary_service(server, SERVICE_NAME, {"Assign": method}, on_error=on_error)
    return SERVICE_NAME
