"""The two kinds of group the cluster benchmark runs, behind one shape the scenarios drive.

``StreamsGroup``: Kafka Streams instances of ``tests/e2e/app``'s E2e application (a count per key
with a state store and its changelog, exactly-once v2), started through ``tests/e2e/harness.App``
with ``client.rack`` and the ``BENCH`` probe. ``ConsumerGroup``: ``ConsumerE2e`` consumers
(classic protocol, ``client.rack``, KIP-881) with the strategy under test. Both: ``start`` a
member in a rack (a restart keeps its state directory and writes a new log), ``stop`` (SIGTERM,
as an operator's restart), ``kill`` (SIGKILL), ``settled`` (every live member reported a new
assignment since the event and, for Streams, is RUNNING, restoring nothing and caught up), and
``runs``: one ``ProcessRun`` per JVM started, for cluster_results.
"""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cluster_results import (
    STATE_LINE,
    ProcessRun,
    consumers_settled,
    owned_now,
    streams_settled,
)

from tests.e2e.group import consumer_properties
from tests.e2e.harness import JVM_FLAGS, SLF4J_FLAGS, App, Instance, Processes, now_ms

RACKS = ("rack-a", "rack-b", "rack-c")  # of brokers 1, 2, 3 (tests/e2e/broker_cluster.py)
MEMBER_RACKS = {"i1": "rack-a", "i2": "rack-b", "i3": "rack-c", "i4": "rack-a"}
CONSUMER_MAIN = "io.kassign.e2e.ConsumerE2e"
KASSIGN_TASK_ASSIGNOR = "io.kassign.streams.KassignTaskAssignor"
KASSIGN_CONSUMER_ASSIGNOR = "io.kassign.consumer.KassignConsumerAssignor"
CONSUMER_STRATEGIES = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    "kassign rack-optimal": KASSIGN_CONSUMER_ASSIGNOR,
}


def layout(partitions: int) -> str:
    """Two replicas a partition, leaders rotating over brokers 1-3 (as tests/e2e/group.py's
    ``replicas``): each partition misses one rack, so where a task runs decides whether its
    reads cross racks; with three replicas every rack would hold every partition."""
    return ";".join(f"{1 + p % 3},{1 + (p + 1) % 3}" for p in range(partitions))


def streams_settings(assignor: str, kassign_target: str) -> dict[str, str]:
    """Both runs' Streams configs: Kafka's defaults but for exactly-once v2, one standby, two
    replicas for internal topics, a 6 s session (a killed instance is noticed soon) and the
    probe; kassign's run adds its plug-in and KIP-925's ``min_traffic``."""
    common = {
        "group.protocol": "classic",
        "processing.guarantee": "exactly_once_v2",
        "num.stream.threads": "1",
        "num.standby.replicas": "1",
        "replication.factor": "2",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "producer.transaction.timeout.ms": "10000",
        "e2e.bench.ms": "1000",
    }
    if assignor == "kafka":
        return common
    return {
        **common,
        "task.assignor.class": KASSIGN_TASK_ASSIGNOR,
        "kassign.target": kassign_target,
        "rack.aware.assignment.strategy": "min_traffic",
    }


@dataclass
class StreamsGroup:
    app: App
    max_lag: int
    started: dict[str, int] = field(default_factory=dict)  # name -> runs so far
    live: dict[str, Instance] = field(default_factory=dict)

    def start(self, name: str, rack: str) -> None:
        run = self.started.get(name, 0) + 1
        self.started[name] = run
        self.live[name] = self.app.start(
            name, rack, log_name=f"app-{run}.log", **{"client.rack": rack}
        )

    def stop(self, name: str) -> None:
        proc = self.live.pop(name).proc
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)

    def kill(self, name: str) -> None:
        proc = self.live.pop(name).proc
        proc.kill()
        proc.wait(timeout=30)

    def settled(self, since_ms: int, max_lag: int | None = None) -> bool:
        """``max_lag`` None: after an event (each live instance RUNNING again since it, lag
        within ``self.max_lag``); a number: drained, probes since ``since_ms`` only."""
        texts = [i.text() for i in self.live.values()]
        renewed = max_lag is not None or all(
            any(m[2] == "RUNNING" and int(m[3]) >= since_ms for m in STATE_LINE.finditer(t))
            for t in texts
        )
        lasts = [ProcessRun("", t).last() for t in texts]
        lag = self.max_lag if max_lag is None else max_lag
        return (
            renewed
            and all(i.proc.poll() is None for i in self.live.values())
            and streams_settled(lasts, since_ms, lag)
        )

    def logs(self) -> list[Path]:
        return self.app.logs()

    def live_names(self) -> list[str]:
        return list(self.live)

    def runs(self) -> list[ProcessRun]:
        return [ProcessRun(i.zone, i.text()) for i in self.app.instances]


@dataclass
class ConsumerGroup:
    group_id: str
    bootstrap: str
    classpath: str
    strategy: str  # a key of CONSUMER_STRATEGIES
    kassign_target: str
    topic: str
    partitions: int
    work: Path
    procs: Processes
    members: list[tuple[str, Path, Path]] = field(default_factory=list)  # rack, log, records
    live: dict[str, tuple[subprocess.Popen[bytes], Path]] = field(
        default_factory=dict
    )  # name -> (proc, log)
    started: dict[str, int] = field(default_factory=dict)

    def start(self, name: str, rack: str) -> None:
        run = self.started.get(name, 0) + 1
        self.started[name] = run
        home = self.work / name
        home.mkdir(parents=True, exist_ok=True)
        strategy = CONSUMER_STRATEGIES[self.strategy]
        props = {
            **consumer_properties(self.bootstrap, self.group_id, name, rack, strategy, home),
            "e2e.topics": self.topic,
            "e2e.bench.ms": "1000",
        }
        if CONSUMER_STRATEGIES[self.strategy] == KASSIGN_CONSUMER_ASSIGNOR:
            props |= {
                "kassign.target": self.kassign_target,
                "kassign.consumer.assignor": "rack-optimal",
            }
        config = home / "consumer.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log = home / f"consumer-{run}.log"
        args = ["java", *JVM_FLAGS, "-Xmx256m", *SLF4J_FLAGS, "-cp", self.classpath, CONSUMER_MAIN]
        proc = self.procs.start([*args, "consumer", str(config)], log, cwd=home)
        self.members.append((rack, log, home / "records.txt"))
        self.live[name] = (proc, log)

    def stop(self, name: str) -> None:
        proc = self.live.pop(name)[0]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)

    def kill(self, name: str) -> None:
        proc = self.live.pop(name)[0]
        proc.kill()
        proc.wait(timeout=30)

    def settled(self, since_ms: int, max_lag: int | None = None) -> bool:
        texts = [log.read_text(errors="replace") for _, log in self.live.values()]
        renewed = all((o := owned_now(t)) is not None and o[2] >= since_ms for t in texts)
        return renewed and consumers_settled(texts, self.partitions, 2000, now_ms())

    def logs(self) -> list[Path]:
        return [log for _, log, _ in self.members]

    def live_names(self) -> list[str]:
        return list(self.live)

    def runs(self) -> list[ProcessRun]:
        return [ProcessRun(rack, log.read_text(errors="replace")) for rack, log, _ in self.members]

    def values(self) -> list[str]:
        """Every record id the group processed, repeats kept (lines ``topic partition offset
        id:padding``)."""
        seen = []
        for records in {r for _, _, r in self.members}:
            if records.exists():
                lines = records.read_text().splitlines()
                seen += [ln.rsplit(" ", 1)[-1].partition(":")[0] for ln in lines if ln]
        return seen
