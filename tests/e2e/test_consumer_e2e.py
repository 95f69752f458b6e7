"""kassign under a real plain consumer group (KIP-881) on a real three-rack KRaft cluster.

Three nodes of kafka_2.13 4.4.0 on loopback (node 1 broker and controller, nodes 2 and 3
brokers; ``broker.rack`` rack-a, rack-b, rack-c), two topics of 12 partitions with two replicas
each, placed so that every partition misses one rack. One group, classic protocol, cooperative
rebalancing, kassign's ``rack-optimal`` assignor, mixing Java members (kafka-clients 4.3.1 with
``KassignConsumerAssignor``) and Python members (kafka-python 3.0.12 with ``KassignAssignor``),
each with ``client.rack``. A producer writes records with unique ids throughout. The group goes
through five memberships, and the leader changes language on the way:

    A  p1 (python, rack-c) alone                          leader p1 (python)
    B  j1 (java, rack-a) joins                            leader p1
    C  j2 (java, rack-b) joins                            leader p1
    D  p1 leaves                                          leader j1 or j2 (java)
    E  p2 (python, rack-c) joins                          leader java

After each: every rebalance was computed by kassign (its journal, its call log, its Prometheus
counter and the plug-ins' own lines agree; no fallback line), each member owns exactly what
kassign's answer to the last rebalance gave it (the answer recomputed from the journaled request:
the service is deterministic), the leader's metadata carried the cluster's real replica racks,
and the cross-rack partitions are the fewest possible (those with no replica in any member's
rack: 8 while p1 is alone, 0 after). At the end: every record produced was processed exactly once
across the group, the revocations each member saw in its rebalance listener are the ``revoked``
of kassign's answers that reached it, and the plug-ins counted no fallback.

Figures (per stage: seconds to settle, rebalances, revocations) are printed (``pytest -s``) and
written to ``consumer-e2e-figures.json`` in the pytest temp directory.
"""

from __future__ import annotations

import re
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.group import (
    ASSIGNED,
    FALLBACK,
    JAVA_MAIN,
    Group,
    Member,
    Record,
    Round,
    cross_rack,
    expected_revocations,
    replica_layout,
    replicas,
    rounds,
)
from tests.e2e.harness import (
    JVM_FLAGS,
    SLF4J_FLAGS,
    Cluster,
    Kassign,
    Processes,
    metric_value,
    run_java,
    start_cluster,
    start_kassign,
    tails,
    wait_until,
    write_figures,
)

GROUP = "e2e-consumers"
TOPICS = ("orders", "clicks")
PARTITIONS = 12
RACKS = ("rack-a", "rack-b", "rack-c")  # of brokers 1, 2, 3
RATE = 300  # records a second, for the whole test
SERVICE = "kassign.v1.ConsumerAssignmentService"
STOPPED = (0, 128 + signal.SIGTERM)  # a JVM whose shutdown hooks ran exits 143 on SIGTERM


LAYOUT = replica_layout(TOPICS, PARTITIONS, RACKS)
ALL = frozenset(LAYOUT)

FIGURES: dict[str, object] = {}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    FIGURES["started"] = time.monotonic()
    return tmp_path_factory.mktemp("consumer-e2e")


@pytest.fixture(scope="module")
def cluster(work: Path, e2e_classpaths: tuple[str, str]) -> Iterator[Cluster]:
    started = time.monotonic()
    procs = Processes()
    try:
        cluster = start_cluster(work / "cluster", e2e_classpaths[0], procs, RACKS)
        FIGURES["cluster_up_seconds"] = round(time.monotonic() - started, 1)
        yield cluster
    finally:
        procs.kill_all()
        write_figures(FIGURES, work / "consumer-e2e-figures.json", "kassign consumer e2e figures")


CALL_LINE = re.compile(rf"INFO kassign\.calls: assigned consumer group '{GROUP}' \(rack-optimal\)")
# the group coordinator's own lines: a rebalance begun (from generation N) and a leader's
# assignment received (for generation N)
PREPARING = re.compile(
    rf"Preparing to rebalance group {GROUP} in state \w+ with old generation (\d+)"
)
RECEIVED = re.compile(
    rf"Assignment received from leader \S+ for group {GROUP} for generation (\d+)"
)
QUIET_SECONDS = 1.5  # a settled round must stand this long with no rebalance begun after it


def rebalancing(broker_logs: list[Path]) -> bool:
    """Whether the coordinator has begun a rebalance since the last assignment it received.

    A stage is over only when the group is: kafka-python's leader re-joins once more after a
    cooperative round in which it revoked (its own follow-up, after the other members' one),
    and a round computed after the next stage began would be counted as that stage's.
    """
    text = "".join(log.read_text(errors="replace") for log in broker_logs)
    received = [int(g) for g in RECEIVED.findall(text)]
    if not received:
        return True  # no assignment yet (or the coordinator's wording changed: never settles)
    return any(int(g) >= max(received) for g in PREPARING.findall(text))


