"""Time ``decode_request`` on a 10,000-task group, structured and as Kafka bytes.

    .venv/bin/python bench/decode_bench.py [--repeat N]

The group has 10,000 stateful tasks (10 sub-topologies x 1,000 partitions) and 100 clients x 4
threads, each client reporting offset sums for its 100 tasks (40,000 entries in all) and owning
their source partitions. The same group is timed three ways: structured (`info`), with
`info_bytes`, and as `raw_subscription`. The baseline, measured in the same run, is protobuf
parsing the same request from its serialised bytes, which every call pays before decoding.
Building the requests is not timed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gen"))

from kassign.kafka.consumer_protocol import encode_consumer_subscription
from kassign.kafka.subscription_info import encode_subscription_info
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb, subscription_from_pb

TASKS, CLIENTS, THREADS = 10_000, 100, 4


def _task(t: int) -> pb.TaskInfo:
    source = pb.TaskTopicPartition(topic=f"in-{t // 1000}", partition=t % 1000, is_source=True)
    return pb.TaskInfo(
        id=pb.TaskId(subtopology=t // 1000, partition=t % 1000),
        stateful=True,
        changelog_end_offset_sum=1_000,
        topic_partitions=[source],
    )


def _subscription(client: int, thread: int) -> pb.ConsumerSubscription:
    mine = range(client, TASKS, CLIENTS)
    info = pb.SubscriptionInfo(
        version=11,
        latest_supported_version=11,
        process_id=str(UUID(int=client + 1)),
        user_end_point=f"host-{client}:8080",
    )
    for t in mine:
        task = pb.TaskId(subtopology=t // 1000, partition=t % 1000)
        info.task_offset_sums.add(task=task, offset_sum=-2 if t % THREADS == thread else 500)
    owned = [
        pb.TopicPartition(topic=f"in-{t // 1000}", partition=t % 1000)
        for t in mine
        if t % THREADS == thread
    ]
    return pb.ConsumerSubscription(
        topics=[f"in-{i}" for i in range(10)], owned_partitions=owned, info=info
    )


def _member(shape: str, client: int, thread: int) -> pb.MemberSubscription:
    sub = _subscription(client, thread)
    mid = f"member-{client}-{thread}"
    if shape == "info_bytes":
        sub.info_bytes = encode_subscription_info(info_from_pb(sub.info))
    if shape == "raw_subscription":
        raw = encode_consumer_subscription(subscription_from_pb(sub))
        return pb.MemberSubscription(member_id=mid, raw_subscription=raw)
    return pb.MemberSubscription(member_id=mid, subscription=sub)


def _request(shape: str) -> pb.AssignRequest:
    members = [_member(shape, c, t) for c in range(CLIENTS) for t in range(THREADS)]
    return pb.AssignRequest(members=members, tasks=[_task(t) for t in range(TASKS)])


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) if repeat < 3 else statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{TASKS} tasks, {CLIENTS} clients x {THREADS} threads; median of {args.repeat}")
    for shape in ("info", "info_bytes", "raw_subscription"):
        request = _request(shape)
        data = request.SerializeToString()
        parse = _best(lambda: pb.AssignRequest.FromString(data), args.repeat)  # noqa: B023 - run now
        decode = _best(lambda: decode_request(request, now_ms=1), args.repeat)  # noqa: B023
        print(
            f"{shape:>17}: {len(data) / 1e6:5.2f} MB  protobuf parse {parse * 1e3:7.1f} ms  "
            f"decode_request {decode * 1e3:7.1f} ms  ({decode / parse:5.1f}x the parse)"
        )


if __name__ == "__main__":
    main()
