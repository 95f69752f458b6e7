"""decode_request: clients from members, Kafka's defaults, and InvalidRequest for every bad input."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import RackAwareStrategy, TaskId
from kassign.kafka.consumer_protocol import encode_consumer_subscription
from kassign.kafka.subscription_info import encode_subscription_info
from kassign.server.streams.decode import decode_request
from kassign.server.streams.decode.configs import MAX_STANDBY_REPLICAS
from kassign.server.streams.decode.kafka_bytes import info_to_pb
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb, subscription_from_pb

from tests.kafka.strategies import subscription_infos
from tests.server.test_vectors import VECTORS

P1 = "f0e1d2c3-b4a5-4697-8899-aabbccddeeff"  # negative halves: sorts before P2 in Java order
P2 = "00000000-0000-0001-0000-000000000002"


def task(sub: int, part: int, *, stateful: bool = True, end: int = 100) -> pb.TaskInfo:
    source = pb.TaskTopicPartition(topic=f"in-{sub}", partition=part, is_source=True)
    return pb.TaskInfo(
        id=pb.TaskId(subtopology=sub, partition=part),
        stateful=stateful,
        topic_partitions=[source],
        changelog_end_offset_sum=end if stateful else 0,
    )


def info(process: str = P1, **fields: Any) -> pb.SubscriptionInfo:
    sums = fields.pop("sums", {})
    fields = {"version": 11, "latest_supported_version": 11, **fields}
    message = pb.SubscriptionInfo(process_id=process, **fields)
    for (sub, part), offset_sum in sums.items():
        message.task_offset_sums.add(
            task=pb.TaskId(subtopology=sub, partition=part), offset_sum=offset_sum
        )
    return message


def member(
    mid: str,
    process: str = P1,
    *,
    owned: tuple[tuple[str, int], ...] = (),
    rack: str = "",
    **fields: Any,
) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(
        topics=["in-0", "in-1"],
        owned_partitions=[pb.TopicPartition(topic=t, partition=p) for t, p in owned],
        rack_id=rack,
        info=info(process, **fields),
    )
    return pb.MemberSubscription(member_id=mid, subscription=sub)


def request(
    *members: pb.MemberSubscription, tasks: list[pb.TaskInfo] | None = None, **configs: Any
) -> pb.AssignRequest:
    return pb.AssignRequest(
        group_id="g",
        members=list(members),
        tasks=[task(0, 0), task(0, 1), task(1, 0, stateful=False)] if tasks is None else tasks,
        configs=pb.AssignmentConfigs(**configs),
    )


def invalid(req: pb.AssignRequest) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as err:
        decode_request(req, now_ms=1)
    return err.value


# --- clients and consumers ---------------------------------------------------------------------


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


def test_v1_to_v6_task_lists_read_as_active_and_unknown() -> None:
    old = pb.SubscriptionInfo(
        version=6,
        latest_supported_version=11,
        process_id=P1,
        prev_tasks=[pb.TaskId(subtopology=0, partition=0)],
        standby_tasks=[pb.TaskId(subtopology=0, partition=1)],
    )
    req = request(
        pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription(info=old))
    )
    client = decode_request(req, now_ms=0).state.clients[UUID(P1)]
    assert client.previous_active_tasks == {TaskId(0, 0)}
    assert dict(client.task_lags) == {TaskId(0, 0): -2, TaskId(0, 1): -3}


def test_host_rack_and_tags_reach_the_client() -> None:
    tags = [pb.ClientTag(key="zone", value="z1"), pb.ClientTag(key="cluster", value="c1")]
    req = request(member("a", rack="r1", user_end_point="host:9092", client_tags=tags))
    client = decode_request(req, now_ms=0).state.clients[UUID(P1)]
    assert (client.rack_id, client.host_info) == ("r1", "host:9092")
    assert dict(client.client_tags) == {"cluster": "c1", "zone": "z1"}


def test_defaults_are_kafkas() -> None:
    configs = decode_request(request(member("a")), now_ms=0).state.configs
    assert configs.assignor == "high_availability"
    assert (configs.acceptable_recovery_lag, configs.max_warmup_replicas) == (10_000, 2)
    assert (configs.num_standby_replicas, configs.probing_rebalance_interval_ms) == (0, 600_000)
    assert configs.rack_aware_strategy is RackAwareStrategy.NONE
    assert configs.traffic_cost is None and configs.assignment_time_budget_ms is None


def test_set_configs_are_kept() -> None:
    req = request(
        member("a"),
        assignor="sticky",
        acceptable_recovery_lag=0,
        max_warmup_replicas=1,
        num_standby_replicas=2,
        probing_rebalance_interval_ms=60_000,
        rack_aware_assignment_tags=["zone"],
        rack_aware_strategy=pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC,
        traffic_cost=0,
        non_overlap_cost=3,
        assignment_time_budget_ms=250,
    )
    c = decode_request(req, now_ms=0, default_budget_ms=999).state.configs
    assert (
        c.assignor,
        c.acceptable_recovery_lag,
        c.max_warmup_replicas,
        c.num_standby_replicas,
    ) == ("sticky", 0, 1, 2)
    assert c.rack_aware_assignment_tags == ("zone",)
    assert c.rack_aware_strategy is RackAwareStrategy.MIN_TRAFFIC
    assert (c.traffic_cost, c.non_overlap_cost, c.assignment_time_budget_ms) == (0, 3, 250)


def test_no_tasks_is_a_valid_empty_topology() -> None:
    decoded = decode_request(request(member("a", sums={(0, 0): 5}), tasks=[]), now_ms=0)
    assert dict(decoded.state.tasks) == {}
    assert "ignored offset sums of 1 task(s)" in decoded.notes[0]


# --- what Kafka ignores, we ignore and note ------------------------------------------------------


def test_unknown_tasks_and_partitions_are_ignored_with_a_note() -> None:
    decoded = decode_request(
        request(member("a", owned=(("gone", 3),), sums={(0, 0): 1, (7, 7): 5})), now_ms=0
    )
    client = decoded.state.clients[UUID(P1)]
    assert client.previous_tasks == {TaskId(0, 0)}
    assert any("7_7" in n and "member 'a'" in n for n in decoded.notes)
    assert any("gone-3" in n for n in decoded.notes)


def test_partition_owned_by_two_members_is_noted() -> None:
    decoded = decode_request(
        request(member("a", owned=(("in-0", 0),)), member("b", P2, owned=(("in-0", 0),))), now_ms=0
    )
    assert any("in-0-0 is owned by members a, b" in n for n in decoded.notes)


def test_a_member_without_rack_leaves_the_client_rack_unknown() -> None:
    decoded = decode_request(request(member("a", rack="r1"), member("b")), now_ms=0)
    assert decoded.state.clients[UUID(P1)].rack_id is None
    assert any("report no rack" in n for n in decoded.notes)


def test_error_code_is_noted() -> None:
    decoded = decode_request(request(member("a", error_code=4)), now_ms=0)
    assert "member 'a' reported error code 4" in decoded.notes


# --- bad input ---------------------------------------------------------------------------------

RAW_NULL_USER_DATA = encode_consumer_subscription(
    subscription_from_pb(pb.ConsumerSubscription(topics=["t"]))
)


@pytest.mark.parametrize(
    ("req", "field", "who", "says"),
    [
        (request(), "members", None, "at least one member"),
        (request(member("a"), member("a", P2)), "members[1].member_id", "a", "duplicate"),
        (request(member("")), "member_id", None, "empty"),
        (request(pb.MemberSubscription(member_id="a")), "kind", "a", "neither"),
        (
            request(pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription())),
            "subscription.info",
            "a",
            "no Kafka Streams userData",
        ),
        (
            request(pb.MemberSubscription(member_id="a", raw_subscription=RAW_NULL_USER_DATA)),
            "raw_subscription.user_data",
            "a",
            "userData",
        ),
        (
            request(pb.MemberSubscription(member_id="a", raw_subscription=b"\x00")),
            "raw_subscription",
            "a",
            "truncated",
        ),
        (request(member("a", "not-a-uuid")), "subscription.info.process_id", "a", "not a UUID"),
        (request(member("a", "")), "subscription.info.process_id", "a", "missing"),
        (
            request(member("a", rack="r1"), member("b", rack="r2")),
            "subscription.rack_id",
            "b",
            "two racks",
        ),
        (
            request(member("a", user_end_point="h:1"), member("b", user_end_point="h:2")),
            "subscription.info.user_end_point",
            "b",
            "h:2",
        ),
        (
            request(member("a", client_tags=[pb.ClientTag(key="z", value="1")]), member("b")),
            "subscription.info.client_tags",
            "b",
            "client tags",
        ),
        (
            request(member("a", user_end_point="no-port")),
            "subscription.info.user_end_point",
            "a",
            "host:port",
        ),
        (request(member("a", sums={(0, 0): -1})), "subscription.info.task_offset_sums", "a", "-1"),
        (
            request(member("a", sums={(-1, 0): 5})),
            "subscription.info.task_offset_sums",
            "a",
            "negative",
        ),
        (request(member("a", version=12)), "subscription.info.version", "a", "newer than 11"),
        (request(member("a", version=0)), "subscription.info.version", "a", "unknown"),
        (
            request(member("a", latest_supported_version=9)),
            "subscription.info.latest_supported_version",
            "a",
            "below",
        ),
        (request(member("a", unique_field=300)), "subscription.info.unique_field", "a", "byte"),
        (
            request(member("a", owned=(("t", 1), ("t", 1)))),
            "subscription.owned_partitions",
            "a",
            "twice",
        ),
        (
            request(member("a"), tasks=[task(0, 0), task(0, 0)]),
            "tasks[1].id",
            None,
            "duplicate task id 0_0",
        ),
        (request(member("a"), tasks=[pb.TaskInfo()]), "tasks[0].id", None, "missing"),
        (
            request(member("a"), tasks=[task(0, 0, end=-5)]),
            "tasks[0].changelog_end_offset_sum",
            None,
            "negative",
        ),
        (
            request(member("a"), acceptable_recovery_lag=-1),
            "configs.acceptable_recovery_lag",
            None,
            "at least 0",
        ),
        (
            request(member("a"), max_warmup_replicas=0),
            "configs.max_warmup_replicas",
            None,
            "at least 1",
        ),
        (
            request(member("a"), num_standby_replicas=-1),
            "configs.num_standby_replicas",
            None,
            "between",
        ),
        (
            request(member("a"), num_standby_replicas=MAX_STANDBY_REPLICAS + 1),
            "configs.num_standby_replicas",
            None,
            "between",
        ),
        (
            request(member("a"), probing_rebalance_interval_ms=59_999),
            "configs.probing_rebalance_interval_ms",
            None,
            "at least 60000",
        ),
        (
            request(member("a"), rack_aware_assignment_tags=list("abcdef")),
            "configs.rack_aware_assignment_tags",
            None,
            "at most 5",
        ),
        (
            request(member("a"), rack_aware_strategy=99),
            "configs.rack_aware_strategy",
            None,
            "unknown",
        ),
        (request(member("a"), assignor="nope"), "configs.assignor", None, "unknown assignor"),
        (
            request(member("a"), assignment_time_budget_ms=0),
            "configs.assignment_time_budget_ms",
            None,
            "between",
        ),
        (request(member("a"), traffic_cost=-1), "configs.traffic_cost", None, "between"),
        (
            request(member("a"), non_overlap_cost=2**20 + 1),
            "configs.non_overlap_cost",
            None,
            "between",
        ),
    ],
)
def test_bad_input_names_field_and_member(
    req: pb.AssignRequest, field: str, who: str | None, says: str
) -> None:
    err = invalid(req)
    assert (err.field, err.member) == (field, who)
    assert says in str(err)


def test_duplicate_offset_sum_and_source_partition() -> None:
    twice = member("a")
    twice.subscription.info.task_offset_sums.add(
        task=pb.TaskId(subtopology=0, partition=0), offset_sum=1
    )
    twice.subscription.info.task_offset_sums.add(
        task=pb.TaskId(subtopology=0, partition=0), offset_sum=2
    )
    assert "reported twice" in str(invalid(request(twice)))
    shared = task(0, 1)
    shared.topic_partitions[0].CopyFrom(task(0, 0).topic_partitions[0])
    err = invalid(request(member("a"), tasks=[task(0, 0), shared]))
    assert err.field == "tasks[1].topic_partitions" and "also feeds task 0_0" in str(err)


def test_versions_that_cannot_carry_a_field_refuse_it() -> None:
    named = member("a", version=9)
    named.subscription.info.task_offset_sums.add(
        task=pb.TaskId(subtopology=0, partition=0, named_topology="x")
    )
    assert "named topology" in str(invalid(request(named)))
    lists = member("a", version=7, prev_tasks=[pb.TaskId(subtopology=0, partition=0)])
    assert invalid(request(lists)).field == "subscription.info.prev_tasks"
    tags = member("a", version=10, client_tags=[pb.ClientTag(key="k", value="v")])
    assert "need version 11" in str(invalid(request(tags)))


def test_negative_generation_and_time() -> None:
    m = member("a")
    m.subscription.generation_id = -5
    assert invalid(request(m)).field == "subscription.generation_id"
    m.subscription.generation_id = -1  # Kafka's "unknown"
    assert decode_request(request(m), now_ms=0).members[0].generation_id is None
    req = request(member("a"))
    req.now_ms = -1
    assert invalid(req).field == "now_ms"


def test_bytes_errors_name_the_byte_offset() -> None:
    good = encode_subscription_info(info_from_pb(info()))
    for data, says in [
        (good[:-1], "truncated"),
        (good + b"\x00", "trailing"),
        (b"\x00\x00\x00\x0c\x00\x00\x00\x0d", "12"),
    ]:
        m = pb.MemberSubscription(
            member_id="a", subscription=pb.ConsumerSubscription(info_bytes=data)
        )
        err = invalid(request(m))
        assert err.member == "a" and says in str(err)
        assert err.field == "subscription.info_bytes" + (".version" if says == "12" else "")


def test_future_version_names_its_latest_supported_version() -> None:
    data = b"\x00\x00\x00\x0c\x00\x00\x00\x0d" + bytes(30)
    m = pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription(info_bytes=data))
    assert "version 12 (latest supported 13)" in str(invalid(request(m)))


# --- the same request, structured or in Kafka's bytes -------------------------------------------


def _three_ways(message: pb.SubscriptionInfo) -> list[pb.AssignRequest]:
    structured = pb.ConsumerSubscription(
        topics=["in-0"],
        owned_partitions=[pb.TopicPartition(topic="in-0", partition=1)],
        generation_id=3,
        rack_id="r",
    )
    structured.info.CopyFrom(message)
    as_bytes = pb.ConsumerSubscription()
    as_bytes.CopyFrom(structured)
    as_bytes.info_bytes = encode_subscription_info(info_from_pb(message))
    raw = encode_consumer_subscription(subscription_from_pb(structured))
    return [
        request(pb.MemberSubscription(member_id="a", subscription=structured)),
        request(pb.MemberSubscription(member_id="a", subscription=as_bytes)),
        request(pb.MemberSubscription(member_id="a", raw_subscription=raw)),
    ]


def _outcome(req: pb.AssignRequest) -> object:
    try:
        decoded = decode_request(req, now_ms=7)
    except InvalidRequest as exc:
        return ("invalid", exc.member, exc.reason)
    state = decoded.state
    clients = [(c, dict(c.task_lags)) for c in state.clients.values()]
    return (
        state.tasks,
        [
            (
                c.process_id,
                c.consumers,
                c.previous_active_tasks,
                c.previous_standby_tasks,
                c.rack_id,
                c.host_info,
                dict(c.client_tags),
                lags,
            )
            for c, lags in clients
        ],
        decoded.members,
        decoded.notes,
    )


@pytest.mark.parametrize("version", [1, 2, 6, 7, 9, 10, 11])
def test_structured_and_bytes_give_the_same_state(version: int) -> None:
    message = info(
        P2, sums={(0, 0): -2, (0, 1): 30, (4, 4): 1}, user_end_point="h:1" if version >= 2 else ""
    )
    message.version = version
    if version >= 8:
        message.unique_field = 3
    outcomes = [_outcome(r) for r in _three_ways(message)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert outcomes[0][0] != "invalid"


@pytest.mark.parametrize("version", [7, 10])
def test_offset_sums_listed_out_of_task_order_decode_like_the_bytes_kafka_groups(
    version: int,
) -> None:
    # Kafka's v7+ encoder groups offset sums by sub-topology, so bytes never keep a listing
    # like this one; the member must not depend on how the sums were listed.
    message = info(P2, sums={(1, 1): -2, (0, 0): -2, (1, 0): 40})
    message.version = version
    outcomes = [_outcome(r) for r in _three_ways(message)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    (member,) = outcomes[0][2]
    assert [str(t) for t, _ in member.offset_sums] == ["0_0", "1_0", "1_1"]


@settings(max_examples=150, deadline=None)
@given(subscription_infos() | subscription_infos(plausible=True))
def test_any_info_decodes_the_same_structured_or_as_bytes(data: Any) -> None:
    message = info_to_pb(data)
    try:
        ways = _three_ways(message)
    except (ValueError, UnicodeError):
        return  # not encodable by Kafka's encoder either (named topology before v10, ...)
    outcomes = [_outcome(r) for r in ways]
    assert outcomes[0] == outcomes[1] == outcomes[2]


# --- never a crash -----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=120), as_info=st.booleans())
def test_random_bytes_are_a_request_or_invalid_request(raw: bytes, as_info: bool) -> None:
    m = (
        pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription(info_bytes=raw))
        if as_info
        else pb.MemberSubscription(member_id="a", raw_subscription=raw)
    )
    try:
        decode_request(request(m), now_ms=0)
    except InvalidRequest:
        pass


@settings(max_examples=200, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 500), st.integers(0, 255)), min_size=1, max_size=3))
def test_mutated_kafka_bytes_are_a_request_or_invalid_request(edits: list[tuple[int, int]]) -> None:
    data = bytearray((VECTORS / "consumer_subscription_v3.bin").read_bytes())
    for index, value in edits:
        data[index % len(data)] = value
    try:
        decode_request(
            request(pb.MemberSubscription(member_id="a", raw_subscription=bytes(data))), now_ms=0
        )
    except InvalidRequest:
        pass


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


@pytest.mark.parametrize(
    ("topic", "partition", "says"), [("", 0, "topic is empty"), ("in-9", -1, "negative partition")]
)
def test_a_bad_task_partition_names_its_task_and_position(
    topic: str, partition: int, says: str
) -> None:
    bad = task(1, 0)
    bad.topic_partitions.add(topic=topic, partition=partition)
    err = invalid(request(member("a"), tasks=[task(0, 0), bad]))
    assert err.field == "tasks[1].topic_partitions[1]" and says in str(err)
