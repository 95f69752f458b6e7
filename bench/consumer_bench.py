"""Kafka's consumer assignors: kassign against Kafka's own (kafka-clients 4.3.1 in a JVM), at scale.

For each size (partitions x consumers), layout and assignor in
``kassign.assignor.consumer.ASSIGNORS`` (groups from ``consumer_groups.py``; layouts: ``racks``,
three racks, replication 3 on random brokers, every member subscribed to every topic;
``none``, the same without racks; ``unequal``, with racks, each member subscribed to all topics
but one: the sticky assignors' general builder, where the others take the constrained one):

- Kafka: ``assign()`` alone in a fresh JVM (``cold``: the first call, as a consumer that has
  just become leader runs it) and the best of a few more calls in that JVM (``warm``), the
  inputs built before the clock starts (``KafkaConsumerTiming.java`` beside the differential
  suite's oracle, same input format);
- kassign, best of a few, wall time: ``library``, ``assign(name, group)`` in this process;
  ``call``, the service's whole call in this process (request bytes parsed, decoded, assigned,
  encoded, response serialised); ``gRPC``, the call through ``kassign serve`` (one worker process
  on loopback), as a leader makes it;
- the ratios kassign's call / Kafka cold, gRPC / Kafka cold and gRPC / Kafka warm; whether
  kassign's answer (library, call and gRPC alike) equals Kafka's; partitions read across racks.
  ``rack-optimal`` has no Kafka counterpart: its ratios are to Kafka's cold ``range``.

Scenarios (``--scenarios``): ``fresh``, a fresh group; ``replaced`` (assignors that read
ownership), the next rebalance, every member owning what ``fresh`` gave it except 1% of them,
replaced by new ones; ``leave``, the same with one member gone and none new (Kafka's large
tests); ``extra``, the fresh group and one more member subscribed to one topic.

Sizes are ``PxC`` (partitions x consumers, a topic per 1,000 partitions, at least ten) or
``TxNxC``: Kafka's own large-test shapes, as franz-go's ``BenchmarkJava`` reproduces them, are
``50x800x800``, ``50x1000x1000`` and ``500x2000x2000`` with ``--scenarios fresh,leave,extra``.

Usage: ``python bench/consumer_bench.py [--sizes 1000x100,10000x1000,50000x1000]
[--layouts racks,none,unequal] [--assignors range,sticky] [--scenarios fresh,replaced]
[--repeats 3] [--wires v1,compact]``. Needs Java and Maven
(``make test`` fetches Kafka's jars into ~/.m2). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc
from consumer_groups import (
    Cluster,
    extra_member,
    kafka_line,
    leave,
    make_cluster,
    make_members,
    next_round,
    request_for,
)
from kassign.assignor.consumer import (
    ASSIGNORS,
    KAFKA_ASSIGNORS,
    GroupAssignment,
    Member,
    assign,
    consumer_group,
)
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer
from serving import kassign_serve

from tests.differential.maven import ROOT, maven_classpath, run_java

KAFKA_VERSION = "4.3.1"  # the oracle's pom.xml's kafka.version
PROJECT = ROOT / "tests" / "differential" / "consumer" / "kafka"  # the differential oracle's
TIMING_CLASS = "io.kassign.differential.consumer.KafkaConsumerTiming"
READ_OWNERSHIP = frozenset(ASSIGNORS) - {"range", "roundrobin"}
LAYOUTS = {
    "racks": "3 racks, RF 3 on random brokers",
    "none": "no racks",
    "unequal": "3 racks, RF 3 on random brokers, each member without one topic",
}

Partitions = dict[str, tuple[tuple[str, int], ...]]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KafkaTiming:
    cold_ms: float
    warm_ms: float
    members: Partitions


def kafka_timing(classpath: str, line: dict[str, Any], repeats: int) -> KafkaTiming:
    """Kafka's ``assign()`` in a fresh JVM (default flags, as a consumer runs): first and best."""
    stdin = json.dumps({**line, "repeats": repeats})
    flags = ["-Dorg.slf4j.simpleLogger.defaultLogLevel=off"]
    out = json.loads(run_java(classpath, TIMING_CLASS, stdin, flags=flags, timeout=900).stdout)
    return KafkaTiming(
        float(out["coldMillis"]),
        min(map(float, out["warmMillis"]), default=float("nan")),
        {m: tuple((t, int(p)) for t, p in tps) for m, tps in out["members"].items()},
    )


