"""The two fields of a response that vary between runs of one request, for both rooms.

Every ``AssignResponse`` and ``ConsumerAssignResponse`` is the same bytes for the same request but
for its report's ``assign_seconds`` and ``total_seconds``: ``set_timings`` fills them once a call
is done, ``without_timings`` / ``canonical_bytes`` compare responses without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["Timings", "canonical_bytes", "set_timings", "without_timings"]

_Response = TypeVar("_Response", pb.AssignResponse, cpb.ConsumerAssignResponse)


@dataclass(frozen=True, slots=True)
class Timings:
    """Wall time of the assign phase and of the whole call, in seconds."""

    assign_seconds: float
    total_seconds: float


def set_timings(response: _Response, timings: Timings) -> None:
    response.report.assign_seconds = timings.assign_seconds
    response.report.total_seconds = timings.total_seconds


def without_timings(response: _Response) -> _Response:
    """A copy with the timing fields cleared: what two runs of one request agree on."""
    copy = type(response)()
    copy.CopyFrom(response)
    copy.report.ClearField("assign_seconds")
    copy.report.ClearField("total_seconds")
    return copy


def canonical_bytes(response: _Response) -> bytes:
    """Deterministic serialisation without timings; equal for equal assignments."""
    data: bytes = without_timings(response).SerializeToString(deterministic=True)
    return data