class Run:
    """The test's world: the cluster, kassign, the group; and the checks made after each stage."""

    def __init__(self, cluster: Cluster, kassign: Kassign, group: Group) -> None:
        self.cluster = cluster
        self.kassign = kassign
        self.group = group
        self.journal = kassign.log.parent / "journal"
        self.stages: dict[str, dict[str, object]] = {}
        self.rounds_before = 0  # rounds before the current stage
        self.begun_ms = 0
        self.led: dict[str, int] = {}  # per member, rounds it had computed when the stage began

    def begin(self, stage: str) -> None:
        """Before a stage's membership change: when it began, and who had led how often."""
        print(f"\nstage {stage}")
        self.begun_ms = int(time.time() * 1000)
        self.led = {m.name: m.count(ASSIGNED) for m in self.group.members}

    def logs(self) -> list[Path]:
        return [*self.group.logs(), self.kassign.log, *self.cluster.logs]

    def history(self) -> list[Round]:
        return rounds(self.journal, GROUP)

    def settle(self, stage: str, members: list[Member], leaders: list[Member]) -> Member:
        """Waits until ``members`` are the group and own what kassign's last answer gave them,
        then checks that round and every one before it (see the module docstring). Returns the
        leader, which must be one of ``leaders`` (the broker picks a new one when it leaves)."""

        since: dict[int, float] = {}  # rounds in the journal -> when that round first settled

        def settled() -> Round | None:
            history = self.history()
            ids = {m.member_id() for m in members}
            if not history or None in ids or history[-1].members() != ids:
                return None
            last = history[-1]
            if last.all_assigned() != ALL or any(last.revoked(i) for i in ids if i):
                return None  # a first cooperative round: the follow-up is coming
            if any(m.owned() != last.assigned(m.member_id() or "") for m in members):
                return None
            if rebalancing([b.log for b in self.cluster.brokers]):
                since.clear()
                return None  # another round is under way
            first = since.setdefault(len(history), time.monotonic())
            return last if time.monotonic() - first >= QUIET_SECONDS else None

        last = wait_until(f"stage {stage} to settle", settled, 120, self.logs, interval=0.25)
        settled_ms = int(time.time() * 1000)
        history = self.every_round_is_kassigns()
        stage_rounds = history[self.rounds_before :]
        self.rounds_before = len(history)

        # kassign's answer is what each member owns, balanced, with the fewest cross-rack reads
        assert last.replica_racks() == LAYOUT, "the leader's metadata is not the cluster's racks"
        for m in members:
            sub = next(x for x in last.request.members if x.member_id == m.member_id())
            assert sub.subscription.rack_id == m.rack, (
                f"{m.name}'s client.rack did not reach kassign"
            )
        counts = [len(m.owned() or ()) for m in members]
        assert max(counts) - min(counts) <= 1, counts
        crossing = sum(cross_rack(m.owned() or (), m.rack, LAYOUT) for m in members)
        member_racks = {m.rack for m in members}
        unavoidable = sum(1 for racks in LAYOUT.values() if not racks & member_racks)
        assert crossing == unavoidable, (
            f"{crossing} partitions read across racks, {unavoidable} unavoidable"
        )
        assert last.response.report.cross_rack_partitions_after == crossing

        # one leader computed this stage's rounds
        grew = [m for m in self.group.members if m.count(ASSIGNED) > self.led.get(m.name, 0)]
        assert len(grew) == 1 and grew[0] in leaders, (
            f"stage {stage}: rounds computed by {[m.name for m in grew]}"
        )
        leader = grew[0]

        self.stages[stage] = {
            "members": [f"{m.name} ({m.language}, {m.rack})" for m in members],
            "leader": f"{leader.name} ({leader.language})",
            "seconds_to_settle": round((settled_ms - self.begun_ms) / 1000, 1),
            "rebalances": len(stage_rounds),
            "revoked": sum(r.response.report.revoked_partitions for r in stage_rounds),
            "moved": sum(r.response.report.moved_partitions for r in stage_rounds),
            "cross_rack": crossing,
        }
        return leader

    def every_round_is_kassigns(self) -> list[Round]:
        """kassign's journal, call log and Prometheus counter, and the plug-ins' ``kassign
        assigned`` lines, count the same rounds; no member logged a fallback."""
        seen: dict[str, int] = {}

        def consistent() -> list[Round] | None:
            history = self.history()
            seen["journal"] = len(history)
            seen["calls"] = len(CALL_LINE.findall(self.kassign.log.read_text()))
            seen["plugins"] = sum(m.count(ASSIGNED + GROUP + ":") for m in self.group.members)
            seen["prometheus"] = int(
                metric_value(
                    self.kassign.metrics_text(),
                    "grpc_server_handled_total",
                    grpc_service=SERVICE,
                    grpc_method="Assign",
                    grpc_code="OK",
                )
            )
            if len(set(seen.values())) == 1 and len(self.history()) == len(history):
                return history
            return None

        try:
            history = wait_until("kassign's counts to agree", consistent, 20, self.logs)
        except AssertionError as e:
            raise AssertionError(f"rounds counted {seen}\n{e}") from None
        for m in self.group.members:
            assert m.count(FALLBACK) == 0, f"{m.name} fell back\n{tails(self.logs())}"
        return history


