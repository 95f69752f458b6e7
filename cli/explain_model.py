"""What ``kassign explain`` tells, for either kind of group: clients, tasks, their replicas.

Why a model of its own: the text stories, the diff and the HTML page read the same facts
(previous owners, lags, where each replica went, whether it moved or reads across racks, the
reason that put it there), so each kind of answer is turned into them once: a Kafka Streams
answer by ``explain_streams.group_view``, a consumer group's by ``explain_consumer.consumer_view``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kassign.assignor.streams.explain import ReplicaKind
from kassign.assignor.streams.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM
from kassign.v1 import common_pb2

__all__ = [
    "CONSUMER",
    "STREAMS",
    "ClientView",
    "GroupLoad",
    "GroupView",
    "Kind",
    "MoveCounts",
    "ReplicaView",
    "TaskView",
    "Words",
    "changed_replicas",
    "lag_text",
    "rule_word",
]


Kind = ReplicaKind
"""A replica's kind, the assignor's own: warm-ups are standbys beyond ``num_standby_replicas``
(KIP-441); its values ("active", "standby", "warm-up") are the page's class names."""


@dataclass(frozen=True, slots=True)
class Words:
    """What a group's parts are called: a Streams group's tasks and clients, or a consumer
    group's partitions and members (``explain_consumer.py``)."""

    task: str = "task"
    tasks: str = "tasks"
    client: str = "client"
    clients: str = "clients"
    family: str = "sub-topology"  # what colours a cell
    active: str = "active"  # the label of a client's row of actives
    unit: str = "replicas"  # what moved, changed and cross-rack count: one task has several


STREAMS = Words()
CONSUMER = Words("partition", "partitions", "member", "members", "topic", "assigned", "partitions")


@dataclass(frozen=True, slots=True)
class ClientView:
    """One client: where it is, what it had, and when it asked to be asked again."""

    process_id: str
    rack: str  # "" none
    zone: str  # the zone tag's value, "" none
    tags: tuple[tuple[str, str], ...]  # sorted by key
    threads: int
    members: tuple[str, ...]
    followup_ms: int  # 0 none
    previous_active: tuple[str, ...]  # task names, in task order
    previous_standby: tuple[str, ...]
    load: float | None = None  # balance LOAD: what it was given; None under COUNT
    capacity: float | None = None  # balance LOAD: what its load is weighed against


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One replica of a task on one client, and why it is there."""

    kind: Kind
    process_id: str
    moved: bool
    cross_rack: int  # counted partitions with no replica in the client's rack (KIP-925)
    rule: str  # "sticky", "caught_up", ...; "" when the answer has no explanation
    reason: str  # the answer's sentence, which starts with the rule ("sticky: ran it before")

    @property
    def why(self) -> str:
        """The reason to show: the answer's sentence, else the bare rule, else nothing."""
        return self.reason or (f"rule {self.rule}" if self.rule else "")


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task: its state, its previous owners, each client's lag, where its replicas went."""

    name: str
    subtopology: str  # "1", or "topology__1" inside a named topology
    stateful: bool
    end_offset_sum: int
    previous_active: tuple[str, ...]  # process ids, in process order
    previous_standby: tuple[str, ...]
    lags: tuple[tuple[str, int], ...]  # clients that reported state: (process id, lag)
    replicas: tuple[ReplicaView, ...]  # the active first, then the others in process order
    partitions: tuple[tuple[str, str], ...]  # ("input-3", "source, racks a b") for the story
    withheld: str = ""  # consumer groups: why no member has it this round (cooperative)
    load: float | None = None  # balance LOAD


@dataclass(frozen=True, slots=True)
class MoveCounts:
    """Moves by kind, counted from the replicas (the answer's ``report.moves`` definitions)."""

    stateful_actives: int
    stateless_actives: int
    standbys: int
    warmups: int


@dataclass(frozen=True, slots=True)
class GroupLoad:
    """A load-balanced answer's figures (its report's ``load``), each per unit of capacity."""

    bound: float
    peak: float
    mean: float
    source: str  # "" when the answer does not say


