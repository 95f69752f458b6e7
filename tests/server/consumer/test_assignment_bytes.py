"""Each member's ``assignment`` equals, byte for byte, what Kafka 4.3.1's own encoder writes.

The oracle is ``kafka/``: ``ConsumerProtocol.serializeAssignment(new Assignment(partitions,
userData))`` from kafka-clients in a JVM, the call a classic group's leader makes for every
member (``ConsumerCoordinator.onLeaderElected``). It gets the service's answers for the shared
groups (sorted partitions, no user data, as the service sends them) and random lists in any
order, with topics interleaved and user data present, empty or null, which also pins the
encoder's grouping (a topic's entry where it first appears, partitions in list order).
One Maven build (cached in ~/.m2) and one JVM start: a few seconds.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from kassign.kafka.consumer_protocol import (
    AssignmentEncoder,
    assignment_for,
    encode_consumer_assignment,
)
from kassign.server.consumer.servicer import assign_consumer_request

from tests.differential.kafka_oracle import maven_classpath
from tests.e2e.harness import JVM_FLAGS
from tests.server.consumer.requests import ALL_ASSIGNORS, racked_group

PROJECT = Path(__file__).resolve().parent / "kafka"
MAIN_CLASS = "io.kassign.server.consumer.KafkaAssignmentBytes"
TOPICS = ("orders", "payments", "audit", "a", "b.c_d-e", "t" * 249)

Case = tuple[list[tuple[str, int]], bytes | None]


def kafka_bytes(work: Path, cases: Sequence[Case]) -> list[bytes]:
    """Kafka's encoding of every case, in order, from one JVM."""
    classpath = maven_classpath(PROJECT, work / "mvn-assignment-bytes.log")
    lines = "".join(
        ",".join(f"{t}:{p}" for t, p in tps) + ";" + ("-" if data is None else data.hex()) + "\n"
        for tps, data in cases
    )
    done = subprocess.run(
        ["java", *JVM_FLAGS, "-cp", classpath, MAIN_CLASS],
        input=lines,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answers = [bytes.fromhex(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(cases), done.stderr[-4000:]
    return answers


def random_cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = [([], None), ([], b""), ([("orders", 0)], b"\x00\x01")]
    for _ in range(count):
        pool = [(t, p) for t in rng.sample(TOPICS, rng.randint(1, 4)) for p in range(12)]
        tps = rng.sample(pool, rng.randint(0, len(pool)))
        if rng.random() < 0.3:
            tps.sort()
        data = rng.choice([None, b"", rng.randbytes(rng.randint(1, 40))])
        cases.append((tps, data))
    return cases


@pytest.mark.slow
def test_assignment_bytes_are_kafkas(tmp_path: Path) -> None:
    served: list[tuple[list[tuple[str, int]], bytes]] = []
    for assignor in ALL_ASSIGNORS:
        for m in assign_consumer_request(racked_group(assignor)).response.members:
            served.append(([(tp.topic, tp.partition) for tp in m.partitions], m.assignment))
    cases = random_cases(seed=14, count=300)
    theirs = kafka_bytes(tmp_path, [(tps, None) for tps, _ in served] + cases)
    assert [ours for _, ours in served] == theirs[: len(served)]
    encoder = AssignmentEncoder()
    for (tps, data), kafka in zip(cases, theirs[len(served) :], strict=True):
        assert encode_consumer_assignment(assignment_for(tps, user_data=data)) == kafka, (tps, data)
        assert encoder.encode(tps, user_data=data) == kafka, (tps, data)