def test_a_mixed_group_is_assigned_by_kassign_rack_local_exactly_once(
    cluster: Cluster, e2e_classpaths: tuple[str, str], work: Path, procs: Processes
) -> None:
    t0 = time.monotonic()
    classpath = e2e_classpaths[1]
    topics = [
        f"{t}={';'.join(','.join(map(str, replicas(p))) for p in range(PARTITIONS))}"
        for t in TOPICS
    ]
    run_java(classpath, JAVA_MAIN, "topics", cluster.bootstrap, *topics)
    kassign = start_kassign(work / "kassign", procs)
    group = Group(GROUP, cluster.bootstrap, classpath, kassign.target, TOPICS, work, procs)
    run = Run(cluster, kassign, group)

    producer_log = work / "producer.log"
    producer = procs.start(
        ["java", *JVM_FLAGS, "-Xmx128m", *SLF4J_FLAGS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         "-cp", classpath, JAVA_MAIN, "produce", cluster.bootstrap, str(RATE), *TOPICS],
        producer_log,
    )  # fmt: skip
    wait_until(
        "the producer to start", lambda: "E2E producing" in producer_log.read_text(), 60, run.logs
    )

    run.begin("A")
    p1 = group.start_python("p1", "rack-c")
    run.settle("A", [p1], [p1])
    run.begin("B")
    j1 = group.start_java("j1", "rack-a")
    run.settle("B", [p1, j1], [p1])
    run.begin("C")
    j2 = group.start_java("j2", "rack-b")
    run.settle("C", [p1, j1, j2], [p1])
    run.begin("D")
    p1.stop()
    assert p1.proc.returncode in STOPPED, tails([p1.log])
    leader = run.settle("D", [j1, j2], [j1, j2])
    run.begin("E")
    p2 = group.start_python("p2", "rack-c")
    run.settle("E", [j1, j2, p2], [leader])

    # every record produced, processed once by the group
    producer.send_signal(signal.SIGTERM)
    producer.wait(timeout=60)
    out = producer_log.read_text()
    produced_line = re.search(r"^E2E produced (\d+) at", out, re.MULTILINE)
    assert producer.returncode in STOPPED and produced_line, out[-3000:]
    produced = {f"r{n}" for n in range(int(produced_line[1]))}

    def consumed() -> list[Record]:
        return [r for m in group.members for r in m.consumed()]

    wait_until(
        "every record processed",
        lambda: {r.id for r in consumed()} >= produced,
        90,
        run.logs,
        interval=0.5,
    )
    records = consumed()
    twice = [i for i, n in Counter(r.id for r in records).items() if n > 1]
    assert not twice, f"{len(twice)} records processed twice, e.g. {twice[:5]}"
    assert {r.id for r in records} == produced
    by_partition: dict[str, list[int]] = {}
    for r in records:
        by_partition.setdefault(f"{r.topic}-{r.partition}", []).append(r.offset)
    assert set(by_partition) == ALL, "some partition got no record"
    for p, offsets in by_partition.items():
        assert sorted(offsets) == list(range(len(offsets))), f"{p}: offsets not 0..n-1 once each"

    # the revocations each member's listener saw are those of kassign's answers that reached it
    history = run.every_round_is_kassigns()
    final = {m.member_id() or "": m.owned() for m in group.members}
    expected = expected_revocations(history, final)
    for m in group.members:
        assert len(m.member_ids()) == 1, f"{m.name} changed member id: {m.member_ids()}"
        assert m.revocations() == expected.get(m.member_id() or "", []), m.name
    for name in ("B", "C", "E"):  # a newcomer takes partitions others had to revoke first
        assert run.stages[name]["revoked"], f"stage {name}: no revocation"

    # the members leave; each plug-in counted its own answers and no fallback
    live = group.live()
    for m in live:
        m.proc.send_signal(signal.SIGTERM)
    for m in live:
        m.proc.wait(timeout=60)
    for m in group.members:
        assert m.proc.returncode in STOPPED, tails([m.log])
        assert m.closed() == (m.count(ASSIGNED + GROUP + ":"), 0), (m.name, m.closed())

    FIGURES["stages"] = run.stages
    FIGURES["records"] = len(produced)
    FIGURES["rebalances"] = len(history)
    FIGURES["test_seconds"] = round(time.monotonic() - t0, 1)
