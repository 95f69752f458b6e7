"""The KRaft cluster the broker plug-ins' end-to-end tests share (issue 15), and its kassign.

Three nodes of kafka_2.13 4.4.0 on loopback (``harness.start_cluster``: node 1 broker and
controller, nodes 2 and 3 brokers) in ``broker.rack`` rack-a, rack-b, rack-c, with a copy of
``clients/java/broker/target/kassign-broker.jar`` on their classpath, and a ``kassign serve`` they
call (``kassign.target``), started first. Every broker lists kassign's consumer-group assignor
first in ``group.consumer.assignors`` (so it is the default), its shadow-only twin
(``kassign-shadow``), then Kafka's ``uniform`` and
``range`` (the list takes class names and built-in names, and each name once). The streams
plug-in's module adds ``group.streams.assignors`` and its own keys through ``extra``::

    with broker_cluster(work, e2e_classpaths[0], {"group.streams.assignors": "..."}) as setup:
        setup.cluster.bootstrap, setup.kassign.target, setup.broker_text()

Consumer groups get heartbeats every 500 ms and a 6 s session (Kafka's floors are 5 s and 45 s),
so members learn new targets quickly and a stopped one is gone soon; followers serve fetches to
consumers in their rack (``RackAwareReplicaSelector``, KIP-392), so a rack-local assignment means
rack-local reads.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.harness import (
    ROOT,
    Cluster,
    Kassign,
    Processes,
    start_cluster,
    start_kassign,
    wait_until,
)
from tests.ops.serving import alive, listening_sockets

BROKER_JAR = ROOT / "clients" / "java" / "broker" / "target" / "kassign-broker.jar"
RACKS = ("rack-a", "rack-b", "rack-c")  # of brokers 1, 2, 3
CONSUMER_ASSIGNOR = "io.kassign.broker.KassignConsumerGroupAssignor"
# the same plug-in always in shadow mode, name "kassign-shadow" (issue 26): a group picks it with
# group.remote.assignor, so the shadow test shares the running cluster
SHADOW_ASSIGNOR = "io.kassign.broker.KassignShadowConsumerGroupAssignor"
DEADLINE_MS = 1_000
"""The plug-ins' ``kassign.deadline.ms`` here (their default is 300). The tests claim that kassign
assigns while it answers and that the broker falls back when it does not; at 300 ms a loaded
2-core machine (three brokers, the members' JVMs starting, other work) once stretched a 3-member
call the service computes in 17 ms to 271 ms plus the round trip, and the group kept Kafka's
uniform answer until its next change. The deadline's timing itself is the plug-ins' JUnit tests'."""


def broker_settings(kassign_target: str) -> dict[str, str]:
    """What every broker adds to the harness's settings, before the caller's ``extra``."""
    return {
        "group.consumer.assignors": f"{CONSUMER_ASSIGNOR},{SHADOW_ASSIGNOR},uniform,range",
        "kassign.target": kassign_target,
        "kassign.deadline.ms": str(DEADLINE_MS),
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.min.heartbeat.interval.ms": "500",
        "group.consumer.session.timeout.ms": "6000",
        "group.consumer.min.session.timeout.ms": "6000",
        "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
    }


@dataclass(frozen=True, slots=True)
class BrokerCluster:
    """The running cluster, the kassign it started with, and the processes to end with it."""

    cluster: Cluster
    kassign: Kassign
    procs: Processes
    work: Path

    def broker_text(self) -> str:
        """Every broker's log so far (the plug-ins log on the group coordinator's broker)."""
        return "".join(log.read_text(errors="replace") for log in self.cluster.logs)

    def start_kassign_again(self, name: str) -> Kassign:
        """A new ``kassign serve`` on the first one's port (under ``work/name``): the brokers'
        ``kassign.target`` is fixed. The old one must be gone."""
        return start_kassign(self.work / name, self.procs, *KASSIGN_ARGS, port=self.kassign.port)


KASSIGN_ARGS = ("--worker-timeout", "0")
"""The tests ``pause`` kassign to play a hung service; its own watchdog would replace the paused
worker within seconds (tests/ops/test_hung_worker.py is where that is tested)."""
WORKER_LINE = re.compile(r"worker \d+ \(pid (\d+)\) starting")


def workers(kassign: Kassign) -> list[int]:
    """The pids of the serving processes ``kassign serve`` forked (its log names each)."""
    return [int(pid) for pid in WORKER_LINE.findall(kassign.log.read_text())]


def pause(kassign: Kassign) -> None:
    """SIGSTOP to its workers: connections stay open and calls hang, as with a stuck service."""
    for pid in workers(kassign):
        os.kill(pid, signal.SIGSTOP)


def kill(kassign: Kassign) -> None:
    """SIGKILL to the supervisor, then to its workers (paused ones too); returns once none is
    left and nothing listens on the port: connections refused. The supervisor goes first: a
    worker killed before it was replaced at once, and a replacement forked as the supervisor
    died once served on with parent 1 and answered this test's next join (issue 27)."""
    kassign.proc.kill()
    kassign.proc.wait(timeout=30)
    for pid in workers(kassign):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(
        f"kassign's workers gone and port {kassign.port} closed",
        lambda: (
            (not any(map(alive, workers(kassign))) and not listening_sockets(kassign.port)) or None
        ),
        10,
        lambda: [kassign.log],
    )


@contextmanager
def broker_cluster(
    work: Path, broker_classpath: str, extra: Mapping[str, str] | None = None
) -> Iterator[BrokerCluster]:
    """kassign, then the three brokers with the jar and ``broker_settings`` plus ``extra``
    (``extra`` wins); every process is killed on exit, pass or fail."""
    assert BROKER_JAR.exists(), f"{BROKER_JAR} is missing: `make java` builds it"
    work.mkdir(parents=True, exist_ok=True)
    jar = (
        work / BROKER_JAR.name
    )  # a copy: a rebuild during the run cannot swap it under the brokers
    shutil.copyfile(BROKER_JAR, jar)
    procs = Processes()
    try:
        kassign = start_kassign(work / "kassign", procs, *KASSIGN_ARGS)
        settings = {**broker_settings(kassign.target), **(extra or {})}
        cluster = start_cluster(
            work / "cluster", f"{broker_classpath}:{jar}", procs, RACKS, extra=settings
        )
        yield BrokerCluster(cluster, kassign, procs, work)
    finally:
        procs.kill_all()
