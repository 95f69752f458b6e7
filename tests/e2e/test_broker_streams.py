"""kassign as the broker's task assignor for a KIP-1071 streams group (issue 15, streams half).

The shared three-rack cluster (``broker_cluster``: kafka_2.13 4.4.0 on loopback, the plug-in jar on
the brokers' classpath) names ``io.kassign.broker.KassignStreamsTaskAssignor`` in
``group.streams.assignors`` (KIP-1357), with
one standby and ``zone`` as the standby tag key for every streams group. A Kafka Streams 4.3.1
application (``tests/e2e/app``: a count per key, exactly-once) runs three instances with
``group.protocol=streams`` in zones a, b, a. Shown:

- the group's assignments are computed by kassign: the broker plug-in's ``kassign assigned`` lines
  match the Assign calls kassign's Prometheus metrics count, and no plug-in line says fallback;
- every standby sits in another zone than its active (the only zone-b instance holds the
  standbys of the zone-a actives);
- every record produced is counted;
- balance LOAD with ``kassign.topic.names.bootstrap.servers`` the brokers' own listener (issue 25):
  the plug-in describes the group with Kafka's Admin client off the rebalance path, so a
  rebalance after the first sends each task's source partition by topic name (kassign has no load
  source here: the loads are counts, and its note says so).

Figures are written to ``broker-streams-figures.json`` in the pytest temp directory.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.v1 import assignment_pb2, common_pb2

from tests.e2e.broker_cluster import broker_cluster
from tests.e2e.harness import (
    TASKS,
    App,
    Cluster,
    Instance,
    Kassign,
    calls,
    metric_value,
    tails,
    wait_until,
    write_figures,
)

ASSIGNOR = "io.kassign.broker.KassignStreamsTaskAssignor"
ASSIGNED = "kassign assigned streams group"
FALLBACK = "kassign fallback:"
KEYS = 12
ZONES = {"a": "zone-a", "b": "zone-b", "c": "zone-a"}

FIGURES: dict[str, object] = {}


def broker_settings() -> dict[str, str]:
    """What the brokers add for streams groups: our assignor and the group defaults.

    Heartbeats every second (Kafka's floor is 5 s) so members learn new assignments quickly; one
    second of initial delay so the three instances are assigned together.
    """
    return {
        "group.streams.assignors": ASSIGNOR,
        "group.streams.num.standby.replicas": "1",
        "group.streams.rack.aware.assignment.tags": "zone",
        "group.streams.min.heartbeat.interval.ms": "500",
        "group.streams.heartbeat.interval.ms": "1000",
        "group.streams.initial.rebalance.delay.ms": "1000",
        # issue 25: balance LOAD, each task's source partitions from the group's description
        # (Kafka's Admin client on each broker's own listener, off the rebalance path)
        "kassign.streams.balance": "load",
        "kassign.topic.names.bootstrap.servers": "{listener}",
        "kassign.topic.names.refresh.ms": "2000",
    }


def app_settings() -> dict[str, str]:
    """The Streams side: the streams protocol, one thread each, exactly-once, no record cache."""
    return {
        "group.protocol": "streams",
        "processing.guarantee": "exactly_once_v2",
        "num.stream.threads": "1",
        "replication.factor": "1",
        "statestore.cache.max.bytes": "0",
        "commit.interval.ms": "100",
        "metadata.max.age.ms": "5000",
        "producer.transaction.timeout.ms": "5000",
    }


@dataclass(frozen=True, slots=True)
class Setup:
    cluster: Cluster
    kassign: Kassign
    app: App

    def logs(self) -> list[Path]:
        return [*self.app.logs(), self.kassign.log, *self.cluster.logs]

    def broker_text(self) -> str:
        return "".join(log.read_text(errors="replace") for log in self.cluster.logs)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    FIGURES["started"] = time.monotonic()
    return tmp_path_factory.mktemp("broker-streams")


@pytest.fixture(scope="module")
def setup(work: Path, e2e_classpaths: tuple[str, str]) -> Iterator[Setup]:
    started = time.monotonic()
    try:
        with broker_cluster(work / "brokers", e2e_classpaths[0], broker_settings()) as running:
            FIGURES["cluster_up_seconds"] = round(time.monotonic() - started, 1)
            cluster, kassign = running.cluster, running.kassign
            app = App("broker-streams", cluster.bootstrap, e2e_classpaths[1], work / "app",
                      running.procs, app_settings())  # fmt: skip
            app.create_topics()
            yield Setup(cluster, kassign, app)
    finally:
        write_figures(
            FIGURES, work / "broker-streams-figures.json", "kassign broker streams figures"
        )


def journaled(setup: Setup) -> list[assignment_pb2.AssignRequest]:
    """The plug-ins' Streams requests in kassign's journal (group ``streams@broker-N``)."""
    found = []
    for f in sorted((setup.kassign.log.parent / "journal").glob("requests-*.jsonl")):
        for line in f.read_text().splitlines():
            if not line.endswith("}"):  # a line still being written
                continue
            request = json_format.Parse(line, assignment_pb2.AssignRequest())
            if request.group_id.startswith("streams@broker-"):
                found.append(request)
    return found


def sources(request: assignment_pb2.AssignRequest) -> dict[str, list[tuple[str, int, bool]]]:
    """Each task's partitions: (topic, partition, is a source)."""
    return {
        f"{t.id.subtopology}_{t.id.partition}": [
            (tp.topic, tp.partition, tp.is_source) for tp in t.topic_partitions
        ]
        for t in request.tasks
    }


def zone_of(instances: list[Instance], task: str, standby: bool) -> set[str]:
    return {
        i.zone
        for i in instances
        if i.assignments() and task in (i.assignments()[-1].standby if standby else i.active())
    }


def settled(instances: list[Instance]) -> bool:
    """Every task active once and standing by once, on running instances."""
    if not all(i.running() and i.assignments() for i in instances):
        return False
    actives = [t for i in instances for t in i.active()]
    standbys = [t for i in instances for t in i.assignments()[-1].standby]
    return sorted(actives) == sorted(TASKS) and sorted(standbys) == sorted(TASKS)


def test_a_streams_group_is_assigned_by_kassign_on_the_brokers(setup: Setup) -> None:
    app = setup.app
    t0 = time.monotonic()
    app.produce(KEYS, 50)
    instances = [app.start(name, zone, **{"client.rack": zone}) for name, zone in ZONES.items()]
    wait_until("three instances running, each task active once and standing by once",
               lambda: settled(instances), 60, setup.logs)  # fmt: skip
    FIGURES["settled_seconds"] = round(time.monotonic() - t0, 1)

    for task in sorted(TASKS):
        active, standby = zone_of(instances, task, False), zone_of(instances, task, True)
        assert active and standby and not active & standby, (
            f"task {task}: active in {active}, standby in {standby}\n{tails(setup.logs())}"
        )

    app.produce(KEYS, 50)
    expected = {f"k{k}": 100 for k in range(KEYS)}
    wait_until("every record counted", lambda: app.counts() == expected, 60, setup.logs,
               interval=0.5)  # fmt: skip

    text = setup.broker_text()
    assigned, fallbacks = text.count(ASSIGNED), text.count(FALLBACK)
    handled = metric_value(
        setup.kassign.metrics_text(),
        "grpc_server_handled_total",
        grpc_service="kassign.v1.TaskAssignmentService",
        grpc_method="Assign",
        grpc_code="OK",
    )
    # every broker warms up (two one-task calls, group id kassign-warm-up) when it starts
    warmups = len(calls([setup.kassign.log], "kassign-warm-up"))
    groups = sum(len(calls([setup.kassign.log], f"streams@broker-{n}")) for n in (1, 2, 3))
    FIGURES.update(assignments=assigned, kassign_calls=groups, warm_up_calls=warmups,
                   fallbacks=fallbacks)  # fmt: skip
    assert fallbacks == 0, f"the plug-in fell back\n{tails(setup.cluster.logs)}"
    assert assigned >= 1 and groups == assigned, f"{assigned} plug-in lines, {groups} kassign calls"
    assert handled == groups + warmups, f"{handled} Assign calls answered"

    # issue 25: the first rebalance of the group went without sources and asked the plug-in's
    # background thread to describe it; a later one carries each task's source partition by name.
    # Should every rebalance so far have come before the describing, c leaves (a clean close): one more.
    t1 = time.monotonic()
    expected = {t: [(setup.app.input, int(t.split("_")[1]), True)] for t in sorted(TASKS)}
    if not any(sources(r) == expected for r in journaled(setup)):
        instances[-1].proc.terminate()
    wait_until("a journaled request with the tasks' source partitions",
               lambda: any(sources(r) == expected for r in journaled(setup)), 60,
               setup.logs)  # fmt: skip
    sent = journaled(setup)
    assert all(r.configs.balance == common_pb2.BALANCE_LOAD for r in sent)
    empty = {t: [] for t in expected}
    assert all(sources(r) in (empty, expected) for r in sent), [sources(r) for r in sent]
    # the server journals a request before it answers, the plug-in logs its line after the
    # answer: the line may come a moment after the journal (a loaded clean-clone run read the
    # log first and failed)
    wait_until("the plug-in's line for the call with sources",
               lambda: "(sources of broker-streams)" in setup.broker_text(), 30,
               setup.logs)  # fmt: skip
    assert "(no sources yet)" in setup.broker_text(), "the group's first rebalance went without"
    FIGURES["requests_with_sources"] = [sources(r) == expected for r in sent]
    FIGURES["sources_seconds"] = round(time.monotonic() - t1, 1)
    FIGURES["test_seconds"] = round(time.monotonic() - t0, 1)
