"""kassign against Kafka's own assignors on a real three-rack KRaft cluster (issue 26; ``make
bench-cluster``; docs/benchmarks.md has the figures and how to read them).

One cluster for the whole run (``tests/e2e/harness.start_cluster``: three nodes of kafka_2.13 on
loopback, ``broker.rack`` rack-a/b/c, ``RackAwareReplicaSelector`` so consumers fetch from a
replica in their own rack when there is one) and one ``kassign serve``. Then, for each scenario
and each assignor, a fresh group on fresh topics (two replicas a partition, each partition
missing one rack) under a steady producer (``ConsumerE2e produce``, ``--rate`` records a second
of unique ids):

- rolling: four members up; each in turn stopped (SIGTERM) and started again, waiting for the
  group to settle between;
- scale-out: three members up, a fourth joins;
- kill: four members up; one is killed (SIGKILL), the group settles, it comes back.

Each starts its members, waits until settled and ``--warm`` seconds more, plays the events
(timing each until settled), watches ``--observe`` seconds, stops the producer and checks
every record was processed exactly once. Streams: Kafka's HighAvailabilityTaskAssignor (rack
strategy ``none``, its default) against kassign's plug-in (high availability, ``min_traffic``),
both with one standby. Consumers (classic protocol, ``client.rack``): Kafka's ``range`` and
``cooperative-sticky`` (both KIP-881 rack-aware) against kassign's ``rack-optimal``.

    .venv/bin/python bench/cluster/cluster_bench.py [--scenarios rolling,kill] [--consumer-scenarios ""] [--rate 200]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cluster_groups import (
    CONSUMER_STRATEGIES,
    MEMBER_RACKS,
    RACKS,
    ConsumerGroup,
    StreamsGroup,
    layout,
    streams_settings,
)
from cluster_output import STREAMS_LABELS, retable, run_name, versions, write
from cluster_results import ProcessRun, consumed_once, exactly_once, row, table

from tests.e2e.harness import (
    JVM_FLAGS,
    PLUGIN_JAR,
    ROOT,
    SLF4J_FLAGS,
    App,
    Cluster,
    Processes,
    build_classpaths,
    now_ms,
    run_java,
    start_cluster,
    start_kassign,
    wait_until,
)

SCENARIOS = ("rolling", "scale-out", "kill")
CLUSTER_SETTINGS = {
    "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
    "transaction.state.log.min.isr": "1",
}


class Group(Protocol):
    def start(self, name: str, rack: str) -> None: ...
    def stop(self, name: str) -> None: ...
    def kill(self, name: str) -> None: ...
    def settled(self, since_ms: int, max_lag: int | None = None) -> bool: ...
    def logs(self) -> list[Path]: ...
    def runs(self) -> list[ProcessRun]: ...
    def live_names(self) -> list[str]: ...


def settle(group: Group, since_ms: int, timeout: float, max_lag: int | None = None) -> float:
    """Seconds from ``since_ms`` until the group is settled (to the probes' second)."""
    wait_until(
        "the group to settle", lambda: group.settled(since_ms, max_lag) or None, timeout,
        group.logs, interval=0.5,
    )  # fmt: skip
    return (now_ms() - since_ms) / 1000


def play(group: Group, scenario: str, warm: float, observe: float, timeout: float) -> list[float]:
    """The scenario's events on ``group``: each one's seconds until settled."""
    first = ["i1", "i2", "i3"] if scenario == "scale-out" else ["i1", "i2", "i3", "i4"]
    begun = now_ms()
    for name in first:
        group.start(name, MEMBER_RACKS[name])
    settle(group, begun, timeout)
    time.sleep(warm)
    times = []
    if scenario == "rolling":
        for name in first:
            at = now_ms()
            group.stop(name)
            group.start(name, MEMBER_RACKS[name])
            times.append(settle(group, at, timeout))
    elif scenario == "scale-out":
        at = now_ms()
        group.start("i4", MEMBER_RACKS["i4"])
        times.append(settle(group, at, timeout))
    else:
        at = now_ms()
        group.kill("i2")
        times.append(settle(group, at, timeout))
        at = now_ms()
        group.start("i2", MEMBER_RACKS["i2"])
        times.append(settle(group, at, timeout))
    time.sleep(observe)
    return times


class Load:
    """The steady producer: ``rate`` records a second, ids r0, r1, ... as keys and, with ``pad``
    bytes after a colon, as values, until ``stop``."""

    def __init__(
        self, classpath: str, bootstrap: str, rate: int, pad: int, topic: str, log: Path,
        procs: Processes,
    ) -> None:  # fmt: skip
        java = [
            "java",
            *JVM_FLAGS,
            "-Xmx128m",
            f"-De2e.pad={pad}",
            *SLF4J_FLAGS,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        ]
        self.log = log
        self.proc = procs.start(
            [
                *java,
                "-cp",
                classpath,
                "io.kassign.e2e.ConsumerE2e",
                "produce",
                bootstrap,
                str(rate),
                topic,
            ],
            log,
        )

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        m = re.search(r"^E2E produced (\d+) at", self.log.read_text(), re.MULTILINE)
        assert m is not None, f"the producer did not finish: {self.log.read_text()[-2000:]}"
        return int(m[1])


def one_run(
    variant: str, scenario: str, assignor: str, cluster: Cluster, classpath: str, target: str,
    work: Path, opts: argparse.Namespace,
) -> dict[str, object]:  # fmt: skip
    name = run_name(variant, scenario, assignor)
    home = work / name
    procs = Processes()
    try:
        topics = [f"{name}-in", f"{name}-out"] if variant == "streams" else [f"{name}-in"]
        spec = [f"{t}={layout(opts.partitions)}" for t in topics]
        run_java(classpath, "io.kassign.e2e.ConsumerE2e", "topics", cluster.bootstrap, *spec)
        load = Load(
            classpath,
            cluster.bootstrap,
            opts.rate,
            opts.pad,
            topics[0],
            home / "producer.log",
            procs,
        )
        group: Group
        if variant == "streams":
            settings = streams_settings(assignor, target)
            app = App(name, cluster.bootstrap, classpath, home, procs, settings)
            group = StreamsGroup(app, max_lag=opts.rate)
        else:
            consumers = ConsumerGroup(
                name,
                cluster.bootstrap,
                classpath,
                assignor,
                target,
                topics[0],
                opts.partitions,
                home,
                procs,
            )
            group = consumers
        times = play(group, scenario, opts.warm, opts.observe, opts.timeout)
        produced = load.stop()
        if isinstance(group, StreamsGroup):
            settle(group, now_ms(), opts.timeout, max_lag=0)
            check = verify_streams(group.app, produced)
        else:
            check = verify_consumers(consumers, produced)
        for live in group.live_names():
            group.stop(live)
        runs = group.runs()
        rebalances = len(set().union(*(r.generations() for r in runs)))
        label = STREAMS_LABELS.get(assignor, assignor) if variant == "streams" else assignor
        result = row(
            f"{variant} {scenario}", label, runs, times, rebalances, check, variant == "streams"
        )
        print(json.dumps(result), flush=True)
        return result
    finally:
        procs.kill_all()


def verify_streams(app: App, produced: int) -> dict[str, int]:
    """The output's last count per key: every id exactly once (read_committed)."""
    check: dict[str, int] = {}
    for _ in range(3):
        check = exactly_once(app.counts(), produced)
        if check["missing"] == 0:
            break
        time.sleep(5)
    return check


def verify_consumers(group: ConsumerGroup, produced: int) -> dict[str, int]:
    """Each id processed at least once (waited for), and how many more than once."""
    wait_until(
        "every record consumed",
        lambda: consumed_once(group.values(), produced)["missing"] == 0 or None,
        120,
        group.logs,
        interval=1,
    )
    return consumed_once(group.values(), produced)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--consumer-scenarios", default=",".join(SCENARIOS), help="'' for none")
    parser.add_argument("--streams", default="1", help="0: skip the Streams runs")
    parser.add_argument("--rate", type=int, default=200, help="records a second")
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--pad", type=int, default=200, help="bytes added to each record's value")
    parser.add_argument(
        "--warm", type=float, default=20, help="seconds of steady state before the events"
    )
    parser.add_argument("--observe", type=float, default=20, help="seconds after the last event")
    parser.add_argument(
        "--timeout", type=float, default=240, help="seconds an event may take to settle"
    )
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench-cluster")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "cluster" / "results")
    parser.add_argument(
        "--retable", action="store_true",
        help="run nothing: recompute --results' traffic from the logs under --work",
    )  # fmt: skip
    opts = parser.parse_args(argv)
    if opts.retable:
        print(table(retable(opts.work, opts.results)))
        return 0
    began = time.monotonic()
    shutil.rmtree(opts.work, ignore_errors=True)
    opts.work.mkdir(parents=True)
    broker_cp, app_cp = build_classpaths(opts.work)
    assert PLUGIN_JAR.exists(), f"{PLUGIN_JAR} is missing: `make java` builds it"
    plugin = opts.work / PLUGIN_JAR.name
    shutil.copyfile(PLUGIN_JAR, plugin)
    classpath = f"{app_cp}:{plugin}"
    info = versions(broker_cp, app_cp)
    procs = Processes()
    rows: list[dict[str, object]] = []
    try:
        kassign = start_kassign(opts.work / "kassign", procs)
        cluster = start_cluster(
            opts.work / "cluster", broker_cp, procs, RACKS, extra=CLUSTER_SETTINGS
        )
        plan: list[tuple[str, str, str]] = []
        if opts.streams != "0":
            plan += [
                ("streams", s, a)
                for s in opts.scenarios.split(",")
                if s
                for a in ("kafka", "kassign")
            ]
        plan += [
            ("consumer", s, a)
            for s in opts.consumer_scenarios.split(",")
            if s
            for a in CONSUMER_STRATEGIES
        ]
        for variant, scenario, assignor in plan:
            assert scenario in SCENARIOS, f"--scenarios: unknown scenario {scenario!r}"
            rows.append(
                one_run(
                    variant, scenario, assignor, cluster, classpath, kassign.target, opts.work, opts
                )
            )
            write(opts.results, rows, info, vars(opts), began)
    finally:
        procs.kill_all()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
