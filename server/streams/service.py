"""The Streams room's gRPC service, ``kassign.v1.TaskAssignmentService``, added to a server.

``create_server`` (``kassign.server.runtime.app``) builds the process's one gRPC server and asks
each room to add its service with an ``add_to_server`` of this shape; the consumer-group room
will bring its own beside this one, so the runtime never names a room's servicer or messages.
"""

from __future__ import annotations

from typing import Protocol, cast

import grpc
from google.protobuf.message import Message
from kassign.assignor.errors import InvalidRequest
from kassign.server.calls import (
    Unary,
    add_unary_service,
    parse_request,
    record_quietly,
    record_shadow,
)
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.loads.source import LoadSource
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.servicer import (
    AssignObserver,
    NullObserver,
    Outcome,
    TaskAssignmentServicer,
)
from kassign.server.streams.shadow import journal_answer
from kassign.v1 import assignment_pb2 as pb

__all__ = ["SERVICE_NAME", "JournalingServicer", "RequestJournal", "add_to_server"]

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["TaskAssignmentService"].full_name


class RequestJournal(Protocol):
    """Where requests are recorded (``kassign.server.observe.journal.Journal``)."""

    def record(self, request: pb.AssignRequest, stamp: Message | None = None) -> None: ...

    def stamp(self, group_key: str) -> Message: ...


class JournalingServicer(TaskAssignmentServicer):
    """Records each request before answering it; a failing journal never fails a call.

    A shadow call (issue 26) is stamped on arrival and recorded once answered, with kassign's
    answer and the comparison in its ``shadow`` (``calls.record_shadow``)."""

    def __init__(self, journal: RequestJournal, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._journal = journal

    def Assign(
        self, request: pb.AssignRequest | bytes, context: grpc.ServicerContext
    ) -> WireResponse:
        if isinstance(request, bytes):  # a malformed body is refused by Assign, not journaled
            parsed = _parsed(request)  # its own copy: Assign parses again, to let go of it
        else:
            parsed = request
        if parsed is not None and parsed.HasField("shadow"):
            copy = parsed if isinstance(request, bytes) else _copy(parsed)  # the journal's own
            answer = lambda: self.outcome(request, context)
            return record_shadow(self._journal, copy, answer, _fill).wire
        if parsed is not None:
            record_quietly(self._journal.record, parsed)
        del parsed
        return super().Assign(request, context)


def _copy(request: pb.AssignRequest) -> pb.AssignRequest:
    copy = pb.AssignRequest()
    copy.CopyFrom(request)
    return copy


def _fill(copy: pb.AssignRequest, outcome: Outcome) -> None:
    """kassign's answer and the comparison, in the journal's copy of a shadow call."""
    copy.shadow.kassign.extend(journal_answer(outcome.assignment))
    copy.shadow.comparison.CopyFrom(outcome.wire.head.report.shadow)


def _parsed(data: bytes) -> pb.AssignRequest | None:
    try:
        return cast("pb.AssignRequest", parse_request(pb.AssignRequest, data))
    except InvalidRequest:  # Assign refuses it, with the reason
        return None


def add_to_server(
    server: grpc.Server,
    *,
    default_budget_ms: int | None,
    observer: AssignObserver | None = None,
    journal: RequestJournal | None = None,
    limits: RequestLimits = DEFAULT_LIMITS,
    loads: LoadSource | None = None,
) -> str:
    """Add ``TaskAssignmentService`` to ``server``; returns its full name (for health,
    reflection). ``loads``: the server's load source (``--load-source``), if any."""
    kwargs = {
        "default_budget_ms": default_budget_ms,
        "observer": observer,
        "limits": limits,
        "loads": loads,
    }
    servicer = (
        JournalingServicer(journal, **kwargs)
        if journal is not None
        else TaskAssignmentServicer(**kwargs)  # type: ignore[arg-type]
    )
    # raw: Assign parses the body itself and lets the message go once decoded (issue 16)
    method = Unary(servicer.Assign, pb.AssignRequest, pb.AssignResponse, raw=True)
    on_error = (observer or NullObserver()).on_error
    add_unary_service(server, SERVICE_NAME, {"Assign": method}, on_error=on_error)
    return SERVICE_NAME
