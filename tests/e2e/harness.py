"""Real processes for the end-to-end test: a KRaft broker, ``kassign serve``, Kafka Streams JVMs.

Nothing here stands in for Kafka: the broker is ``kafka.Kafka`` from kafka_2.13 4.4.0, the
application is Kafka Streams 4.3.1 (``app/src/main/java/io/kassign/e2e/E2e.java``), and both
classpaths come from Maven (``broker/pom.xml``, ``app/pom.xml``; ~/.m2 is the cache). Every
process is started through a ``Processes`` registry that SIGKILLs whatever is still running
when its owner (a fixture) ends, and every wait is bounded: ``wait_until`` fails with the last
lines of the logs that explain why.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from tests.ops.serving import METRICS_LINE, Served

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
PLUGIN_JAR = ROOT / "clients" / "java" / "target" / "kassign-client.jar"
TASKS = frozenset(f"0_{p}" for p in range(6))  # one sub-topology over the 6 input partitions

T = TypeVar("T")

# JVM flags for short-lived test JVMs on a small machine: quick start, small heaps.
JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"]
# slf4j-simple on stdout (one stream, so log lines and the app's own lines never interleave).
SLF4J_FLAGS = [
    "-Dorg.slf4j.simpleLogger.logFile=System.out",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
    # the config dumps: hundreds of lines per client, no diagnosis in them
    *(
        f"-Dorg.slf4j.simpleLogger.log.{name}=warn"
        for name in (
            "org.apache.kafka.clients.consumer.ConsumerConfig",
            "org.apache.kafka.clients.producer.ProducerConfig",
            "org.apache.kafka.clients.admin.AdminClientConfig",
            "org.apache.kafka.streams.StreamsConfig",
            "kafka.server.KafkaConfig",
            "org.apache.kafka.common.config.AbstractConfig",
            "org.apache.kafka.common.utils.AppInfoParser",
        )
    ),
]


def tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"--- {path}: (no file)"
    return f"--- {path} (last {min(lines, len(text))} of {len(text)} lines)\n" + "\n".join(
        text[-lines:]
    )


def tails(paths: Iterable[Path], lines: int = 30) -> str:
    return "\n".join(tail(p, lines) for p in paths)


def wait_until(
    what: str,
    probe: Callable[[], T | None],
    timeout: float,
    logs: Callable[[], Iterable[Path]] = lambda: (),
    interval: float = 0.1,
) -> T:
    """``probe()`` until it returns something other than None/False; AssertionError at timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for {what}\n" + tails(logs())
            )
        time.sleep(interval)


