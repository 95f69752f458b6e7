"""decode/request.py: members grouped into clients, previous tasks and lags, per-process checks."""

from __future__ import annotations

from uuid import UUID

from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import TaskId
from kassign.kafka.consumer_protocol import encode_consumer_subscription
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import subscription_from_pb

from tests.server.streams.decode.builders import (
    P1,
    P2,
    invalid,
    member,
    request,
)


def test_members_of_one_process_are_one_client_with_a_consumer_each() -> None:
    decoded = decode_request(
        request(member("b", P1), member("a", P1), member("c", P2)), now_ms=42, default_budget_ms=500
    )
    state = decoded.state
    assert list(state.clients) == sorted([UUID(P1), UUID(P2)], key=process_key)
    assert state.clients[UUID(P1)].consumer_ids == ("a", "b")
    assert [m.member_id for m in decoded.members] == ["a", "b", "c"]
    assert state.now_ms == 42 and state.configs.assignment_time_budget_ms == 500
    assert list(state.tasks) == [TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)]


def test_previous_tasks_and_lags_come_from_owned_partitions_and_offset_sums() -> None:
    decoded = decode_request(
        request(
            member("a", P1, owned=(("in-0", 0), ("in-1", 0)), sums={(0, 0): -2, (0, 1): 60}),
            member("b", P2, sums={(0, 1): -2}),
        ),
        now_ms=0,
    )
    first, second = decoded.state.clients[UUID(P1)], decoded.state.clients[UUID(P2)]
    assert first.previous_active_tasks == {TaskId(0, 0), TaskId(1, 0)}
    assert first.previous_standby_tasks == {TaskId(0, 1)}
    assert dict(first.task_lags) == {TaskId(0, 0): -2, TaskId(0, 1): 40}
    assert first.consumers[0].previous_active == {TaskId(0, 0), TaskId(1, 0)}
    assert first.consumers[0].previous_stateful == {TaskId(0, 0), TaskId(0, 1)}
    # No owned partitions (consumer protocol v0, say): the member's own -2 tasks stand in.
    assert second.consumers[0].previous_active == {TaskId(0, 1)}
    assert dict(second.task_lags) == {TaskId(0, 0): 100, TaskId(0, 1): -2}


def test_partition_owned_by_two_members_is_noted() -> None:
    decoded = decode_request(
        request(member("a", owned=(("in-0", 0),)), member("b", P2, owned=(("in-0", 0),))), now_ms=0
    )
    assert any("in-0-0 is owned by members a, b" in n for n in decoded.notes)


def test_a_member_without_rack_leaves_the_client_rack_unknown() -> None:
    decoded = decode_request(request(member("a", rack="r1"), member("b")), now_ms=0)
    assert decoded.state.clients[UUID(P1)].rack_id is None
    assert any("report no rack" in n for n in decoded.notes)


def test_conflicts_found_per_process_name_the_raw_field() -> None:
    def raw(mid: str, rack: str, end_point: str) -> pb.MemberSubscription:
        sub = member(mid, rack=rack, user_end_point=end_point).subscription
        data = encode_consumer_subscription(subscription_from_pb(sub))
        return pb.MemberSubscription(member_id=mid, raw_subscription=data)

    err = invalid(request(raw("a", "r1", "h:1"), raw("b", "r2", "h:1")))
    assert (err.field, err.member) == ("raw_subscription.rack_id", "b")
    err = invalid(request(raw("a", "r1", "h:1"), raw("b", "r1", "h:2")))
    assert (err.field, err.member) == ("raw_subscription.user_data.user_end_point", "b")


def test_threads_sending_one_info_are_checked_once_and_agree() -> None:
    """The per-request info cache: one checked userData per process, the same state either way."""
    same = {"sums": {(0, 0): -2, (0, 1): 40}, "user_end_point": "h:1"}
    two = decode_request(request(member("a", **same), member("b", **same)), now_ms=1)
    one = decode_request(request(member("a", **same)), now_ms=1)
    (client,) = two.state.clients.values()
    assert dict(client.task_lags) == dict(next(iter(one.state.clients.values())).task_lags)
    assert [c.previous_stateful for c in client.consumers] == [
        frozenset({TaskId(0, 0), TaskId(0, 1)})
    ] * 2


def test_a_bad_info_sent_by_two_threads_names_the_first_and_owned_checks_keep_their_turn() -> None:
    bad = {"sums": {(0, 0): -7}}
    assert invalid(request(member("a", **bad), member("b", **bad))).member == "a"
    # "b" shares "a"'s good info but owns a partition twice: its own error, not a cached pass
    owned_twice = (("in-0", 0), ("in-0", 0))
    err = invalid(request(member("a"), member("b", owned=owned_twice)))
    assert err.member == "b" and err.field.endswith("owned_partitions")
