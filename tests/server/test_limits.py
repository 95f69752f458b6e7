"""Per-request limits (issue 16): counted before decoding, refused naming the limit.

A request's cost grows with what it counts, so each count has a limit (``RequestLimits``, the
``kassign serve`` options ``--max-*``), checked before anything is decoded, for structured
fields and Kafka's bytes alike; and the answer's size is estimated before the assignor runs.
Each case here sits one past its limit (refused) and at it (answered). Before these limits a
15 MB raw subscription of 4 million owned partitions was decoded (38 s, 2.7 GB) and an answer 100
times its request was computed, then refused by gRPC as RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from uuid import UUID

import grpc
import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import (
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    TaskOffsetSum,
    WireTaskId,
    encode_subscription_info,
)
from kassign.server.consumer.decode import decode_request as decode_consumer
from kassign.server.consumer.limits import answer_bytes as consumer_answer_bytes
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.limits import LIMIT_OPTIONS, LimitExceeded, RequestLimits
from kassign.server.streams.decode import decode_request
from kassign.server.streams.decode.limits import answer_bytes
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import build, consumer

from tests.server.consumer.requests import racked_group
from tests.server.requests import group
from tests.server.running import in_process

SMALL = RequestLimits(
    members=8,
    tasks=16,
    partitions=48,
    owned_partitions=30,
    reported_tasks=60,
    string_bytes=64,
    answer_bytes=1 << 20,
)
"""Limits a little above ``group()`` (6 members, 12 tasks of 18 partitions, 24 reported
tasks) and ``racked_group`` (7 members, 29 partitions, 24 owned)."""


def _info(version: int, tasks: int) -> bytes:
    """A SubscriptionInfo of ``version`` reporting ``tasks`` tasks, in the version's layout."""
    process = UUID(int=7)
    if version <= 6:
        half = tasks // 2
        return encode_subscription_info(
            SubscriptionInfoData(
                version=version,
                process_id=process,
                latest_supported_version=version if version >= 3 else -1,
                prev_tasks=tuple(WireTaskId(0, p) for p in range(half)),
                standby_tasks=tuple(WireTaskId(1, p) for p in range(tasks - half)),
            )
        )
    sums = tuple(PartitionOffsetSum(p, 5) for p in range(tasks))
    return encode_subscription_info(
        SubscriptionInfoData(
            version=version,
            process_id=process,
            latest_supported_version=version,
            grouped_offset_sums=(SubtopologyOffsetSums(0, sums),) if version <= 9 else (),
            task_offset_sums=tuple(TaskOffsetSum(0, p, 5) for p in range(tasks))
            if version >= 10
            else (),
        )
    )


def _streams_member(member_id: str, info: bytes, owned: int, *, raw: bool) -> pb.MemberSubscription:
    sub = ConsumerProtocolSubscription(
        version=3,
        topics=("orders",),
        user_data=info,
        owned_partitions=(OwnedTopicPartitions("elsewhere", tuple(range(owned))),),
    )
    if raw:
        return pb.MemberSubscription(
            member_id=member_id, raw_subscription=encode_consumer_subscription(sub)
        )
    return pb.MemberSubscription(
        member_id=member_id,
        subscription=pb.ConsumerSubscription(
            topics=["orders"],
            owned_partitions=[
                pb.TopicPartition(topic="elsewhere", partition=p) for p in range(owned)
            ],
            info_bytes=info,
        ),
    )


def _with_member(request: pb.AssignRequest, member: pb.MemberSubscription) -> pb.AssignRequest:
    bigger = pb.AssignRequest()
    bigger.CopyFrom(request)
    del bigger.members[:]
    bigger.members.append(member)
    return bigger


# Each case: (the limit, a request at it, the same one past it).
StreamsCase = Callable[[int], pb.AssignRequest]


def _members(n: int) -> pb.AssignRequest:
    request = group(clients=2, threads=2)
    for i in range(n - 4):
        extra = request.members.add()
        extra.CopyFrom(request.members[0])
        extra.member_id = f"extra-{i}"
    return request


def _tasks(n: int) -> pb.AssignRequest:
    request = group()
    del request.tasks[n:]
    for p in range(len(request.tasks), n):
        request.tasks.append(build.task(2, p, source=["more"]))
    return request


def _partitions(n: int) -> pb.AssignRequest:
    request = group()
    have = sum(len(t.topic_partitions) for t in request.tasks)
    for p in range(n - have):
        request.tasks[0].topic_partitions.add(topic="extra", partition=p)
    return request


