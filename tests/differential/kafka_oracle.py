"""Kafka Streams' own task assignors, run on kassign requests in one JVM.

Each request's ``configs.assignor`` picks one: ``"sticky"`` runs ``LegacyStickyTaskAssignor``,
anything else ``HighAvailabilityTaskAssignor``. The Java side is ``kafka/src/main/java/io/kassign/differential/KafkaHighAvailability.java``
(kafka-streams 4.3.1 as a Maven dependency; nothing of Kafka's is copied). ``build`` compiles it
and resolves its classpath with Maven, ``run`` feeds it a whole batch of requests on stdin: one
JVM start-up for hundreds of assignments.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb

from tests.e2e.harness import JVM_FLAGS, ROOT, tail

__all__ = ["KAFKA_VERSION", "KafkaAssignment", "build", "run"]

KAFKA_VERSION = "4.3.1"  # kafka/pom.xml's kafka.version
PROJECT = ROOT / "tests" / "differential" / "kafka"
MAIN_CLASS = "io.kassign.differential.KafkaHighAvailability"


@dataclass(frozen=True, slots=True)
class KafkaAssignment:
    """Kafka's answer: task ids (``"1_2"``) per process id, and ``assign``'s return value."""

    active: dict[str, frozenset[str]]
    standby: dict[str, frozenset[str]]
    probing: bool


def build(work: Path) -> str:
    """Compile the harness and return its classpath (``mvn`` as tests/e2e does; ~/.m2 caches)."""
    log = work / "mvn-differential.log"
    with log.open("wb") as sink:
        status = subprocess.run(
            [
                "mvn",
                "-B",
                "-q",
                "-Dstyle.color=never",
                "-f",
                str(PROJECT / "pom.xml"),
                "compile",
                "dependency:build-classpath",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            timeout=900,
            check=False,
        ).returncode
    if status != 0:
        raise RuntimeError(f"mvn for tests/differential/kafka failed\n{tail(log, 60)}")
    deps = (PROJECT / "target" / "classpath.txt").read_text().strip()
    return os.pathsep.join([str(PROJECT / "target" / "classes"), deps])


def run(classpath: str, requests: Sequence[pb.AssignRequest]) -> list[KafkaAssignment]:
    """Kafka's assignment for every request, in order; a request Kafka rejects raises."""
    lines = "".join(
        json.dumps(json_format.MessageToDict(r), separators=(",", ":")) + "\n" for r in requests
    )
    done = subprocess.run(
        [
            "java",
            *JVM_FLAGS,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",  # Kafka warns per unplaced standby
            "-cp",
            classpath,
            MAIN_CLASS,
        ],
        input=lines,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{MAIN_CLASS} exited {done.returncode}\n{done.stderr[-4000:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(requests):
        raise RuntimeError(f"{len(requests)} requests, {len(answers)} answers\n{done.stderr}")
    return [_assignment(a, i) for i, a in enumerate(answers)]


def _assignment(answer: dict[str, object], index: int) -> KafkaAssignment:
    if "error" in answer:
        raise RuntimeError(f"Kafka failed on request {index}:\n{answer['error']}")
    clients = answer["clients"]
    assert isinstance(clients, dict)
    return KafkaAssignment(
        active={p: frozenset(c["active"]) for p, c in clients.items()},
        standby={p: frozenset(c["standby"]) for p, c in clients.items()},
        probing=bool(answer["probing"]),
    )