def best_ms(run: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Best wall milliseconds of ``run()`` over ``repeats`` runs, and its last answer."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        answer = run()
        best = min(best, (time.perf_counter() - started) * 1000)
    return best, answer


def whole_call(data: bytes) -> bytes:
    """The service's call in this process: request bytes in, response bytes out (the members
    read from the bytes, as the server reads them)."""
    request = cpb.ConsumerAssignRequest.FromString(data)
    return assign_consumer_request(request, data=data).wire.SerializeToString()


def response_partitions(data: bytes) -> Partitions:
    """Each member's partitions, from either form of answer."""
    response = cpb.ConsumerAssignResponse.FromString(data)
    return {m.member_id: m.partitions for m in consumer.answers(response)}


@contextmanager
def served() -> Iterator[Callable[[bytes], bytes]]:
    """``kassign serve`` with one worker on loopback, and a call that sends it request bytes."""
    unlimited = [("grpc.max_receive_message_length", -1)]  # a 1M-partition answer
    with kassign_serve() as target, grpc.insecure_channel(target, options=unlimited) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        method: Callable[..., bytes] = channel.unary_unary(
            "/kassign.v1.ConsumerAssignmentService/Assign",
            request_serializer=None,
            response_deserializer=None,
        )
        yield lambda data: bytes(method(data, timeout=120))


@dataclass(frozen=True, slots=True)
class Measured:
    line: str
    result: GroupAssignment
    kafka: KafkaTiming | None


def measure(
    classpath: str,
    call: Callable[[bytes], bytes],
    name: str,
    cluster: Cluster,
    members: list[Member],
    *,
    repeats: int,
    range_cold_ms: float | None,
    wires: tuple[str, ...] = ("v1",),
) -> Measured:
    """One line of figures for ``name`` on this group, kassign's answer and Kafka's timing."""
    group = consumer_group(members, cluster.topics())
    library_ms, result = best_ms(lambda: assign(name, group), repeats)
    ours = {m: tuple(map(tuple, tps)) for m, tps in result.partitions().items()}
    calls, agree = [], True
    for wire in wires:
        data = request_for(cluster, members, name, compact=wire == "compact").SerializeToString()
        call_ms, in_process = best_ms(partial(whole_call, data), repeats)
        grpc_ms, over_grpc = best_ms(partial(call, data), repeats)
        agree = agree and ours == response_partitions(in_process) == response_partitions(over_grpc)
        calls.append((wire, call_ms, grpc_ms, len(data), len(over_grpc)))
    kafka = None
    if name in KAFKA_ASSIGNORS:
        kafka = kafka_timing(classpath, kafka_line(cluster, members, name), repeats)
        agree = agree and ours == kafka.members
        base, against = f"Kafka cold {kafka.cold_ms:7.1f} warm {kafka.warm_ms:6.1f}", "cold"
        cold_ms: float | None = kafka.cold_ms
    else:
        base, against, cold_ms = f"{'':29}", "range cold", range_cold_ms
    same = ("same answer" if kafka else "same answers") if agree else "ANSWERS DIFFER"
    lines = [
        (
            f"{base} | library {library_ms:7.1f} | {same} | "
            f"cross-rack {result.report.cross_rack_partitions:,}"
        )
    ]
    for wire, call_ms, grpc_ms, asked, answered in calls:
        ratios = [] if kafka is None else [f"{grpc_ms / kafka.warm_ms:5.2f}x warm"]
        if cold_ms is not None:
            ratios.insert(
                0, f"call {call_ms / cold_ms:4.2f}x gRPC {grpc_ms / cold_ms:4.2f}x {against}"
            )
        lines.append(
            f"    {wire:<8} call {call_ms:7.1f} gRPC {grpc_ms:7.1f} ms | request "
            f"{asked / 1e6:6.2f} MB answer {answered / 1e6:6.2f} MB | {', '.join(ratios)}"
        )
    return Measured("\n".join(lines), result, kafka)


SCENARIOS = {
    "fresh": "a fresh group",
    "replaced": "the next rebalance, 1% of the members replaced by new ones",
    "leave": "the next rebalance, one member gone (Kafka's large tests)",
    "extra": "a fresh group and one more member subscribed to one topic",
}


def parse_size(size: str) -> tuple[int, int, int | None]:
    """``PxC`` (partitions x consumers, a topic per 1,000 partitions) or ``TxNxC`` (topics x
    partitions per topic x consumers: Kafka's large-test shapes, e.g. 500x2000x2000)."""
    parts = [int(x) for x in size.lower().split("x")]
    if len(parts) == 3:
        return parts[0] * parts[1], parts[2], parts[0]
    return parts[0], parts[1], None


def run(
    classpath: str,
    call: Callable[[bytes], bytes],
    size: str,
    layout: str,
    assignors: list[str],
    repeats: int,
    scenarios: list[str],
    wires: tuple[str, ...] = ("v1",),
) -> None:
    partitions, consumers, topics = parse_size(size)
    seed = partitions * 31 + consumers
    racks = layout != "none"
    cluster = make_cluster(partitions, racks=racks, seed=seed, topics=topics)
    members = make_members(cluster, consumers, racks=racks, equal=layout != "unequal", seed=seed)
    shape = f"{len(cluster.replicas):,} topics, " if topics else ""
    print(
        f"{partitions:,} partitions ({shape}{LAYOUTS[layout]}) x {consumers:,} consumers",
        flush=True,
    )
    range_cold: float | None = None
    for name in sorted(assignors, key=lambda n: n not in KAFKA_ASSIGNORS):
        fresh: GroupAssignment | None = None
        for scenario in scenarios:
            if scenario in ("replaced", "leave") and name not in READ_OWNERSHIP:
                continue
            if scenario == "fresh":
                group = members
            elif scenario == "extra":
                group = extra_member(cluster, members, racks=racks, seed=seed)
            else:
                if fresh is None:
                    fresh = assign(name, consumer_group(members, cluster.topics()))
                if scenario == "leave":
                    group = leave(members, fresh, name)
                else:
                    group = next_round(members, fresh, name, seed)
            got = measure(
                classpath,
                call,
                name,
                cluster,
                group,
                repeats=repeats,
                range_cold_ms=range_cold,
                wires=wires,
            )
            print(f"  {name:<18} {scenario:<8}  {got.line}", flush=True)
            if scenario == "fresh":
                fresh = got.result
                if name == "range" and got.kafka is not None:
                    range_cold = got.kafka.cold_ms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000x100,10000x1000,50000x1000")
    parser.add_argument("--assignors", default=",".join(ASSIGNORS))
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--scenarios",
        default="fresh,replaced",
        help="comma-separated, of: "  # argparse formats help with %: 1%% is "1%"
        + ", ".join(f"{k} ({v})" for k, v in SCENARIOS.items()).replace("%", "%%"),
    )
    parser.add_argument(
        "--wires",
        default="v1,compact",
        help="v1 (raw subscriptions, TopicPartition lists and Kafka's bytes back) and/or compact "
        "(issue 24: shared topic lists, owned by topic, runs back without Kafka's bytes)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so ``served`` stops its server
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"machine: {os.cpu_count()} cores, load average {load}; Kafka {KAFKA_VERSION};"
        " times in ms, assignor and round first"
    )
    with tempfile.TemporaryDirectory() as work:
        classpath = maven_classpath(PROJECT, Path(work) / "mvn.log")
    with served() as call:
        for size in args.sizes.split(","):
            for layout in args.layouts.split(","):
                run(
                    classpath,
                    call,
                    size,
                    layout,
                    args.assignors.split(","),
                    args.repeats,
                    args.scenarios.split(","),
                    tuple(args.wires.split(",")),
                )


if __name__ == "__main__":
    main()