def write_figures(figures: dict[str, object], report: Path, title: str) -> None:
    """An e2e module's figures, at its end: ``file_seconds`` since ``figures["started"]`` (a
    ``time.monotonic()``), written to ``report`` as JSON and printed (seen with ``pytest -s``)."""
    begun = figures.pop("started")
    assert isinstance(begun, float)
    figures["file_seconds"] = round(time.monotonic() - begun, 1)
    report.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\n{title} ({report}):\n{json.dumps(figures, indent=2)}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def now_ms() -> int:
    return int(time.time() * 1000)


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it if pytest itself dies (Linux's PR_SET_PDEATHSIG).

    Fixture teardown kills every process on a failure; this covers pytest being killed, so no
    broker or JVM outlives a CI job's timeout.
    """
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


@dataclass
class Processes:
    """Everything a fixture started; ``kill_all`` SIGKILLs what still runs and reaps it."""

    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(
        self,
        args: Sequence[str],
        log: Path,
        env: dict[str, str] | None = None,
        cwd: Path = ROOT,
    ) -> subprocess.Popen[bytes]:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as sink:
            proc = subprocess.Popen(
                list(args),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - pytest runs no threads of ours
            )
        self.started.append(proc)
        return proc

    def kill_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
        for proc in self.started:
            try:
                proc.wait(timeout=30)
            except (
                subprocess.TimeoutExpired
            ):  # pragma: no cover - a stuck process is reported, not hidden
                print(f"process {proc.pid} survived SIGKILL for 30 s", file=sys.stderr)


# ---------------------------------------------------------------------------------------- build


def build_classpaths(work: Path) -> tuple[str, str]:
    """(broker classpath, app classpath): both Maven projects, built in parallel."""
    runs = {}
    for name in ("broker", "app"):
        log = work / f"mvn-{name}.log"
        with log.open("wb") as sink:
            runs[name] = (
                subprocess.Popen(
                    [
                        "mvn",
                        "-B",
                        "-q",
                        "-f",
                        str(E2E / name / "pom.xml"),
                        "package",
                        "dependency:build-classpath",
                    ],
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    cwd=ROOT,
                ),
                log,
            )
    for name, (proc, log) in runs.items():
        try:
            status = proc.wait(timeout=900)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert status == 0, f"mvn for tests/e2e/{name} failed\n{tail(log, 60)}"
    broker = (E2E / "broker" / "target" / "classpath.txt").read_text().strip()
    app = (E2E / "app" / "target" / "classpath.txt").read_text().strip()
    return broker, os.pathsep.join([str(E2E / "app" / "target" / "classes"), app])


def run_java(classpath: str, main: str, *args: str, timeout: float = 120) -> str:
    """One run of a short-lived JVM tool (topics, producer, verifier) to its end; its stdout."""
    run = subprocess.run(
        ["java", *JVM_FLAGS, "-Xmx128m", *SLF4J_FLAGS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         "-cp", classpath, main, *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False,
    )  # fmt: skip
    assert run.returncode == 0, f"{main} {args[0]} failed ({run.returncode}):\n{run.stdout[-4000:]}"
    return run.stdout


# --------------------------------------------------------------------------------------- broker


@dataclass(frozen=True, slots=True)
class Broker:
    proc: subprocess.Popen[bytes]
    bootstrap: str
    log: Path


BROKER_SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "inter.broker.listener.name": "PLAINTEXT",
    "num.partitions": "1",
    "auto.create.topics.enable": "false",
    # one broker: every internal topic has one replica
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "3",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    # fast groups: no initial delay, and the apps' 6 s session timeout allowed
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    # a killed exactly-once instance's open transaction is aborted within ~1 s of its timeout
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
    "log.flush.interval.messages": "100000",
}


def start_broker(work: Path, classpath: str, procs: Processes) -> Broker:
    """A combined broker+controller on loopback, formatted fresh under ``work``."""
    return start_cluster(work, classpath, procs, racks=(None,)).brokers[0]


@dataclass(frozen=True, slots=True)
class Cluster:
    """KRaft nodes 1..n on loopback: node 1 broker and controller, the others brokers only."""

    brokers: tuple[Broker, ...]

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers)

    @property
    def logs(self) -> list[Path]:
        return [b.log for b in self.brokers]


def start_cluster(
    work: Path,
    classpath: str,
    procs: Processes,
    racks: Sequence[str | None],
    extra: Mapping[str, str] | None = None,
) -> Cluster:
    """``len(racks)`` nodes, node ``i + 1`` with ``broker.rack`` ``racks[i]`` (None: no rack).

    ``extra`` is added to every node's server.properties (plug-in classes and their keys, say).

    One controller (node 1, also a broker) is the quorum: no election to wait for. The ports are
    picked free just before the nodes bind them; if another process takes one in between, a node
    fails to bind and the whole cluster is started again on new ports (three tries).
    """
    for attempt in range(1, 4):
        cluster = _start_cluster(work / f"try-{attempt}", classpath, procs, racks, extra or {})
        if cluster is not None:
            return cluster
    raise AssertionError("the cluster failed to bind its ports three times")


def _node_settings(
    node: int,
    port: int,
    controller: int,
    work: Path,
    racks: Sequence[str | None],
    extra: Mapping[str, str],
) -> dict[str, str]:
    replicas = str(min(3, len(racks)))
    settings = {
        **BROKER_SETTINGS,
        "node.id": str(node),
        "offsets.topic.replication.factor": replicas,
        "transaction.state.log.replication.factor": replicas,
        "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "log.dirs": str(work / f"data-{node}"),
        # "{listener}" in a value: this node's own host:port, known only once the port is picked
        **{k: v.replace("{listener}", f"127.0.0.1:{port}") for k, v in extra.items()},
    }
    if node == 1:
        settings["listeners"] = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}"
    else:
        settings["process.roles"] = "broker"
        settings["listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
    rack = racks[node - 1]
    if rack is not None:
        settings["broker.rack"] = rack
    return settings


def _start_cluster(
    work: Path,
    classpath: str,
    procs: Processes,
    racks: Sequence[str | None],
    extra: Mapping[str, str],
) -> Cluster | None:
    work.mkdir(parents=True, exist_ok=True)
    controller = free_port()
    nodes = range(1, len(racks) + 1)
    ports = {node: free_port() for node in nodes}
    java = ["java", *JVM_FLAGS, *SLF4J_FLAGS, "-cp", classpath]
    configs = {}
    for node in nodes:
        configs[node] = work / f"server-{node}.properties"
        settings = _node_settings(node, ports[node], controller, work, racks, extra)
        configs[node].write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    cluster = cluster_id()
    formats = [
        subprocess.Popen(
            [*java, "kafka.tools.StorageTool", "format", "-t", cluster, "-c", str(configs[n])],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for n in nodes
    ]
    try:
        for fmt in formats:
            out, _ = fmt.communicate(timeout=120)
            assert fmt.returncode == 0, f"kafka-storage format failed:\n{out[-3000:]}"
    finally:
        for fmt in formats:  # none outlives a failure
            if fmt.poll() is None:
                fmt.kill()
                fmt.wait(timeout=30)
    logs = {node: work / f"broker-{node}.log" for node in nodes}
    started = {
        node: procs.start(
            [*java[:1], "-Xmx512m", *java[1:], "kafka.Kafka", str(configs[node])], logs[node]
        )
        for node in nodes
    }

    def outcome() -> str | None:
        up = 0
        for node, proc in started.items():
            text = logs[node].read_text(errors="replace")
            if proc.poll() is not None:
                if "Address already in use" in text:
                    return "retry"
                raise AssertionError(
                    f"node {node} exited with {proc.returncode}\n{tail(logs[node], 60)}"
                )
            up += "Kafka Server started" in text
        return "up" if up == len(started) else None

    result = wait_until("the cluster to start", outcome, 120, lambda: logs.values(), interval=0.2)
    if result == "up":
        return Cluster(tuple(Broker(started[n], f"127.0.0.1:{ports[n]}", logs[n]) for n in nodes))
    for proc in started.values():  # a node that did bind still holds its port and data dir
        proc.kill()
        proc.wait(timeout=30)
    return None


def cluster_id() -> str:
    """A KRaft cluster id as ``kafka-storage random-uuid`` makes one: 16 random bytes, base64url."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):  # Kafka's Uuid.randomUuid avoids ids a CLI reads as options
            return text


# -------------------------------------------------------------------------------------- kassign


CALL_LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO kassign\.calls: assigned group '(?P<group>[^']*)' "
    r"\((?P<assignor>[^)]*)\): (?P<tasks>\d+) tasks, (?P<clients>\d+) clients, (?P<members>\d+) members; "
    r"moved (?P<active>\d+) active, (?P<standby>\d+) standby; (?P<warmups>\d+) warm-ups; "
    r"(?:follow-up rebalance at (?P<followup>\d+)|no follow-up)",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Call:
    """One line of kassign's call log: an assignment the service computed."""

    at_ms: int
    group: str
    clients: int
    moved_active: int
    warmups: int
    followup_ms: int  # 0: none
    line: str


