"""Errors to gRPC status, by one table, once, at the edge of the service.

    InvalidRequest     -> INVALID_ARGUMENT  "member 'm-1': members[0].info_bytes: truncated ..."
    InvalidAssignment  -> INTERNAL          the configured assignor broke KIP-924's rules: a
                                            server-side fault, not the caller's, and not one a
                                            retry would fix
      KAFKA_NULL_POINTER -> FAILED_PRECONDITION  a consumer group on which Kafka's own
                                            sticky assignors throw (docs/consumer-assignors.md):
                                            the request is well formed and the server sound, but
                                            the group has no Kafka answer until its state
                                            changes (the stale owner leaves, or another assignor
                                            is chosen); a retry as is fails the same way
    SolverError        -> INTERNAL          the rack code falls back instead; reaching here is a bug
    KassignError       -> INTERNAL
    anything else      -> INTERNAL          "internal error (request id ...)", the traceback only
                                            in the server log under that id

The most specific class wins (the table is walked along the exception's MRO), then, for an
``InvalidAssignment``, its code (``ASSIGNMENT_CODE_TABLE``). The caller never sees a traceback;
an INVALID_ARGUMENT also carries ``kassign-field`` / ``kassign-member`` trailing metadata
(past a per-request limit, ``kassign-limit``: the ``kassign serve`` option), a
FAILED_PRECONDITION ``kassign-reason`` (its code), so clients can react without parsing the
message.

Messages and metadata quote the caller's own text (ids, names), which may be megabytes long;
gRPC refuses trailing metadata past 8-16 KiB, and the caller would get RESOURCE_EXHAUSTED
instead of the error. So every quoted part is an ``excerpt``: past ``EXCERPT_BYTES`` (a
reason: ``REASON_BYTES``), its head and tail around ``…(N bytes)…``. ``error_text`` is that
bounded message, for the status and for the logs alike.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

import grpc
from kassign.assignor.errors import (
    Interrupted,
    InvalidAssignment,
    InvalidRequest,
    KassignError,
    SolverError,
    invalid_request_text,
)
from kassign.server.limits import LIMIT_OPTIONS, LimitExceeded

__all__ = [
    "ASSIGNMENT_CODE_TABLE",
    "EXCERPT_BYTES",
    "REASON_BYTES",
    "STATUS_TABLE",
    "MappedStatus",
    "error_text",
    "excerpt",
    "to_status",
]

log = logging.getLogger(__name__)

STATUS_TABLE: dict[type[BaseException], grpc.StatusCode] = {
    InvalidRequest: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidAssignment: grpc.StatusCode.INTERNAL,
    SolverError: grpc.StatusCode.INTERNAL,
    KassignError: grpc.StatusCode.INTERNAL,
}
"""Error class -> status code. Classes not here (or whose bases are not) become INTERNAL."""

ASSIGNMENT_CODE_TABLE: dict[object, grpc.StatusCode] = {
    "KAFKA_NULL_POINTER": grpc.StatusCode.FAILED_PRECONDITION,
}
"""``InvalidAssignment.code`` -> status code, for codes that are not a server-side fault."""

_EXPLAINED = (InvalidRequest, InvalidAssignment, SolverError)
"""Errors whose message is safe and useful to show the caller as is."""
EXCERPT_BYTES = 256
"""UTF-8 bytes of an id or field path quoted whole; Kafka's generated member ids (client id,
thread, UUID) are about 100."""
REASON_BYTES = 512
"""UTF-8 bytes of an error's reason (or whole message) quoted whole."""


class CallEnded(Interrupted):
    """The caller is gone: its deadline passed or it cancelled. Raised between phases and at
    the library's checkpoints inside them (an ``Interrupted``, which the assignors let through),
    so the work stops there instead of going on for nobody; answered with ``code``, logged at
    INFO (nothing is wrong with the server)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class MappedStatus:
    code: grpc.StatusCode
    message: str
    metadata: tuple[tuple[str, str], ...] = ()


def _code_for(exc: BaseException) -> grpc.StatusCode | None:
    for cls in type(exc).__mro__:
        if cls in STATUS_TABLE:
            return STATUS_TABLE[cls]
    return None


def excerpt(text: str, limit: int = EXCERPT_BYTES) -> str:
    """``text`` if it fits ``limit`` UTF-8 bytes; else its head and tail around ``…(N bytes)…``.

    Head and tail both: ids often differ only at the end (Kafka's member ids end in a UUID).
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    head = data[: limit * 3 // 4].decode("utf-8", "ignore")
    tail = data[len(data) - limit // 4 :].decode("utf-8", "ignore")
    return f"{head}…({len(data)} bytes)…{tail}"


def error_text(exc: BaseException) -> str:
    """The message of ``exc`` with every part the caller wrote shortened to an ``excerpt``."""
    if isinstance(exc, InvalidRequest):
        member = None if exc.member is None else excerpt(exc.member)
        reason = excerpt(exc.reason, REASON_BYTES)
        return invalid_request_text(reason, field=excerpt(exc.field), member=member)
    return excerpt(str(exc), REASON_BYTES)


def to_status(exc: BaseException) -> MappedStatus:
    """The status a caller gets for ``exc``; unexpected errors are logged with a request id."""
    if isinstance(exc, CallEnded):
        log.info("call ended: %s", exc)
        return MappedStatus(exc.code, str(exc))
    code = _code_for(exc)
    if isinstance(exc, InvalidRequest):
        meta = [("kassign-field", _ascii(excerpt(exc.field)))]
        if exc.member is not None:
            meta.append(("kassign-member", _ascii(excerpt(exc.member))))
        if isinstance(exc, LimitExceeded):
            meta.append(("kassign-limit", LIMIT_OPTIONS[exc.limit]))
        return MappedStatus(grpc.StatusCode.INVALID_ARGUMENT, error_text(exc), tuple(meta))
    if isinstance(exc, InvalidAssignment) and exc.code in ASSIGNMENT_CODE_TABLE:
        reason = (("kassign-reason", _ascii(excerpt(str(exc.code)))),)
        return MappedStatus(ASSIGNMENT_CODE_TABLE[exc.code], error_text(exc), reason)
    if code is not None and isinstance(exc, _EXPLAINED):
        request_id = _log_with_id(exc, expected=True)
        return MappedStatus(
            code,
            f"{error_text(exc)} (request id {request_id})",
            (("kassign-request-id", request_id),),
        )
    request_id = _log_with_id(exc, expected=False)
    return MappedStatus(
        code or grpc.StatusCode.INTERNAL,
        f"internal error (request id {request_id})",
        (("kassign-request-id", request_id),),
    )


def _log_with_id(exc: BaseException, *, expected: bool) -> str:
    request_id = uuid.uuid4().hex[:16]
    if expected:
        log.error("request %s failed: %s", request_id, error_text(exc))
    else:
        log.error("request %s failed unexpectedly", request_id, exc_info=exc)
    return request_id


def _ascii(text: str) -> str:
    """gRPC metadata values must be printable ASCII; escape anything else."""
    return text.encode("unicode_escape").decode("ascii")
