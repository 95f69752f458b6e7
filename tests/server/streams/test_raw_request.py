"""The servicer takes a Streams request as bytes, parses it itself and lets the message go once
decoded (issue 16): the same answer as from the message, the same refusal of a bad body, and
observers told of its head only."""

from __future__ import annotations

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.server.streams.servicer import NullObserver, assign_request
from kassign.server.timings import canonical_bytes
from kassign.v1 import assignment_pb2 as pb

from tests.server.requests import group


class _Heads(NullObserver):
    def __init__(self) -> None:
        self.seen: list[pb.AssignRequest] = []

    def on_decoded(self, request: pb.AssignRequest, decoded: object) -> None:
        self.seen.append(request)


def test_bytes_answer_as_the_message_does() -> None:
    request = group(clients=4, threads=2)
    request.group_id = "orders-app"
    request.explain = True
    heads = _Heads()
    from_bytes = assign_request(request.SerializeToString(), observer=heads, clock_ms=lambda: 7)
    from_message = assign_request(request, clock_ms=lambda: 7)
    assert canonical_bytes(from_bytes.response) == canonical_bytes(from_message.response)
    (head,) = heads.seen
    assert head.group_id == "orders-app" and head.explain
    assert head.configs == request.configs
    assert not head.tasks and not head.members


def test_a_malformed_body_is_refused_naming_the_request() -> None:
    with pytest.raises(InvalidRequest, match="not a valid kassign.v1.AssignRequest") as caught:
        assign_request(b"\xff\xff\xff")
    assert caught.value.field == "request"