def calls(logs: Iterable[Path], group: str) -> list[Call]:
    found = []
    for log in logs:
        if not log.exists():
            continue
        for m in CALL_LINE.finditer(log.read_text(errors="replace")):
            if m["group"] != group:
                continue
            at = datetime.strptime(
                m["at"], "%Y-%m-%d %H:%M:%S,%f"
            ).timestamp()  # local time, as logged
            found.append(
                Call(
                    int(at * 1000),
                    group,
                    int(m["clients"]),
                    int(m["active"]),
                    int(m["warmups"]),
                    int(m["followup"] or 0),
                    m[0],
                )
            )
    return sorted(found, key=lambda c: c.at_ms)


@dataclass(frozen=True, slots=True)
class Kassign(Served):
    """A ``kassign serve`` the test stops and restarts itself (``Served`` is SIGKILLed at exit)."""

    @property
    def port(self) -> int:
        return int(self.target.rpartition(":")[2])

    def stop(self) -> None:
        """SIGTERM, as a supervisor stops it; waits for the exit."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)


def start_kassign(work: Path, procs: Processes, *args: str, port: int = 0) -> Kassign:
    """``kassign serve`` (one worker) on 127.0.0.1; ``port`` 0 picks one (read from --port-file)."""
    work.mkdir(parents=True, exist_ok=True)
    port_file = work / "port"
    port_file.unlink(missing_ok=True)
    log = work / "serve.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "gen")])}
    proc = procs.start(
        [
            sys.executable, "-m", "kassign.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--port-file", str(port_file), "--workers", "1", "--grace", "1",
            "--metrics-port", "0", "--metrics-host", "127.0.0.1", "--journal", str(work / "journal"),
            *args,
        ],
        log,
        env,
    )  # fmt: skip
    wait_until(
        "kassign serve to start",
        lambda: (
            (
                proc.poll() is None
                and port_file.exists()
                and port_file.read_text().strip() != ""
                and METRICS_LINE.search(log.read_text())
                and "kassign serving on" in log.read_text()
            )
            or None
        ),
        90,
        lambda: [log],
        interval=0.05,
    )
    metrics = METRICS_LINE.search(log.read_text())
    assert metrics is not None
    return Kassign(proc, f"127.0.0.1:{port_file.read_text().strip()}", int(metrics.group(1)), log)


def metric_value(text: str, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when there are none)."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


# ------------------------------------------------------------------------------ the Streams app


ASSIGNMENT_LINE = re.compile(r"^E2E assignment active=(\S*) standby=(\S*) at (\d+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Assignment:
    at_ms: int
    active: frozenset[str]
    standby: frozenset[str]


def _ids(text: str) -> frozenset[str]:
    return frozenset(t for t in text.split(",") if t)


@dataclass
class Instance:
    name: str
    zone: str
    proc: subprocess.Popen[bytes]
    log: Path
    started_ms: int

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def assignments(self) -> list[Assignment]:
        return [
            Assignment(int(m[3]), _ids(m[1]), _ids(m[2]))
            for m in ASSIGNMENT_LINE.finditer(self.text())
        ]

    def active(self) -> frozenset[str]:
        history = self.assignments()
        return history[-1].active if history else frozenset()

    def running(self) -> bool:
        text = self.text()
        return self.proc.poll() is None and text.rfind("->RUNNING at") > text.rfind(
            "->REBALANCING at"
        )

    def count(self, needle: str) -> int:
        return self.text().count(needle)

    def process_id(self) -> str | None:
        """The Streams process id (a UUID), from the client's log prefix."""
        m = re.search(r"stream-client \[.*?-([0-9a-f]{8}-[0-9a-f-]{27})\]", self.text())
        return m[1] if m else None


