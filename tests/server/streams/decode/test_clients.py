"""decode/clients.py: what a group's clients share (issue 24: no object per fresh client where
one empty one serves), besides what ``test_request.py`` asserts of their values."""

from __future__ import annotations

from uuid import UUID

from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode import decode_request

from tests.server.streams.decode.builders import P1, P2, member, request

P3 = "00000000-0000-0001-0000-000000000003"


def test_fresh_clients_share_their_empty_lags_sets_and_equal_tags() -> None:
    zone = [{"key": "zone", "value": "a"}]
    decoded = decode_request(
        request(
            member("a", P1, client_tags=zone),
            member("b", P2, client_tags=zone),
            member("c", P3),
        ),
        now_ms=0,
    )
    a, b, c = (decoded.state.clients[UUID(p)] for p in (P1, P2, P3))
    assert a.task_lags is b.task_lags is c.task_lags
    assert dict(a.task_lags) == {TaskId(0, 0): 100, TaskId(0, 1): 100}
    assert a.client_tags is b.client_tags and a.client_tags == {"zone": "a"}
    assert c.client_tags == {}
    assert not a.previous_tasks and not a.consumers[0].previous_stateful


def test_the_consumers_of_one_userdata_share_its_read() -> None:
    sums = {(0, 0): -2, (0, 1): 30}
    decoded = decode_request(
        request(member("a", P1, sums=sums), member("b", P1, sums=sums), member("c", P2, sums=sums)),
        now_ms=0,
    )
    one, other = decoded.state.clients[UUID(P1)], decoded.state.clients[UUID(P2)]
    first, second = one.consumers
    assert first.previous_stateful == {TaskId(0, 0), TaskId(0, 1)}
    assert first.previous_stateful is second.previous_stateful  # one read of one userData
    assert one.previous_active_tasks == {TaskId(0, 0)}
    assert dict(one.task_lags) == dict(other.task_lags) == {TaskId(0, 0): -2, TaskId(0, 1): 70}
    assert one.task_lags is not other.task_lags  # their own, though equal