@dataclass(frozen=True, slots=True)
class GroupView:
    """A whole answer, told."""

    group_id: str
    now_ms: int
    assignor: str
    acceptable_recovery_lag: int
    num_standby_replicas: int
    explained: bool  # the answer carried an explanation (rules and warm-ups known)
    configs: tuple[tuple[str, str], ...]  # the assignment configs in force, Kafka's defaults filled
    clients: tuple[ClientView, ...]  # process order, as in the answer
    tasks: tuple[TaskView, ...]  # task order
    notes: tuple[str, ...]
    words: Words = STREAMS
    load: GroupLoad | None = None  # balance LOAD only
    _clients: Mapping[str, ClientView] = field(init=False, repr=False, compare=False)
    _tasks: Mapping[str, TaskView] = field(init=False, repr=False, compare=False)
    _held: Mapping[str, tuple[tuple[TaskView, ReplicaView], ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        """Indexes by id: stories look clients and tasks up once per replica."""
        object.__setattr__(self, "_clients", {c.process_id: c for c in self.clients})
        object.__setattr__(self, "_tasks", {t.name: t for t in self.tasks})
        held: dict[str, list[tuple[TaskView, ReplicaView]]] = {}
        for t in self.tasks:
            for r in t.replicas:
                held.setdefault(r.process_id, []).append((t, r))
        object.__setattr__(self, "_held", {p: tuple(h) for p, h in held.items()})

    def client(self, process_id: str) -> ClientView:
        return self._clients[process_id]

    def task(self, name: str) -> TaskView:
        return self._tasks[name]

    def held(self, process_id: str) -> tuple[tuple[TaskView, ReplicaView], ...]:
        """The replicas on one client, in task order."""
        return self._held.get(process_id, ())

    def cross_rack(self) -> int:
        """Replicas reading or writing a partition with no replica in their client's rack."""
        return sum(1 for t in self.tasks for r in t.replicas if r.cross_rack)

    def moves(self) -> MoveCounts:
        stateful = {t.name for t in self.tasks if t.stateful}
        counts = {kind: 0 for kind in Kind}
        stateful_actives = 0
        for task in self.tasks:
            for r in task.replicas:
                if r.moved:
                    counts[r.kind] += 1
                    stateful_actives += r.kind is Kind.ACTIVE and task.name in stateful
        return MoveCounts(
            stateful_actives=stateful_actives,
            stateless_actives=counts[Kind.ACTIVE] - stateful_actives,
            standbys=counts[Kind.STANDBY],
            warmups=counts[Kind.WARM_UP],
        )


def changed_replicas(before: GroupView, after: GroupView) -> int:
    """Replicas of ``after``'s answer that ``before``'s did not have (same task, client and
    kind): the one count of a diff's changes, in its text and on its page."""
    was = {(t.name, r.process_id, r.kind) for t in before.tasks for r in t.replicas}
    return sum(
        1 for t in after.tasks for r in t.replicas if (t.name, r.process_id, r.kind) not in was
    )


def lag_text(lag: int, acceptable: int) -> str:
    """A lag as a person reads it, with whether KIP-441 counts it caught up."""
    if lag == LATEST_OFFSET:
        return "running it (caught up)"
    if lag == UNKNOWN_OFFSET_SUM:
        return "unknown offsets"
    return f"{lag:,} behind ({'caught up' if lag <= acceptable else 'not caught up'})"


def rule_word(rule: int) -> str:
    """A ``PlacementRule`` as the view names it (``caught_up``, ``load``), "" for none; a value
    newer than this reader as ``rule N`` (a reason still reads: it starts with its rule)."""
    if rule == common_pb2.PLACEMENT_RULE_UNSPECIFIED:
        return ""
    if rule not in common_pb2.PlacementRule.values():
        return f"rule {rule}"
    return common_pb2.PlacementRule.Name(rule).removeprefix("PLACEMENT_RULE_").lower()
