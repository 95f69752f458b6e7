"""Real consumer-group members for the end-to-end test, and what kassign answered them.

Members are ``ConsumerE2e consumer`` JVMs (kafka-clients 4.3.1 with
``io.kassign.consumer.KassignConsumerAssignor``) and ``consumer_py.py`` processes (kafka-python
3.0.12 with ``kassign_client.kafka_python.KassignAssignor``); both print the same ``E2E`` lines
and write the records they process to a file, so one parser reads both.

kassign's side comes from its request journal (``kassign serve --journal``): every request the
service answered, in order. The service is deterministic (same request, same bytes), so each
answer is recomputed in process from its request (``assign_consumer_request``, the servicer's own
function) and compared with what the members did.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from google.protobuf import json_format
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.e2e.harness import E2E, JVM_FLAGS, SLF4J_FLAGS, Processes, now_ms

JAVA_MAIN = "io.kassign.e2e.ConsumerE2e"
JAVA_ASSIGNOR = "io.kassign.consumer.KassignConsumerAssignor"
ASSIGNED = "kassign assigned group "
FALLBACK = "kassign fallback:"

EVENT = re.compile(
    r"^E2E (?P<kind>revoked|revoked-on-close|owned) member=(?P<member>\S*) gen=(?P<gen>-?\d+) "
    r"partitions=(?P<partitions>\S*) at (?P<at>\d+)$",
    re.MULTILINE,
)
CLOSED = re.compile(r"^E2E closed assignments=(\d+) fallbacks=(\d+) at \d+$", re.MULTILINE)

Partitions = frozenset[str]  # "topic-partition"


def _partitions(text: str) -> Partitions:
    return frozenset(p for p in text.split(",") if p)


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # revoked | revoked-on-close | owned
    member_id: str
    generation: int
    partitions: Partitions
    at_ms: int


@dataclass(frozen=True, slots=True)
class Record:
    topic: str
    partition: int
    offset: int
    id: str


@dataclass
class Member:
    """One consumer process: its rack, log and records file."""

    name: str
    language: str  # java | python
    rack: str
    proc: subprocess.Popen[bytes]
    log: Path
    records: Path
    started_ms: int

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def events(self) -> list[Event]:
        return [
            Event(m["kind"], m["member"], int(m["gen"]), _partitions(m["partitions"]), int(m["at"]))
            for m in EVENT.finditer(self.text())
        ]

    def member_ids(self) -> frozenset[str]:
        return frozenset(e.member_id for e in self.events() if e.member_id)

    def member_id(self) -> str | None:
        owned = [e for e in self.events() if e.kind == "owned"]
        return owned[-1].member_id if owned else None

    def owned(self) -> Partitions | None:
        """What it owns now, by its own last callback (None before its first assignment)."""
        owned = [e for e in self.events() if e.kind == "owned"]
        return owned[-1].partitions if owned else None

    def revocations(self) -> list[Partitions]:
        """The partitions each cooperative ``onPartitionsRevoked`` gave up (not those on close)."""
        return [e.partitions for e in self.events() if e.kind == "revoked"]

    def count(self, needle: str) -> int:
        return self.text().count(needle)

    def consumed(self) -> list[Record]:
        if not self.records.exists():
            return []
        found = []
        for line in self.records.read_text().splitlines():
            topic, partition, offset, rid = line.split(" ")
            found.append(Record(topic, int(partition), int(offset), rid))
        return found

    def closed(self) -> tuple[int, int] | None:
        """(assignments, fallbacks) the plug-in counted, once the process has closed."""
        m = CLOSED.search(self.text())
        return (int(m[1]), int(m[2])) if m else None

    def stop(self) -> None:
        """SIGTERM: the member commits, leaves the group and exits; waits for it."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


def consumer_properties(
    bootstrap: str, group_id: str, name: str, rack: str, strategy: str, home: Path
) -> dict[str, str]:
    """A ``ConsumerE2e`` member's settings (the caller adds ``e2e.topics``): classic protocol,
    ``client.rack``, commits of its own, a 6 s session; its records in ``home/records.txt``."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "group.protocol": "classic",
        "client.id": name,
        "client.rack": rack,
        "partition.assignment.strategy": strategy,
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "e2e.records": str(home / "records.txt"),
    }


@dataclass
class Group:
    """The members of one consumer group, started against one kassign and one cluster."""

    group_id: str
    bootstrap: str
    classpath: str
    target: str
    topics: tuple[str, ...]
    work: Path
    procs: Processes
    members: list[Member] = field(default_factory=list)

    def _dir(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def start_java(self, name: str, rack: str) -> Member:
        """A KafkaConsumer with kassign's plug-in (rack-optimal; cooperative, as it is alone)."""
        home = self._dir(name)
        props = {
            **consumer_properties(self.bootstrap, self.group_id, name, rack, JAVA_ASSIGNOR, home),
            "kassign.target": self.target,
            "kassign.consumer.assignor": "rack-optimal",
            "kassign.deadline.ms": "10000",
            "metadata.max.age.ms": "5000",
            "e2e.topics": ",".join(self.topics),
        }
        config = home / "consumer.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        args = ["java", *JVM_FLAGS, "-Xmx256m", *SLF4J_FLAGS, "-cp", self.classpath, JAVA_MAIN]
        return self._start(name, "java", rack, [*args, "consumer", str(config)], home)

    def start_python(self, name: str, rack: str) -> Member:
        """A kafka-python consumer with ``KassignAssignor``, run from its own directory."""
        home = self._dir(name)
        config = {
            "bootstrap": self.bootstrap.split(","),
            "group": self.group_id,
            "client_id": name,
            "rack": rack,
            "target": self.target,
            "topics": list(self.topics),
            "records": str(home / "records.txt"),
        }
        path = home / "consumer.json"
        path.write_text(json.dumps(config))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        args = [sys.executable, "-u", str(E2E / "consumer_py.py"), str(path)]
        return self._start(name, "python", rack, args, home, env)

    def _start(
        self,
        name: str,
        language: str,
        rack: str,
        args: list[str],
        home: Path,
        env: dict[str, str] | None = None,
    ) -> Member:
        log = home / "consumer.log"
        started = now_ms()
        proc = self.procs.start(args, log, env, cwd=home)
        member = Member(name, language, rack, proc, log, home / "records.txt", started)
        self.members.append(member)
        return member

    def live(self) -> list[Member]:
        return [m for m in self.members if m.proc.poll() is None]

    def logs(self) -> list[Path]:
        return [m.log for m in self.members]

    def by_member_id(self) -> dict[str, Member]:
        return {mid: m for m in self.members for mid in m.member_ids()}


