"""kassign's sticky assignor against Kafka Streams' own ``LegacyStickyTaskAssignor``, 300 groups.

The same seeded groups as the high-availability comparison (``groups.py``), with
``configs.assignor = "sticky"``; kafka-streams 4.3.1 runs ``LegacyStickyTaskAssignor`` through
the same oracle (``kafka_oracle.py``, which picks the assignor from ``configs.assignor``). Kafka's
``assign`` returns ``false`` unconditionally (no probing rebalance), so the follow-up is compared
on every group: neither side asks for one.

Kafka's answer is deterministic but walks Java hash orders where kassign walks sorted ones
(docs/assignors.md, Sticky): clients in ``HashMap``/``HashSet<ProcessId>`` order, tasks in
``HashMap<TaskId, ProcessId>`` order (previous owners, phase 1) and ``HashSet<TaskId>`` order
(tasks a previous standby owner may take, phase 2). Only those orders separate the two, so each
group is compared on a request that takes them out where that is possible:

- process ids are renamed so that ``UUID.hashCode`` is the rank in Java ``UUID`` order plus one:
  every ``ProcessId``-keyed hash set Kafka walks then iterates in ``UUID`` order, as long as its
  table is larger than the client count. Kafka sizes the candidate sets by the client count, but
  a task's previous standby owners sit in a default 16-bucket ``HashSet``: with more than 15
  clients their order can wrap, so ``order_free`` checks each task's owners land in ascending
  buckets;
- the oracle passes all and stateful tasks as ``TreeSet``s (Kafka passes a ``HashMap`` key set and
  a ``HashSet``), so standbys are placed in ``TaskId`` order as kassign places them;
- the task orders of phases 1 and 2 only matter when a client reaches its quota
  (``threads * (tasks // total threads)``) there: ``order_free`` checks that no client reported
  more current tasks than its quota (or that the quota is 0, when both phases place nothing).

``order_free`` groups (110 of 300) must agree exactly, and do; of the other 190, 153 differ. Those
must stay more than half, so the difference documented stays real (if kassign walked Kafka's hash orders the
assertion asking for differences would fail, and the split could go).

Compared on a changed request on purpose, as for high availability: KIP-708 tags are cleared
(Kafka's legacy assignor ignores them, kassign's sticky places standbys by them: an addition;
with tags kept, 26 of the 31 order-free groups with tags and standbys differ, checked to stay
above none). Rack ids are kept: kassign's standbys ignore them unless ``standby_rack_spread``
is set (until issue 27 they were cleared here, since kassign took them as the tag).

A line-by-line transcription of Kafka's assignor walking sorted orders instead of hash orders
(an experiment, not kept: Kafka's code is not ours to copy) gave kassign's answer on all 300
groups, the 190 only counted here included.
"""

from __future__ import annotations

from uuid import UUID

import pytest
from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode.request import decode_request
from kassign.v1 import assignment_pb2 as pb

from tests.differential import kafka_oracle
from tests.differential.compare import differences, kafka_outcome, kassign_outcome
from tests.differential.groups import Group, group

GROUPS = 300
FIRST_SEED = 441_000  # the high-availability test's groups
HASH_SET_BUCKETS = 16
"""Buckets of a default ``java.util.HashSet``: Kafka's set of a task's previous standby owners."""


def _java_order(pid: UUID) -> tuple[int, int]:
    """``java.util.UUID.compareTo``: most then least significant 64 bits, signed."""

    def signed(bits: int) -> int:
        return bits - (1 << 64) if bits >= 1 << 63 else bits

    return signed(pid.int >> 64), signed(pid.int & ((1 << 64) - 1))


def sticky_request(request: pb.AssignRequest, *, keep_tags: bool = False) -> pb.AssignRequest:
    """``request`` for the sticky assignor, tags cleared (unless ``keep_tags``), process ids
    renamed so that Java's hash order of them is their ``UUID`` order (hash = rank + 1)."""
    copy = pb.AssignRequest()
    copy.CopyFrom(request)
    copy.configs.assignor = "sticky"
    if not keep_tags:
        copy.configs.ClearField("rack_aware_assignment_tags")
    ranked = sorted({UUID(m.subscription.info.process_id) for m in copy.members}, key=_java_order)
    renamed = {str(pid): str(UUID(int=(rank + 1) << 64)) for rank, pid in enumerate(ranked)}
    for member in copy.members:
        member.subscription.info.process_id = renamed[member.subscription.info.process_id]
        if not keep_tags:
            member.subscription.info.ClearField("client_tags")
    return copy


def order_free(request: pb.AssignRequest) -> bool:
    """Whether Kafka's hash orders cannot steer this request (module docstring)."""
    state = decode_request(request, now_ms=0).state
    threads = {pid: max(1, c.num_threads) for pid, c in state.clients.items()}
    quota = len(state.tasks) // sum(threads.values())
    tasks = set(state.tasks)
    reported = {
        pid: (c.previous_active_tasks | c.previous_standby_tasks) & tasks
        for pid, c in state.clients.items()
    }
    quota_free = quota == 0 or all(len(reported[p]) <= threads[p] * quota for p in reported)
    owners: dict[TaskId, list[int]] = {}
    for pid in sorted(state.clients, key=lambda p: _java_order(UUID(str(p)))):
        for task in state.clients[pid].previous_standby_tasks:
            owners.setdefault(task, []).append(hash(UUID(str(pid)).int >> 64) % HASH_SET_BUCKETS)
    in_uuid_order = all(buckets == sorted(buckets) for buckets in owners.values())
    return quota_free and in_uuid_order


@pytest.fixture(scope="module")
def requests() -> list[tuple[Group, pb.AssignRequest]]:
    return [(g, sticky_request(g.request)) for g in (group(FIRST_SEED + i) for i in range(GROUPS))]


@pytest.mark.slow
def test_sticky_matches_kafka(
    kafka_classpath: str, requests: list[tuple[Group, pb.AssignRequest]]
) -> None:
    kafka = kafka_oracle.run(kafka_classpath, [r for _, r in requests])
    failures = []
    compared = hash_ordered = differing = tagged = steered = 0
    for (g, request), answer in zip(requests, kafka, strict=True):
        theirs = kafka_outcome(answer)
        ours = kassign_outcome(request)
        assert not theirs.followup and not ours.followup, g.shape
        diff = differences(ours, theirs)
        if order_free(request):
            compared += 1
            if diff:
                failures.append("\n".join([g.shape, *diff]))
            configs = g.request.configs
            if configs.rack_aware_assignment_tags and configs.num_standby_replicas:
                tagged += 1  # Kafka ignores tags: its answer stands for the tagged request too
                with_tags = kassign_outcome(sticky_request(g.request, keep_tags=True))
                steered += bool(differences(with_tags, theirs))
        else:
            hash_ordered += 1
            differing += bool(diff)
    assert compared >= 100 and hash_ordered >= 100, (compared, hash_ordered)
    assert not failures, (
        f"{len(failures)} of {compared} order-free groups differ from Kafka"
        f" {kafka_oracle.KAFKA_VERSION} (rebuild one with tests.differential.groups.group(seed)):\n"
        + "\n".join(failures[:10])
    )
    assert tagged and steered, (
        f"tags steered kassign's sticky standbys in {steered} of {tagged} tagged groups: if never,"
        " stop clearing them (module docstring)"
    )
    assert differing > hash_ordered // 2, (
        f"only {differing} of {hash_ordered} hash-ordered groups differ: does kassign walk"
        " Kafka's hash orders now? Then compare every group and drop order_free"
    )
