"""Kafka's consumer assignors: kassign against Kafka's own (kafka-clients 4.3.1 in a JVM), at scale.

For each size (partitions x consumers), layout and assignor in
``kassign.assignor.consumer.ASSIGNORS``. Topics of 1,000 partitions (at least ten topics);
layouts: ``racks``, three racks, replication 3 on random brokers of nine, members spread over
the racks, every member subscribed to every topic; ``none``, the same without racks;
``unequal``, with racks, each member subscribed to all topics but one (the sticky assignors'
general builder, where ``racks`` and ``none`` take the constrained one). Figures:

- Kafka: ``assign()`` alone in a fresh JVM (``cold``: the first call, as a consumer that has
  just become leader runs it) and the best of a few more calls in that JVM (``warm``), the
  inputs built before the clock starts (``KafkaConsumerTiming.java`` beside the differential
  suite's oracle, same input format);
- kassign: the library call ``assign(name, group)`` in this process, best of a few (wall and
  CPU time), and the ratios kassign / Kafka cold and kassign / Kafka warm;
- whether kassign's answer equals Kafka's, and the partitions read across racks;
- kassign's own assignors (``rack-optimal``): their time, and its ratio to Kafka's cold
  ``range`` on the same group when ``range`` is measured too.

Round 1 is a fresh group. Round 2 (assignors that read ownership) is the next rebalance: every
member owns what round 1 gave it (generation 1; ``sticky`` through its userData), except 1% of
the members, replaced by new ones that own nothing.

Usage: ``python bench/consumer_bench.py [--sizes 1000x100,10000x1000,50000x1000]
[--layouts racks,none,unequal] [--assignors range,sticky] [--repeats 3]``. Needs Java and Maven
(``make test`` fetches Kafka's jars into ~/.m2). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kassign.assignor.consumer import (
    ASSIGNORS,
    KAFKA_ASSIGNORS,
    ConsumerGroup,
    GroupAssignment,
    Member,
    Topic,
    TopicPartition,
    assign,
    consumer_group,
)
from kassign.kafka.consumer_user_data import encode_sticky_user_data

from tests.differential.maven import ROOT, maven_classpath

RACKS = ("rack-a", "rack-b", "rack-c")
BROKERS = 9
REPLICATION = 3
TOPIC_PARTITIONS = 1_000
REPLACED = 0.01  # share of members replaced by new ones in round 2
READ_OWNERSHIP = frozenset(ASSIGNORS) - {"range", "roundrobin"}
KAFKA_VERSION = "4.3.1"  # the oracle's pom.xml's kafka.version
PROJECT = ROOT / "tests" / "differential" / "consumer" / "kafka"  # the differential oracle's
TIMING_CLASS = "io.kassign.differential.consumer.KafkaConsumerTiming"


@dataclass(frozen=True, slots=True)
class Cluster:
    """Brokers (id, rack) and per topic each partition's replica broker ids, leader first."""

    brokers: tuple[tuple[int, str | None], ...]
    replicas: dict[str, tuple[tuple[int, ...], ...]]

    def topics(self) -> list[Topic]:
        rack_of = dict(self.brokers)
        return [
            Topic(t, tuple(frozenset(r for b in ps if (r := rack_of[b])) for ps in parts))
            for t, parts in self.replicas.items()
        ]