# ------------------------------------------------------------------------------ kassign's side


@dataclass(frozen=True, slots=True)
class Round:
    """One rebalance kassign computed: the leader's request and the answer (recomputed)."""

    request: cpb.ConsumerAssignRequest
    response: cpb.ConsumerAssignResponse

    def members(self) -> frozenset[str]:
        return frozenset(m.member_id for m in self.request.members)

    def owned(self, member_id: str) -> Partitions:
        """What ``member_id`` said it owned when it joined this round (either form: the
        plug-ins send issue 24's compact one)."""
        for m in self.request.members:
            if m.member_id == member_id:
                sub = m.subscription
                return frozenset(f"{p.topic}-{p.partition}" for p in sub.owned_partitions) | {
                    f"{e.topic}-{p}" for e in sub.owned_by_topic for p in e.partitions
                }
        raise KeyError(member_id)

    def assigned(self, member_id: str) -> Partitions:
        return frozenset(f"{t}-{p}" for t, p in self._answer(member_id).partitions)

    def revoked(self, member_id: str) -> Partitions:
        return frozenset(f"{t}-{p}" for t, p in self._answer(member_id).revoked)

    def _answer(self, member_id: str) -> consumer.MemberAnswer:
        return next(m for m in consumer.answers(self.response) if m.member_id == member_id)

    def all_assigned(self) -> Partitions:
        return frozenset().union(*(self.assigned(m) for m in self.members()))

    def replica_racks(self) -> dict[str, frozenset[str]]:
        """Per partition, the racks of its replicas as the leader's metadata gave them."""
        lists = self.request.replica_rack_lists
        return {
            f"{t.name}-{p}": frozenset(racks)
            for t in self.request.topics
            for p, racks in enumerate(
                [part.rack_ids for part in t.partitions]
                or [lists[i].rack_ids for i in t.replica_rack_list]
                or [[]] * t.partition_count
            )
        }


@cache
def _answer(serialized: bytes) -> bytes:
    request = cpb.ConsumerAssignRequest.FromString(serialized)
    return assign_consumer_request(request).response.SerializeToString(deterministic=True)


def rounds(journal: Path, group_id: str) -> list[Round]:
    """Every consumer request of ``group_id`` in kassign's journal, in order, with its answer."""
    files = sorted(
        (journal / "consumer").glob("requests-*.jsonl"),
        key=lambda f: tuple(int(x) for x in f.stem.split("-")[1:]),
    )
    found = []
    for f in files:
        for line in f.read_text().splitlines():
            if not line.endswith("}"):  # a line still being written
                continue
            request = json_format.Parse(line, cpb.ConsumerAssignRequest())
            if request.group_id != group_id:
                continue
            answer = _answer(request.SerializeToString(deterministic=True))
            found.append(Round(request, cpb.ConsumerAssignResponse.FromString(answer)))
    return found


def expected_revocations(
    history: list[Round], final_owned: Mapping[str, Partitions | None]
) -> dict[str, list[Partitions]]:
    """Per member id, the non-empty ``revoked`` of each answer that reached it, in order.

    An answer reached member m when m then owned what it assigned m: m's owned partitions in the
    next round it joined, or, after its last round, what m itself reports owning last
    (``final_owned``). A round the broker aborted (a SyncGroup overtaken by a new join) reached
    no one, and its revocations never happened.
    """
    expected: dict[str, list[Partitions]] = {}
    for i, r in enumerate(history):
        for member_id in sorted(r.members()):
            later = next((n for n in history[i + 1 :] if member_id in n.members()), None)
            after = later.owned(member_id) if later is not None else final_owned.get(member_id)
            revoked = r.revoked(member_id)
            if after == r.assigned(member_id) and revoked:
                expected.setdefault(member_id, []).append(revoked)
    return expected


def cross_rack(assigned: Iterable[str], rack: str, racks: Mapping[str, frozenset[str]]) -> int:
    """How many of ``assigned`` have no replica in ``rack``."""
    return sum(1 for p in assigned if rack not in racks[p])


def replicas(partition: int) -> list[int]:
    """Brokers 1-3 hold two replicas each, leaders rotating: every partition misses one of the
    three racks, a third of the partitions each rack."""
    return [1 + partition % 3, 1 + (partition + 1) % 3]


def replica_layout(
    topics: Iterable[str], partitions: int, racks: tuple[str, ...]
) -> dict[str, frozenset[str]]:
    """Per "topic-partition", the racks of its replicas (broker b in ``racks[b - 1]``)."""
    return {
        f"{t}-{p}": frozenset(racks[b - 1] for b in replicas(p))
        for t in topics
        for p in range(partitions)
    }
