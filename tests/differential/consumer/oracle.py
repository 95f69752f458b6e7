"""Kafka's own consumer assignors, run on generated groups in one JVM.

The Java side is ``kafka/src/main/java/io/kassign/differential/consumer/KafkaConsumerAssignors.java``
(kafka-clients 4.3.1 as a Maven dependency; nothing of Kafka's is copied). ``build`` compiles it
and resolves its classpath with Maven; ``run`` feeds it a whole batch of groups on stdin, one
JSON line each: one JVM start-up for thousands of assignments.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.differential.maven import maven_classpath, run_java
from tests.e2e.harness import JVM_FLAGS, ROOT

__all__ = ["KAFKA_VERSION", "KafkaAnswer", "build", "run"]

KAFKA_VERSION = "4.3.1"  # kafka/pom.xml's kafka.version
PROJECT = ROOT / "tests" / "differential" / "consumer" / "kafka"
MAIN_CLASS = "io.kassign.differential.consumer.KafkaConsumerAssignors"


@dataclass(frozen=True, slots=True)
class KafkaAnswer:
    """Kafka's assignment (member id -> sorted (topic, partition) pairs), or the error it threw."""

    members: dict[str, tuple[tuple[str, int], ...]]
    error: str | None = None


def build(work: Path) -> str:
    """Compile the harness and return its classpath (``mvn``; ~/.m2 caches)."""
    return maven_classpath(PROJECT, work / "mvn-differential-consumer.log")


def run(classpath: str, groups: Sequence[dict[str, Any]]) -> list[KafkaAnswer]:
    """Kafka's answer for every group, in order."""
    lines = "".join(json.dumps(g, separators=(",", ":")) + "\n" for g in groups)
    done = run_java(
        classpath,
        MAIN_CLASS,
        lines,
        # Kafka logs every final assignment
        flags=[*JVM_FLAGS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=off"],
        timeout=300,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(groups):
        raise RuntimeError(f"{len(groups)} groups, {len(answers)} answers\n{done.stderr[-4000:]}")
    return [_answer(a) for a in answers]


def _answer(answer: dict[str, Any]) -> KafkaAnswer:
    if "error" in answer:
        return KafkaAnswer({}, str(answer["error"]))
    return KafkaAnswer(
        {m: tuple((t, int(p)) for t, p in tps) for m, tps in answer["members"].items()}
    )
