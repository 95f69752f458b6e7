"""A ``ConsumerAssignResponse`` whose members are protobuf wire bytes, sent as they are.

``members_wire`` writes the members of a whole group as the bytes ``SerializeToString`` would
write for them. Parsed into the response and serialised again by gRPC, a million partitions
were written twice and parsed once more in between (issue 24: a third of a 1M-partition call).
So the servicer sends ``ConsumerWireResponse``: the members as those bytes (field 1) and the
rest as a message (``head``: report, explanation, fields 2 and 3), ``members + head`` being
the whole response's serialisation byte for byte, as the Streams room's ``WireResponse`` does
(a test compares it with ``message().SerializeToString()``). Callers that read the members
(the CLI, tests) ask ``message()``.

    ConsumerAssignResponse: 1 members, 2 report, 3 explanation
"""

from __future__ import annotations

from dataclasses import dataclass

from kassign.v1 import consumer_pb2 as cpb

__all__ = ["ConsumerWireResponse"]


@dataclass(frozen=True, slots=True)
class ConsumerWireResponse:
    """The answer as ``members`` (wire bytes of field 1) and ``head`` (report, explanation)."""

    members: bytes
    head: cpb.ConsumerAssignResponse

    @property
    def report(self) -> cpb.ConsumerAssignmentReport:
        return self.head.report

    def SerializeToString(self, *, deterministic: bool = False) -> bytes:  # grpc calls this name
        """The response's bytes: the members (field 1), then the head (fields 2 and 3)."""
        return self.members + self.head.SerializeToString(deterministic=deterministic)

    def message(self) -> cpb.ConsumerAssignResponse:
        """The whole response as a message (for callers that read the members)."""
        response = cpb.ConsumerAssignResponse.FromString(self.members)
        response.MergeFrom(self.head)
        return response
