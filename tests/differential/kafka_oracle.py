"""Kafka Streams' own task assignors, run on kassign requests in one JVM.

Each request's ``configs.assignor`` picks one: ``"sticky"`` runs ``LegacyStickyTaskAssignor``,
anything else ``HighAvailabilityTaskAssignor``, each with a real ``RackAwareTaskAssignor`` over
the request's racks. The Java side is ``kafka/src/main/java/io/kassign/differential/`` (kafka-streams
4.3.1 as a Maven dependency; nothing of Kafka's is copied). ``build`` compiles it and resolves its
classpath with Maven, ``run`` feeds it a whole batch of requests on stdin: one JVM start-up for
hundreds of assignments. ``validate`` runs Kafka's own ``TaskAssignmentUtils.validateTaskAssignment``
on a batch of answers the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb

from tests.differential.maven import maven_classpath, run_java
from tests.e2e.harness import JVM_FLAGS, ROOT

__all__ = [
    "KAFKA_VERSION",
    "Answer",
    "KafkaAssignment",
    "build",
    "run",
    "validate",
]

KAFKA_VERSION = "4.3.1"  # kafka/pom.xml's kafka.version
PROJECT = ROOT / "tests" / "differential" / "kafka"
MAIN_CLASS = "io.kassign.differential.KafkaHighAvailability"
VALIDATION_CLASS = "io.kassign.differential.KafkaValidation"
BATCH_JVM_FLAGS = [f for f in JVM_FLAGS if not f.startswith("-XX:TieredStopAtLevel")]
"""The e2e harness's flags less its C1-only compilation, which suits short-lived JVMs: a batch
computes for seconds, and rack-aware batches ran 40% faster with the optimising compiler."""

Answer: TypeAlias = tuple[
    pb.AssignRequest, Mapping[str, Iterable[str]], Mapping[str, Iterable[str]]
]
"""What ``validate`` checks: a request, then active and standby task ids (``"1_2"``) per process id."""


@dataclass(frozen=True, slots=True)
class KafkaAssignment:
    """Kafka's answer: task ids (``"1_2"``) per process id, and ``assign``'s return value."""

    active: dict[str, frozenset[str]]
    standby: dict[str, frozenset[str]]
    probing: bool
    rack_aware: bool = False
    """Whether Kafka's rack-aware optimisation ran (``canEnableRackAwareAssignor``)."""
    millis: int = 0
    """How long Kafka took, its inputs built included (JIT warm-up falls on the first few)."""


def build(work: Path) -> str:
    """Compile the harness and return its classpath (``mvn`` as tests/e2e does; ~/.m2 caches)."""
    return maven_classpath(PROJECT, work / "mvn-differential.log")


def run(
    classpath: str, requests: Sequence[pb.AssignRequest], *, jobs: int = 1
) -> list[KafkaAssignment]:
    """Kafka's assignment for every request, in order; a request Kafka rejects raises. ``jobs``
    JVMs share the batch, each taking the next request of a list sorted by size (tasks times
    members), largest first, so that they finish about together."""
    lines = [json_format.MessageToDict(r) for r in requests]
    by_size = sorted(
        range(len(requests)), key=lambda i: -len(requests[i].tasks) * len(requests[i].members)
    )
    shares = [by_size[j::jobs] for j in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        answers = pool.map(
            lambda share: _batch(classpath, MAIN_CLASS, [lines[i] for i in share]), shares
        )
        placed = {
            i: a
            for share, part in zip(shares, answers, strict=True)
            for i, a in zip(share, part, strict=True)
        }
    return [_assignment(placed[i], i) for i in range(len(requests))]


def validate(classpath: str, answers: Sequence[Answer]) -> list[str]:
    """Kafka's ``TaskAssignmentUtils.validateTaskAssignment`` on each (request, answer): the
    ``AssignmentError`` name (``"NONE"`` when valid), or ``"exception: ..."`` where Kafka's own
    classes refused the answer before validating it (``KafkaStreamsAssignment.of`` rejects a task
    given twice to one client)."""
    lines = [
        {
            "request": json_format.MessageToDict(request),
            "clients": {
                pid: {
                    "active": sorted(active.get(pid, ())),
                    "standby": sorted(standby.get(pid, ())),
                }
                for pid in sorted(active.keys() | standby.keys())
            },
        }
        for request, active, standby in answers
    ]
    return [
        str(a["assignmentError"]) if "error" not in a else "exception: " + _first_line(a["error"])
        for a in _batch(classpath, VALIDATION_CLASS, lines)
    ]


def _first_line(trace: object) -> str:
    return str(trace).splitlines()[0] if str(trace) else ""


def _batch(classpath: str, main_class: str, lines: Sequence[object]) -> list[dict[str, object]]:
    """One JVM for the whole batch: a JSON line in, a JSON line out, in order."""
    done = run_java(
        classpath,
        main_class,
        "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines),
        # Kafka warns per unplaced standby
        flags=[*BATCH_JVM_FLAGS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=error"],
        timeout=600,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(lines):
        raise RuntimeError(f"{len(lines)} lines, {len(answers)} answers\n{done.stderr[-4000:]}")
    return answers


def _assignment(answer: dict[str, object], index: int) -> KafkaAssignment:
    if "error" in answer:
        raise RuntimeError(f"Kafka failed on request {index}:\n{answer['error']}")
    clients = answer["clients"]
    assert isinstance(clients, dict)
    return KafkaAssignment(
        active={p: frozenset(c["active"]) for p, c in clients.items()},
        standby={p: frozenset(c["standby"]) for p, c in clients.items()},
        probing=bool(answer["probing"]),
        rack_aware=bool(answer.get("rackAware", False)),
        millis=int(str(answer.get("millis", 0))),
    )