PLUGIN_LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) .*kassign assigned group (?P<group>\S+): "
    r".*\((?P<clients>[^()]*)\)\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class PluginAssignment:
    """One ``kassign assigned`` line of the plug-in: when, and actives per process id."""

    at_ms: int
    actives: dict[str, int]


def plugin_assignments(instances: Iterable[Instance], group: str) -> list[PluginAssignment]:
    found = []
    for instance in instances:
        for m in PLUGIN_LINE.finditer(instance.text()):
            if m["group"] != group:
                continue
            at = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S.%f").timestamp()
            actives = {
                pid: int(a) for pid, a in re.findall(r"([0-9a-f-]{36})=(\d+)a/", m["clients"])
            }
            found.append(PluginAssignment(int(at * 1000), actives))
    return sorted(found, key=lambda p: p.at_ms)


@dataclass
class App:
    """One Kafka Streams application: its instances (JVMs), topics and settings."""

    app_id: str
    bootstrap: str
    classpath: str
    work: Path
    procs: Processes
    settings: dict[str, str]
    instances: list[Instance] = field(default_factory=list)

    @property
    def input(self) -> str:
        return f"{self.app_id}-in"

    @property
    def output(self) -> str:
        return f"{self.app_id}-out"

    def driver(self, *args: str, timeout: float = 120) -> str:
        """One run of the harness's producer / verifier / topic tool; its stdout."""
        return run_java(self.classpath, "io.kassign.e2e.E2e", *args, timeout=timeout)

    def create_topics(self, partitions: int = 6) -> None:
        self.driver(
            "topics", self.bootstrap, f"{self.input}:{partitions}", f"{self.output}:{partitions}"
        )

    def produce(self, keys: int, per_key: int) -> None:
        self.driver("produce", self.bootstrap, self.input, str(keys), str(per_key))

    def counts(self) -> dict[str, int]:
        out = self.driver("counts", self.bootstrap, self.output, "20000")
        line = next(ln for ln in out.splitlines() if ln.startswith("COUNTS "))
        return {str(k): int(v) for k, v in json.loads(line[len("COUNTS ") :]).items()}

    def start(self, name: str, zone: str, log_name: str = "app.log", **extra: str) -> Instance:
        """A new instance ``name`` (its state in ``work/name``), logging to ``work/name/log_name``
        (a restart may keep its own log)."""
        props = {
            **self.settings,
            **extra,
            "application.id": self.app_id,
            "bootstrap.servers": self.bootstrap,
            "state.dir": str(self.work / name / "state"),
            "client.tag.zone": zone,
            "e2e.input": self.input,
            "e2e.output": self.output,
        }
        (self.work / name).mkdir(parents=True, exist_ok=True)
        config = self.work / name / "app.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log = self.work / name / log_name
        started = now_ms()
        proc = self.procs.start(
            [
                "java",
                *JVM_FLAGS,
                "-Xmx256m",
                *SLF4J_FLAGS,
                "-cp",
                self.classpath,
                "io.kassign.e2e.E2e",
                "app",
                str(config),
            ],
            log,
        )
        instance = Instance(name, zone, proc, log, started)
        self.instances.append(instance)
        return instance

    def live(self) -> list[Instance]:
        return [i for i in self.instances if i.proc.poll() is None]

    def logs(self) -> list[Path]:
        return [i.log for i in self.instances]

    def owned(self, instances: Iterable[Instance] | None = None) -> frozenset[str]:
        return frozenset().union(
            *(i.active() for i in (self.live() if instances is None else instances))
        )


def shadow_report(journal: Path, group: str) -> dict[str, object]:
    """``kassign shadow-report JOURNAL --group G --json`` as a user runs it (issue 26): the
    group's summary, from the journal a test's kassign wrote."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kassign.cli",
            "shadow-report",
            str(journal),
            "--group",
            group,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (summary,) = json.loads(done.stdout)["groups"]
    assert isinstance(summary, dict)
    return summary


def assert_shadow_metrics(metrics: str, room: str, comparisons: Sequence[object]) -> None:
    """kassign's ``kassign_shadow_*`` metrics count every shadow call of the test and add up
    the figures its journal's comparisons hold, for both answers (issue 26)."""
    assert metric_value(metrics, "kassign_shadow_calls_total", room=room) == len(comparisons)
    for answer in ("kafka", "kassign"):
        total = sum(getattr(c, answer).cross_rack_partitions for c in comparisons)
        name = "kassign_shadow_cross_rack_partitions_total"
        assert metric_value(metrics, name, room=room, answer=answer) == total, (answer, total)
        name = "kassign_shadow_max_per_member_count"
        assert metric_value(metrics, name, room=room, answer=answer) == len(comparisons)