def _owned(raw: bool) -> StreamsCase:
    return lambda n: _with_member(group(), _streams_member("m", _info(11, 0), n, raw=raw))


def _reported(version: int, raw: bool) -> StreamsCase:
    return lambda n: _with_member(group(), _streams_member("m", _info(version, n), 0, raw=raw))


def _structured_reported(n: int) -> pb.AssignRequest:
    request = group(clients=1, threads=1)
    info = request.members[0].subscription.info
    del info.task_offset_sums[:]
    for p in range(n):
        info.task_offset_sums.add(task=pb.TaskId(subtopology=5, partition=p), offset_sum=3)
    return request


def _string(n: int) -> pb.AssignRequest:
    request = group()
    request.members[0].member_id = "m" * n
    return request


def _task_topic(n: int) -> pb.AssignRequest:
    request = group()
    request.tasks[-1].topic_partitions[0].topic = "t" * n
    return request


def _end_point(n: int) -> pb.AssignRequest:
    """A string inside Kafka's bytes: known only once decoded."""
    request = group(encoding="info_bytes")
    info = SubscriptionInfoData(
        version=11,
        process_id=UUID(int=9),
        latest_supported_version=11,
        user_end_point="h" * (n - 2) + ":1",
    )
    return _with_member(request, _streams_member("m", encode_subscription_info(info), 0, raw=True))


STREAMS: dict[str, tuple[str, StreamsCase]] = {
    "members": ("members", _members),
    "tasks": ("tasks", _tasks),
    "topic partitions": ("partitions", _partitions),
    "owned, structured": ("owned_partitions", _owned(raw=False)),
    "owned, raw subscription": ("owned_partitions", _owned(raw=True)),
    "reported, structured info": ("reported_tasks", _structured_reported),
    "reported, v6 task lists in info_bytes": ("reported_tasks", _reported(6, raw=False)),
    "reported, v9 grouped sums in a raw subscription": ("reported_tasks", _reported(9, raw=True)),
    "reported, v11 flat sums in info_bytes": ("reported_tasks", _reported(11, raw=False)),
    "member id": ("string_bytes", _string),
    "a task's topic": ("string_bytes", _task_topic),
    "end point inside Kafka's bytes": ("string_bytes", _end_point),
}


ConsumerCase = Callable[[int], cpb.ConsumerAssignRequest]


def _consumer_members(n: int) -> cpb.ConsumerAssignRequest:
    request = racked_group("range")
    for i in range(n - len(request.members)):
        request.members.append(consumer.member(f"extra-{i}", ["orders"]))
    return request


def _consumer_partitions(n: int) -> cpb.ConsumerAssignRequest:
    request = racked_group("range")
    have = sum(len(t.partitions) for t in request.topics)
    request.topics.append(consumer.topic("extra", [[]] * (n - have)))
    return request


def _consumer_owned(encoding: str) -> ConsumerCase:
    def case(n: int) -> cpb.ConsumerAssignRequest:
        request = racked_group("range")
        have = sum(len(m.subscription.owned_partitions) for m in request.members)
        owned = [("extra", p) for p in range(n - have)]
        request.topics.append(consumer.topic("extra", [[]] * 12))
        request.members.append(consumer.member("owner", ["extra"], owned=owned, encoding=encoding))  # type: ignore[arg-type]
        return request

    return case


def _consumer_topics(n: int) -> cpb.ConsumerAssignRequest:
    request = racked_group("range")
    request.members.append(consumer.member("wide", [f"t{i}" for i in range(n)], encoding="raw"))
    return request


def _consumer_rack(n: int) -> cpb.ConsumerAssignRequest:
    request = racked_group("range")
    request.members.append(consumer.member("far", ["orders"], rack="r" * n, encoding="raw"))
    return request


CONSUMER: dict[str, tuple[str, ConsumerCase]] = {
    "members": ("members", _consumer_members),
    "metadata partitions": ("partitions", _consumer_partitions),
    "subscribed topics, raw": ("partitions", _consumer_topics),
    "owned, structured": ("owned_partitions", _consumer_owned("structured")),
    "owned, raw subscription": ("owned_partitions", _consumer_owned("raw")),
    "rack inside Kafka's bytes": ("string_bytes", _consumer_rack),
}


def _decode_streams(request: object, limits: RequestLimits) -> None:
    decode_request(request, now_ms=1, limits=limits)  # type: ignore[arg-type]


