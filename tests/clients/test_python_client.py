"""The Python client against a real server: calls, typed errors, retries only on UNAVAILABLE."""

from __future__ import annotations

import socket
import threading
import time

import grpc
import pytest
from kassign.server.runtime.app import ServerConfig, create_server
from kassign.server.streams.encode import canonical_bytes
from kassign.server.streams.servicer import NullObserver
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2 as cmn
from kassign_client import (
    KassignCallError,
    KassignClient,
    KassignInvalidRequest,
    RetryPolicy,
    build,
)

from tests.server.consumer.requests import racked_group
from tests.server.requests import group, pid
from tests.server.running import in_process


class Errors(NullObserver):
    def __init__(self) -> None:
        self.codes: list[grpc.StatusCode] = []

    def on_error(self, code: grpc.StatusCode, error: BaseException) -> None:
        self.codes.append(code)


def test_assign_returns_the_response() -> None:
    with in_process() as (_, target), KassignClient(target) as client:
        response = client.assign(group(), timeout=60)
    assert response.error == pb.ASSIGNMENT_ERROR_NONE and len(response.clients) == 3


def test_structured_info_bytes_and_raw_requests_get_the_same_assignment() -> None:
    with in_process() as (_, target), KassignClient(target) as client:
        answers = {
            enc: canonical_bytes(client.assign(group(encoding=enc)))
            for enc in ("structured", "info_bytes", "raw")
        }
    assert len(set(answers.values())) == 1


def test_invalid_request_raises_typed_error_once_without_retry() -> None:
    errors = Errors()
    request = group()
    request.members[0].subscription.info.process_id = "nope"
    with (
        in_process(observer=errors) as (_, target),
        KassignClient(target, retry=RetryPolicy(max_attempts=5)) as client,
        pytest.raises(KassignInvalidRequest) as caught,
    ):
        client.assign(request)
    assert caught.value.field is not None and "process_id" in caught.value.field
    assert caught.value.member == request.members[0].member_id
    assert errors.codes == [grpc.StatusCode.INVALID_ARGUMENT]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("service", ["streams", "consumer"])
def test_unavailable_is_retried_until_the_server_comes_up(service: str) -> None:
    port = _free_port()
    server, _ = create_server(ServerConfig(host="127.0.0.1", port=port))
    starter = threading.Timer(0.6, server.start)
    starter.start()
    try:
        policy = RetryPolicy(max_attempts=30, initial_backoff_s=0.05, max_backoff_s=0.2)
        with KassignClient(f"127.0.0.1:{port}", retry=policy) as client:
            if service == "consumer":
                assert len(client.consumer_assign(racked_group("range"), timeout=30).members) == 7
            else:
                assert client.assign(group(), timeout=30).error == pb.ASSIGNMENT_ERROR_NONE
    finally:
        starter.join()
        server.stop(None).wait()


def test_retries_are_bounded_by_attempts_and_by_the_timeout() -> None:
    target = f"127.0.0.1:{_free_port()}"
    with (
        KassignClient(target, retry=RetryPolicy(max_attempts=2, initial_backoff_s=0.01)) as client,
        pytest.raises(KassignCallError) as caught,
    ):
        client.assign(group(), timeout=30)
    assert caught.value.code is grpc.StatusCode.UNAVAILABLE
    started = time.monotonic()
    with (
        KassignClient(target, retry=RetryPolicy(max_attempts=10_000, max_backoff_s=0.2)) as client,
        pytest.raises(KassignCallError),
    ):
        client.assign(group(), timeout=1.0)
    assert time.monotonic() - started < 5


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(initial_backoff_s=0.1, multiplier=2.0, max_backoff_s=0.3)
    for attempt, cap in ((1, 0.1), (2, 0.2), (3, 0.3), (9, 0.3)):
        assert all(0 <= policy.backoff(attempt) <= cap for _ in range(50))


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("1_2", (1, 2, "")),
        ("topo__3_4", (3, 4, "topo")),
        ((5, 6), (5, 6, "")),
        ((7, 8, "t"), (7, 8, "t")),
    ],
)
def test_task_id_spellings(ref: build.TaskRef, expected: tuple[int, int, str]) -> None:
    t = build.task_id(ref)
    assert (t.subtopology, t.partition, t.named_topology) == expected


def test_old_versions_list_previous_tasks_new_ones_send_offset_sums() -> None:
    old = build.subscription_info(
        pid(1), previous_active=["0_1"], previous_standby=["0_2"], version=6
    )
    assert [t.partition for t in old.prev_tasks] == [1] and [
        t.partition for t in old.standby_tasks
    ] == [2]
    assert not old.task_offset_sums
    new = build.subscription_info(pid(1), previous_active=["0_1"], offset_sums={"0_2": 17})
    assert [(s.task.partition, s.offset_sum) for s in new.task_offset_sums] == [(1, -2), (2, 17)]
    assert new.latest_supported_version == 11


def test_client_builds_one_member_per_thread_with_owned_partitions() -> None:
    members = build.client(pid(1), threads=["a", "b"], owned_partitions={"b": [("t", 0)]}, rack="r")
    assert [m.member_id for m in members] == ["a", "b"]
    assert [len(m.subscription.owned_partitions) for m in members] == [0, 1]
    assert {m.subscription.rack_id for m in members} == {"r"}


def test_task_builder_marks_sources_changelogs_and_racks() -> None:
    info = build.task(2, 3, source=["in"], changelog=["store-changelog"], racks=["r1", "r2"])
    assert info.stateful
    parts = {
        (tp.topic, tp.partition): (tp.is_source, tp.is_changelog, list(tp.rack_ids))
        for tp in info.topic_partitions
    }
    assert parts == {
        ("in", 3): (True, False, ["r1", "r2"]),
        ("store-changelog", 3): (False, True, ["r1", "r2"]),
    }
    assert not build.task(0, 0, source=["in"]).stateful


def test_configs_builder_takes_strategy_by_name() -> None:
    configs = build.configs(num_standby_replicas=2, rack_aware_strategy="min_traffic")
    assert configs.num_standby_replicas == 2
    assert configs.rack_aware_strategy == pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC
    assert not configs.HasField("acceptable_recovery_lag")


def test_the_builder_asks_for_explanations() -> None:
    """``build.request(..., explain=True)``: every replica of the answer comes with its rule."""
    tasks = [build.task(0, p, source=["in"], changelog=["store-changelog"]) for p in range(4)]
    members = [build.client(pid(n), threads=[f"m{n}"]) for n in (1, 2)]
    configs = build.configs(num_standby_replicas=1)
    with in_process() as (_, target), KassignClient(target) as client:
        plain = client.assign(build.request(members, tasks, configs=configs), timeout=60)
        told = client.assign(
            build.request(members, tasks, configs=configs, explain=True), timeout=60
        )
    assert not plain.HasField("explanation")
    placements = [p for t in told.explanation.tasks for p in t.placements]
    assert len(placements) == 8  # 4 actives, 4 standbys
    assert all(p.rule != cmn.PLACEMENT_RULE_UNSPECIFIED and p.reason for p in placements)
