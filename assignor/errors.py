"""The errors of the assignor library, one tree, mapped to gRPC status codes once at the edge.

KassignError
├── InvalidRequest(field, member)   the input cannot be assigned as given
├── InvalidAssignment(code)         an assignor returned something KIP-924 forbids
├── SolverError(status)             the min-cost-flow solver did not reach an optimum
└── Interrupted                     the caller's check stopped the work (kassign.assignor.interrupt)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "Interrupted",
    "InvalidAssignment",
    "InvalidRequest",
    "KassignError",
    "SolverError",
    "invalid_request_text",
    "unknown_name",
]


def invalid_request_text(reason: str, *, field: str, member: str | None) -> str:
    """An ``InvalidRequest``'s message: where (member, field), then what is wrong.

    One function, so the service edge can rebuild the message from shortened parts
    (``kassign.server.status``) and still read as the library's.
    """
    where = field if member is None else f"member {member!r}: {field}"
    return f"{where}: {reason}"


class KassignError(Exception):
    """Base of every error this library raises on purpose."""


class InvalidRequest(KassignError):
    """Bad input: names the field and, where there is one, the member that sent it."""

    def __init__(self, message: str, *, field: str, member: str | None = None) -> None:
        super().__init__(invalid_request_text(message, field=field, member=member))
        self.field = field
        self.member = member
        self.reason = message


class InvalidAssignment(KassignError):
    """An assignor's result failed validation; ``code`` is the KIP-924 AssignmentError."""

    def __init__(self, code: object, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class SolverError(KassignError):
    """The flow solver ended with a status other than OPTIMAL (or ran out of its budget)."""

    def __init__(self, status: str, message: str = "") -> None:
        super().__init__(f"solver status {status}" + (f": {message}" if message else ""))
        self.status = status


class Interrupted(KassignError):
    """The caller stopped the work (its caller left): raised by the check a caller hands to
    ``kassign.assignor.interrupt.checked``, never by the library itself."""


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """ "unknown assignor 'rack_optimal'; did you mean 'rack-optimal'? (known: ...)": each name
    has one spelling (Streams' assignors take ``_``, consumer ones ``-``, as Kafka's do), so the
    other spelling, another case or a near miss is answered with the one meant."""
    names = sorted(known)
    folded = {n.replace("_", "-").lower(): n for n in names}
    meant = folded.get(name.replace("_", "-").lower())
    if meant is None:
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        meant = close[0] if close else None
    hint = f"; did you mean {meant!r}?" if meant is not None else ""
    return f"unknown {kind} {name!r}{hint} (known: {', '.join(names)})"