def _decode_consumer(request: object, limits: RequestLimits) -> None:
    decode_consumer(request, limits)  # type: ignore[arg-type]


CASES: dict[str, tuple[str, Callable[[int], object], Callable[[object, RequestLimits], None]]] = {
    **{f"streams: {n}": (limit, case, _decode_streams) for n, (limit, case) in STREAMS.items()},
    **{f"consumer: {n}": (limit, case, _decode_consumer) for n, (limit, case) in CONSUMER.items()},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_requests_at_a_limit_pass_and_one_past_it_are_refused(name: str) -> None:
    limit, case, decode = CASES[name]
    allowed = getattr(SMALL, limit)
    decode(case(allowed), SMALL)  # at the limit: decoded
    past = case(allowed + 1)
    decode(past, replace(SMALL, **{limit: allowed * 100}))  # within a lifted limit: decoded
    with pytest.raises(LimitExceeded) as refused:
        decode(past, SMALL)
    assert refused.value.limit == limit and LIMIT_OPTIONS[limit] in str(refused.value)


class _Phases:
    """Which phases of a call completed."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_decoded(self, request: object, decoded: object) -> None:
        pass

    def on_phase(self, phase: str, seconds: float) -> None:
        self.seen.append(phase)

    def on_success(self, *args: object) -> None:
        pass

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        pass


def _refused(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    error = raised.value
    assert isinstance(error, grpc.RpcError)
    return error


BIG = [("grpc.max_send_message_length", 1 << 28), ("grpc.max_receive_message_length", 1 << 28)]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[grpc.Channel, _Phases, _Phases]]:
    """A server with the default limits but a 1 MiB largest message, and what it timed."""
    streams, consumers = _Phases(), _Phases()
    with (
        in_process(streams, consumer_observer=consumers, max_message_bytes=1 << 20) as (_, target),  # type: ignore[arg-type]
        grpc.insecure_channel(target, options=BIG) as channel,
    ):
        yield channel, streams, consumers


def test_the_issues_owned_partitions_are_refused_unread_by_a_default_server() -> None:
    """Issue 16's shape, scaled to the default limit: a raw subscription owning one partition
    more than ``--max-owned-partitions`` (4 MB) is refused naming the option, nothing decoded."""
    observed = _Phases()
    owned = RequestLimits().owned_partitions + 1
    request = _with_member(group(), _streams_member("m", _info(11, 0), owned, raw=True))
    with (
        in_process(observed) as (_, target),  # type: ignore[arg-type]
        grpc.insecure_channel(target, options=BIG) as channel,
    ):
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        error = _refused(lambda: stub.Assign(request, timeout=60))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    metadata = dict(error.trailing_metadata())  # type: ignore[arg-type]
    assert metadata["kassign-limit"] == "--max-owned-partitions"
    assert metadata["kassign-field"] == "members[0]" and metadata["kassign-member"] == "m"
    assert f"{owned:,} owned partitions" in (error.details() or "")
    assert observed.seen == []  # not even the decode phase completed


def _standby_heavy(tasks: int, clients: int) -> pb.AssignRequest:
    """Many standbys of many tasks: an answer far larger than its request (issue 16)."""
    members = [
        m
        for n in range(clients)
        for m in build.client(UUID(int=n + 1), threads=1, topics=["orders"])
    ]
    task_list = [build.task(0, p, source=["orders"], changelog=["c"]) for p in range(tasks)]
    configs = build.configs(num_standby_replicas=clients - 1)
    return build.request(members, task_list, configs=configs, now_ms=1)


def test_an_answer_past_the_largest_message_is_refused_before_the_assignor_runs(
    served: tuple[grpc.Channel, _Phases, _Phases],
) -> None:
    channel, observed, _ = served
    request = _standby_heavy(2_500, 20)  # 0.1 MB asking for a 1.1 MB answer
    observed.seen.clear()
    stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
    error = _refused(lambda: stub.Assign(request, timeout=60))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert dict(error.trailing_metadata())["kassign-limit"] == "--max-message-mb"  # type: ignore[arg-type]
    assert "1,048,576 bytes" in (error.details() or "")
    assert "assign" not in observed.seen
    answer = assign_request(request).response.ByteSize()
    assert answer > 1 << 20  # the refusal was right: this is the answer it would have sent


def test_a_consumer_answer_past_the_largest_message_is_refused_before_the_assignor_runs(
    served: tuple[grpc.Channel, _Phases, _Phases],
) -> None:
    channel, _, observed = served
    topic = "a-topic-with-a-long-name-" * 2
    request = consumer.request(
        [consumer.member(f"m{i}", [topic]) for i in range(4)],
        [consumer.topic(topic, [[]] * 40_000)],  # 2 bytes a partition: 0.1 MB
        assignor="range",
    )
    observed.seen.clear()
    stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
    error = _refused(lambda: stub.Assign(request, timeout=60))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert dict(error.trailing_metadata())["kassign-limit"] == "--max-message-mb"  # type: ignore[arg-type]
    assert "assign" not in observed.seen
    assert assign_consumer_request(request).response.ByteSize() > 1 << 20


ESTIMATED: dict[str, Callable[[], pb.AssignRequest]] = {
    "group": group,
    "no standbys, raw": lambda: group(standbys=0, encoding="raw"),
    "standby-heavy": lambda: _standby_heavy(300, 8),
}


@pytest.mark.parametrize("name", sorted(ESTIMATED))
def test_the_streams_estimate_is_at_most_the_answer_and_close_for_large_ones(name: str) -> None:
    request = ESTIMATED[name]()
    outcome = assign_request(request)
    estimate, actual = answer_bytes(outcome.decoded.state), outcome.response.ByteSize()
    assert 0 < estimate <= actual
    if actual > 100_000:
        assert estimate > 0.9 * actual


@pytest.mark.parametrize("name", sorted(ESTIMATED))
def test_the_streams_estimate_is_at_most_twice_the_request_per_copy(name: str) -> None:
    """The bound ``check_answer`` skips the estimate by (most calls): it must never be less."""
    request = ESTIMATED[name]()
    state = decode_request(request, now_ms=1).state
    copies = 1 + min(state.configs.num_standby_replicas, len(state.clients) - 1)
    assert answer_bytes(state) <= 2 * copies * request.ByteSize()


@pytest.mark.parametrize("wire", ["v1", "compact", "compact with bytes"])
@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_the_consumer_estimate_is_at_most_the_answer(assignor: str, wire: str) -> None:
    """In the form asked for: a compact answer priced as v1 (its 40 bytes a partition against
    about 1) refused large groups whose answer fits."""
    request = racked_group(assignor)
    if wire != "v1":
        request = consumer.compact(request)
        request.assignment_bytes = wire == "compact with bytes"
    outcome = assign_consumer_request(request)
    revoked = sum(len(m.revoked) + len(m.revoked_runs.partitions) for m in outcome.response.members)
    decoded = outcome.decoded
    estimate = consumer_answer_bytes(
        decoded.group, compact=decoded.compact_answer, assignment_bytes=decoded.assignment_bytes
    )
    assert 0 < estimate <= outcome.response.ByteSize() + 4 * revoked
    if wire == "compact":
        assert estimate < consumer_answer_bytes(decoded.group) / 10


def test_a_compact_answer_is_priced_as_compact() -> None:
    """A group whose v1 answer would pass the largest message, but whose compact one fits."""
    request = racked_group("range")
    v1_estimate = consumer_answer_bytes(decode_consumer(request).group)
    small = replace(RequestLimits(), answer_bytes=v1_estimate - 1)
    with pytest.raises(LimitExceeded, match="the answer would take at least"):
        decode_consumer(request, limits=small)
    assert decode_consumer(consumer.compact(request), limits=small).compact_answer


def test_a_refusal_names_the_limit_and_the_member() -> None:
    with pytest.raises(InvalidRequest) as refused:
        decode_request(_owned(raw=True)(SMALL.owned_partitions + 1), now_ms=1, limits=SMALL)
    assert refused.value.member == "m" and refused.value.field == "members[0]"
    assert "31 owned partitions, more than 30" in str(refused.value)


def test_a_count_that_cannot_fit_is_the_decoders_error_not_a_limit() -> None:
    """Two billion owned entries claimed in 64 bytes are malformed, not large: the decoder's
    refusal, which names the fault, as before the limits."""
    raw = (
        b"\x00\x03\x00\x00\x00\x00\xff\xff\xff\xff" + (2**31 - 1).to_bytes(4, "big") + b"\x00" * 64
    )
    request = _with_member(group(), pb.MemberSubscription(member_id="m", raw_subscription=raw))
    with pytest.raises(InvalidRequest, match="cannot fit") as refused:
        decode_request(request, now_ms=1)
    assert not isinstance(refused.value, LimitExceeded)
