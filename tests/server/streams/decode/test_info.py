"""decode/info.py: one member's SubscriptionInfo, version by version."""

from __future__ import annotations

from uuid import UUID

from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb

from tests.server.streams.decode.builders import (
    P1,
    invalid,
    member,
    request,
    task,
)


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


def test_error_code_is_noted() -> None:
    decoded = decode_request(request(member("a", error_code=4)), now_ms=0)
    assert "member 'a' reported error code 4" in decoded.notes


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


def test_future_version_names_its_latest_supported_version() -> None:
    data = b"\x00\x00\x00\x0c\x00\x00\x00\x0d" + bytes(30)
    m = pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription(info_bytes=data))
    assert "version 12 (latest supported 13)" in str(invalid(request(m)))


def test_a_topic_partition_listed_twice_in_one_task_is_refused() -> None:
    """Issue 27: it was merged silently, whichever copy's flags and racks won."""
    twice = task(0, 0)
    twice.topic_partitions.add(topic="changelog-0", partition=0, is_changelog=True)
    twice.topic_partitions.add(topic="in-0", partition=0, is_source=False, rack_ids=["r1"])
    err = invalid(request(member("a"), tasks=[task(0, 1), twice]))
    assert err.field == "tasks[1].topic_partitions[2]" and "in-0-0 is listed twice" in str(err)