def make_cluster(partitions: int, *, racks: bool, seed: int) -> Cluster:
    rng = random.Random(seed)
    brokers = tuple((b, RACKS[b % len(RACKS)] if racks else None) for b in range(BROKERS))
    n_topics = max(10, partitions // TOPIC_PARTITIONS)
    replicas = {
        f"topic-{t:03d}": tuple(
            tuple(rng.sample(range(BROKERS), REPLICATION)) for _ in range(partitions // n_topics)
        )
        for t in range(n_topics)
    }
    return Cluster(brokers, replicas)


def make_members(
    cluster: Cluster, consumers: int, *, racks: bool, equal: bool, seed: int
) -> list[Member]:
    """Fresh members (nothing owned) in a random arrival order, ids like Kafka's; unless
    ``equal``, each leaves out one topic."""
    rng = random.Random(seed)
    topics = tuple(cluster.replicas)
    members = [
        Member(
            member_id=f"consumer-{j}-{rng.getrandbits(128):032x}",
            topics=topics if equal else tuple(t for t in topics if t != rng.choice(topics)),
            rack_id=RACKS[j % len(RACKS)] if racks else None,
        )
        for j in range(consumers)
    ]
    rng.shuffle(members)
    return members


def next_round(
    members: list[Member], result: GroupAssignment, assignor: str, seed: int
) -> list[Member]:
    """The rebalance after ``result``: members own what it gave them, 1% are replaced."""
    rng = random.Random(seed)
    owned = result.partitions()
    gone = set(rng.sample(range(len(members)), max(1, int(len(members) * REPLACED))))
    after = []
    for i, m in enumerate(members):
        if i in gone:
            after.append(replace(m, member_id=f"{m.member_id[:-8]}{rng.getrandbits(32):08x}"))
        elif assignor == "sticky":
            after.append(replace(m, generation=1, user_data=_sticky_user_data(owned[m.member_id])))
        else:
            after.append(replace(m, generation=1, owned_partitions=owned[m.member_id]))
    return after


def _sticky_user_data(partitions: Sequence[TopicPartition]) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return encode_sticky_user_data(sorted(by_topic.items()), 1)


def kafka_line(cluster: Cluster, members: list[Member], assignor: str) -> dict[str, Any]:
    """The group in the oracle's JSON format (``KafkaConsumerAssignors.java``)."""
    return {
        "assignor": assignor,
        "nodes": [{"id": b, "rack": r} for b, r in cluster.brokers],
        "topics": [
            {"name": t, "replicas": [list(p) for p in ps]} for t, ps in cluster.replicas.items()
        ],
        "members": [
            {
                "memberId": m.member_id,
                "topics": list(m.topics),
                "ownedPartitions": [list(tp) for tp in m.owned_partitions],
                "generation": m.generation,
                "rackId": m.rack_id,
                "userData": base64.b64encode(m.user_data).decode() if m.user_data else None,
            }
            for m in members
        ],
    }


@dataclass(frozen=True, slots=True)
class KafkaTiming:
    cold_ms: float
    warm_ms: float
    members: dict[str, tuple[tuple[str, int], ...]]


def kafka_timing(classpath: str, line: dict[str, Any], repeats: int) -> KafkaTiming:
    """Kafka's ``assign()`` in a fresh JVM (default flags, as a consumer runs): first and best."""
    done = subprocess.run(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=off", "-cp", classpath, TIMING_CLASS],
        input=json.dumps({**line, "repeats": repeats}),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{TIMING_CLASS} exited {done.returncode}\n{done.stderr[-4000:]}")
    out = json.loads(done.stdout)
    return KafkaTiming(
        float(out["coldMillis"]),
        min(map(float, out["warmMillis"]), default=float("nan")),
        {m: tuple((t, int(p)) for t, p in tps) for m, tps in out["members"].items()},
    )


def kassign_timing(
    name: str, group: ConsumerGroup, repeats: int
) -> tuple[float, float, GroupAssignment]:
    """Best wall and CPU milliseconds of ``assign(name, group)`` over ``repeats`` runs."""
    wall, cpu = float("inf"), float("inf")
    result = None
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = assign(name, group)
        wall = min(wall, (time.perf_counter() - started) * 1000)
        cpu = min(cpu, (time.process_time() - started_cpu) * 1000)
    assert result is not None
    return wall, cpu, result


@dataclass(frozen=True, slots=True)
class Measured:
    line: str
    result: GroupAssignment
    kafka: KafkaTiming | None


def measure(
    classpath: str,
    name: str,
    cluster: Cluster,
    members: list[Member],
    repeats: int,
    range_cold_ms: float | None,
) -> Measured:
    """One line of figures for ``name`` on this group, kassign's answer and Kafka's timing."""
    group = consumer_group(members, cluster.topics())
    wall, cpu, result = kassign_timing(name, group, repeats)
    line = f"kassign {wall:8.1f} ms wall {cpu:8.1f} ms cpu"
    kafka = None
    if name in KAFKA_ASSIGNORS:
        kafka = kafka_timing(classpath, kafka_line(cluster, members, name), repeats)
        ours = {m: tuple(map(tuple, tps)) for m, tps in result.partitions().items()}
        same = "same answer" if ours == kafka.members else "ANSWER DIFFERS FROM KAFKA'S"
        line = (
            f"Kafka cold {kafka.cold_ms:8.1f} ms warm {kafka.warm_ms:7.1f} ms | {line}"
            f" | {wall / kafka.cold_ms:5.2f}x cold {wall / kafka.warm_ms:5.2f}x warm | {same}"
        )
    elif range_cold_ms is not None:
        line = f"{'':39}| {line} | {wall / range_cold_ms:5.2f}x Kafka's range cold"
    report = result.report
    return Measured(f"{line} | cross-rack {report.cross_rack_partitions:,}", result, kafka)


LAYOUTS = {
    "racks": "3 racks, RF 3 on random brokers",
    "none": "no racks",
    "unequal": "3 racks, RF 3 on random brokers, each member without one topic",
}


def run(classpath: str, size: str, layout: str, assignors: list[str], repeats: int) -> None:
    partitions, consumers = (int(x) for x in size.lower().split("x"))
    seed = partitions * 31 + consumers
    racks = layout != "none"
    cluster = make_cluster(partitions, racks=racks, seed=seed)
    members = make_members(cluster, consumers, racks=racks, equal=layout != "unequal", seed=seed)
    print(f"{partitions:,} partitions x {consumers:,} consumers ({LAYOUTS[layout]})", flush=True)
    range_cold: dict[int, float] = {}
    for name in sorted(assignors, key=lambda n: n not in KAFKA_ASSIGNORS):
        group = members
        for round_ in (1, 2) if name in READ_OWNERSHIP else (1,):
            got = measure(classpath, name, cluster, group, repeats, range_cold.get(round_))
            print(f"  {name:<19} round {round_}  {got.line}", flush=True)
            if name == "range" and got.kafka is not None:
                range_cold[1] = range_cold[2] = got.kafka.cold_ms
            group = next_round(members, got.result, name, seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000x100,10000x1000,50000x1000")
    parser.add_argument("--assignors", default=",".join(ASSIGNORS))
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; Kafka {KAFKA_VERSION}")
    with tempfile.TemporaryDirectory() as work:
        classpath = maven_classpath(PROJECT, Path(work) / "mvn.log")
    for size in args.sizes.split(","):
        for layout in args.layouts.split(","):
            run(classpath, size, layout, args.assignors.split(","), args.repeats)


if __name__ == "__main__":
    main()
