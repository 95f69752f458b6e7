"""Peak memory of one request against its size, over a sweep of sizes up to the limits.

    .venv/bin/python bench/memory_bench.py [--points 4] [--shapes all] [--check]

``--check`` (``make bench-check``): the two largest points of every shape, exit 1 when one is
over the target. A memory regression is not a slower line, so the speed guards miss it (issue
24: a per-call table of every task's sources took the Streams shapes from 18x to 24-26x).

Each point is one request, serialised, measured in a fresh subprocess: the child imports
kassign, answers a small request of the same shape (lazy imports, caches), collects, resets
the kernel's peak-RSS mark (``/proc/self/clear_refs``), reads its RSS as the baseline, then
parses the bytes, answers and serialises the answer, and reads the peak (``VmHWM``). The
figure is the peak above the baseline measured in the same process, and its ratio to the
request's bytes (issue 16's target: at most 20). Shapes (the largest point sits at the limit
its name says):

- ``consumer-owned``: one raw subscription owning partitions of a topic outside the metadata
  (issue 16's 4-million-partition subscription, up to ``--max-owned-partitions``);
- ``consumer-group``: ``bench/consumer_groups.py``'s groups, raw subscriptions owning the
  previous round's answer, cooperative-sticky (up to 100,000 partitions x 1,000 members: twice
  the benches' largest, a tenth of ``--max-partitions``, which would take minutes to build);
- ``streams-owned``: a Streams member's raw subscription owning many partitions;
- ``streams-tasks``: tasks of one source partition, 10 clients (up to ``--max-tasks``);
- ``streams-standby``: the same with ``num_standby_replicas`` 1 (a copy of every task to place,
  move and answer, in a request that grew by two bytes);
- ``streams-sticky``: the same with the sticky assignor (its book of task pairs grew with the
  square of the tasks per client: 50,000 tasks took 9 GB and 77 s before issue 16's fix);
- ``streams-sums``: ``streams-tasks``' 10,000 tasks, one member's userData (v9, Kafka's bytes,
  12 bytes a sum) reporting offset sums of those and of tasks the topology lacks, up to
  ``--max-reported-tasks`` (issue 27);
- ``streams-sums-message``: the same sums as a structured ``SubscriptionInfo`` (v11; issue 27:
  2,000,000 sums took a worker to 57 times the request);
- ``consumer-wide``, ``consumer-wide-v1``: 500 topics, 2,000 members subscribing to all, range,
  up to 1,000,000 partitions, in the compact form the Python client sends (issue 24) and in
  the v1 form (issue 27: the compact call took 166 times the request).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "gen"))

from google.protobuf.message import Message
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    encode_consumer_subscription,
)
from kassign.kafka.subscription_info import (
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    encode_subscription_info,
)
from kassign.server.limits import DEFAULT_LIMITS
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

TARGET = 20.0
"""Issue 16: peak memory per request at most this many times its size in bytes."""


def _raw(topics: tuple[str, ...], owned: dict[str, range], user_data: bytes | None = None) -> bytes:
    return encode_consumer_subscription(
        ConsumerProtocolSubscription(
            version=3,
            topics=topics,
            user_data=user_data,
            owned_partitions=tuple(OwnedTopicPartitions(t, tuple(ps)) for t, ps in owned.items()),
            generation_id=1,
        )
    )


def consumer_owned(n: int) -> Message:
    raw = _raw(("orders",), {"retired": range(n)})
    return cpb.ConsumerAssignRequest(
        assignor="cooperative-sticky",
        members=[pb.MemberSubscription(member_id="m-0", raw_subscription=raw)],
        topics=[cpb.ConsumerTopic(name="orders", partitions=[cpb.PartitionReplicas()] * 12)],
    )


def consumer_group(partitions: int) -> Message:
    from consumer_groups import make_cluster, make_members, next_round, request_for
    from kassign.assignor.consumer import ConsumerGroup, assign

    cluster = make_cluster(partitions, racks=True, seed=1)
    members = make_members(cluster, 1_000, racks=True, equal=True, seed=2)
    group = ConsumerGroup(tuple(members), {t.name: t for t in cluster.topics()})
    first = assign("cooperative-sticky", group)
    after = next_round(members, first, "cooperative-sticky", seed=3)
    return request_for(cluster, after, "cooperative-sticky")


def _info(process: int) -> bytes:
    return encode_subscription_info(
        SubscriptionInfoData(version=11, process_id=UUID(int=process), latest_supported_version=11)
    )


def streams_owned(n: int) -> Message:
    raw = _raw(("orders",), {"orders": range(n)}, _info(1))
    task = pb.TaskInfo(
        id=pb.TaskId(subtopology=0, partition=0),
        topic_partitions=[pb.TaskTopicPartition(topic="orders", partition=0, is_source=True)],
    )
    return pb.AssignRequest(
        members=[pb.MemberSubscription(member_id="m-0", raw_subscription=raw)],
        tasks=[task],
        now_ms=1,
    )


def streams_tasks(n: int) -> Message:
    return streams_group(n, 10)


def streams_group(n: int, clients: int) -> pb.AssignRequest:
    """``n`` stateful tasks of one source partition each, ``clients`` members of one each."""
    members = [
        pb.MemberSubscription(
            member_id=f"m-{c}",
            subscription=pb.ConsumerSubscription(info_bytes=_info(c + 1), topics=["in"]),
        )
        for c in range(clients)
    ]
    tasks = [
        pb.TaskInfo(
            id=pb.TaskId(subtopology=t // 1000, partition=t % 1000),
            stateful=True,
            changelog_end_offset_sum=1_000,
            topic_partitions=[
                pb.TaskTopicPartition(topic=f"in-{t // 1000}", partition=t % 1000, is_source=True)
            ],
        )
        for t in range(n)
    ]
    return pb.AssignRequest(members=members, tasks=tasks, now_ms=1)


def streams_sums(n: int) -> Message:
    request = streams_tasks(10_000)
    groups = [
        SubtopologyOffsetSums(g, tuple(PartitionOffsetSum(p, 500) for p in range(1000)))
        for g in range(n // 1000)
    ]
    info = SubscriptionInfoData(
        version=9,
        process_id=UUID(int=1),
        latest_supported_version=11,
        grouped_offset_sums=tuple(groups),
    )
    request.members[0].subscription.info_bytes = encode_subscription_info(info)  # type: ignore[attr-defined]
    return request


def streams_sums_message(n: int) -> Message:
    request = streams_tasks(10_000)
    info = request.members[0].subscription.info  # type: ignore[attr-defined]
    info.CopyFrom(
        pb.SubscriptionInfo(version=11, latest_supported_version=11, process_id=str(UUID(int=1)))
    )
    add = info.task_offset_sums.add
    for g in range(n // 1000):
        for p in range(1000):
            add(task=pb.TaskId(subtopology=g, partition=p), offset_sum=500)
    return request


def consumer_wide(partitions: int, *, compact: bool = True) -> Message:
    from kassign_client import consumer

    topics = [f"topic-{t:03}" for t in range(500)]
    return consumer.request(
        [consumer.member(f"member-{m:04}", topics) for m in range(2_000)],
        [consumer.topic(t, max(1, partitions // len(topics))) for t in topics],
        compact=compact,
    )


def consumer_wide_v1(partitions: int) -> Message:
    return consumer_wide(partitions, compact=False)


def streams_standby(n: int) -> Message:
    request = streams_tasks(n)
    request.configs.num_standby_replicas = 1  # type: ignore[attr-defined]
    return request


def streams_sticky(n: int) -> Message:
    request = streams_standby(n)
    request.configs.assignor = "sticky"  # type: ignore[attr-defined]
    return request


SHAPES: dict[str, tuple[str, Callable[[int], Message], int]] = {
    "consumer-owned": ("consumer", consumer_owned, DEFAULT_LIMITS.owned_partitions),
    "consumer-group": ("consumer", consumer_group, 100_000),
    "streams-owned": ("streams", streams_owned, DEFAULT_LIMITS.owned_partitions),
    "streams-tasks": ("streams", streams_tasks, DEFAULT_LIMITS.tasks),
    "streams-standby": ("streams", streams_standby, DEFAULT_LIMITS.tasks),
    "streams-sticky": ("streams", streams_sticky, DEFAULT_LIMITS.tasks),
    "streams-sums": ("streams", streams_sums, DEFAULT_LIMITS.reported_tasks),
    "streams-sums-message": ("streams", streams_sums_message, DEFAULT_LIMITS.reported_tasks),
    "consumer-wide": ("consumer", consumer_wide, DEFAULT_LIMITS.partitions),
    "consumer-wide-v1": ("consumer", consumer_wide_v1, DEFAULT_LIMITS.partitions),
}


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


def _answer(kind: str, data: bytes) -> int:
    if kind == "consumer":
        from kassign.server.consumer.servicer import assign_consumer_request

        request = cpb.ConsumerAssignRequest.FromString(data)
        return len(assign_consumer_request(request).wire.SerializeToString())
    from kassign.server.streams.servicer import assign_request

    # as the servicer calls it: the bytes, parsed and let go of once decoded, and the answer's
    # lists as wire bytes (server/streams/response_wire.py)
    return len(assign_request(data).wire.SerializeToString())


def measure(kind: str, path: Path, warm: Path) -> dict[str, float]:
    """In the child: warm up, reset the peak mark, answer the request, read the peak."""
    _answer(kind, warm.read_bytes())
    data = path.read_bytes()
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    baseline = _status("VmRSS:")
    started = time.perf_counter()
    answer = _answer(kind, data)
    seconds = time.perf_counter() - started
    return {"peak": _status("VmHWM:") - baseline, "answer": answer, "seconds": seconds}


def _point(
    kind: str, request: Message, warm: Message, folder: Path
) -> tuple[int, dict[str, float]]:
    path, warm_path = folder / "request.bin", folder / "warm.bin"
    data = request.SerializeToString()
    path.write_bytes(data)
    warm_path.write_bytes(warm.SerializeToString())
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), str(warm_path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return len(data), json.loads(out)


NO_TARGET = frozenset({"consumer-wide"})
"""Shapes whose ratio is printed but not held to the target: the compact request names each
topic once for all 2,000 members (0.05 MB for a million partitions), so its peak is the answer's
and the ratio says nothing of the request; ``consumer-wide-v1`` holds that call to it."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--points", type=int, default=4, help="sizes per shape, up to its limit")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--check", action="store_true", help="two points a shape; exit 1 if over")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        args.points = min(args.points, 2)
    if args.child:
        kind, path, warm = args.child
        print(json.dumps(measure(kind, Path(path), Path(warm))))
        return 0
    worst = 0.0
    print(
        f"{'shape':>20} {'count':>9} {'request MB':>10} {'peak MB':>8} {'ratio':>6} {'answer MB':>9} {'s':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.shapes.split(","):
            kind, build, limit = SHAPES[name]
            warm = build(max(1, limit // 10_000))
            for i in range(args.points):
                count = limit // 2 ** (args.points - 1 - i)
                size, got = _point(kind, build(count), warm, Path(tmp))
                ratio = got["peak"] / size
                if name not in NO_TARGET:
                    worst = max(worst, ratio)
                print(
                    f"{name:>20} {count:>9,} {size / 1e6:>10.2f} {got['peak'] / 1e6:>8.1f} "
                    f"{ratio:>6.1f} {got['answer'] / 1e6:>9.2f} {got['seconds']:>6.2f}"
                )
    print(
        f"worst ratio {worst:.1f} (target {TARGET:.0f}; not held: {', '.join(sorted(NO_TARGET))})"
    )
    if args.check and worst > TARGET:
        print(f"memory: a shape is over {TARGET:.0f} times its request")
        return 1
    if args.check:
        print(f"memory: every shape within {TARGET:.0f} times its request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
