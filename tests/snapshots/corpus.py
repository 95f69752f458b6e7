"""The snapshot corpus: every example, the ghz groups, Kafka's byte vectors and seeded requests.

Deterministic from plain values and a fixed seed, so the same cases come out on every machine and
before and after a refactoring. ``cases()`` yields ``(name, request)``; ``test_snapshots.py``
sends each through the real servicer entry point and compares a digest of the answer.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

__all__ = ["cases"]

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "kafka" / "vectors"
NOW_MS = 1_700_000_000_000
SEEDS = 160
"""Seeded generated groups; with the files and hand-made cases, a little over 200 cases."""

_STRATEGIES = ("min_traffic", "balance_subtopology")
_ENCODINGS = ("structured", "info_bytes", "raw")


def cases() -> Iterator[tuple[str, pb.AssignRequest]]:
    """Every case, named, in a fixed order."""
    yield from _json_files()
    yield from _vectors()
    yield from _invalid()
    for seed in range(SEEDS):
        yield f"seeded/{seed:03d}", _seeded(seed)


def _json_files() -> Iterator[tuple[str, pb.AssignRequest]]:
    for folder in ("examples", "bench/ghz/data"):
        for path in sorted((ROOT / folder).glob("*.json")):
            if path.name == "ghz.json":
                continue
            text = path.read_text(encoding="utf-8")
            yield f"{folder}/{path.stem}", json_format.Parse(text, pb.AssignRequest())


def _tasks() -> list[pb.TaskInfo]:
    return [
        build.task(s, p, source=[f"t{s}"], changelog=[f"c{s}"], end_offset_sum=5_000)
        for s in range(2)
        for p in range(4)
    ]


def _vectors() -> Iterator[tuple[str, pb.AssignRequest]]:
    """Kafka's own bytes: a userData vector as ``info_bytes``, a subscription as raw bytes."""
    for path in sorted(VECTORS.glob("*.bin")):
        data = path.read_bytes()
        if path.name.startswith("subscription_info"):
            m = pb.MemberSubscription(member_id="m-1")
            m.subscription.topics.extend(["t0", "t1"])
            m.subscription.info_bytes = data
        else:
            m = pb.MemberSubscription(member_id="m-1", raw_subscription=data)
        other = build.client(UUID(int=7), threads=1, topics=["t0", "t1"])
        request = build.request([m, other], _tasks(), now_ms=NOW_MS)
        yield f"vectors/{path.stem}", request


def _invalid() -> Iterator[tuple[str, pb.AssignRequest]]:
    """Requests the service refuses, for their status code and message."""
    ok = build.client(UUID(int=1), threads=2, topics=["t0", "t1"])
    yield "invalid/no-members", build.request([], _tasks(), now_ms=NOW_MS)
    yield "invalid/no-tasks", build.request([ok], [], now_ms=NOW_MS)
    yield "invalid/duplicate-task", build.request([ok], _tasks() + _tasks()[:1], now_ms=NOW_MS)
    yield (
        "invalid/unknown-assignor",
        build.request([ok], _tasks(), configs=build.configs(assignor="nope"), now_ms=NOW_MS),
    )
    yield (
        "invalid/negative-standbys",
        build.request(
            [ok], _tasks(), configs=build.configs(num_standby_replicas=-1), now_ms=NOW_MS
        ),
    )
    garbage = pb.MemberSubscription(member_id="m-x", raw_subscription=b"\x00\x07garbage")
    yield "invalid/raw-garbage", build.request([garbage], _tasks(), now_ms=NOW_MS)
    bad_info = pb.MemberSubscription(member_id="m-y")
    bad_info.subscription.info_bytes = b"\x00\x00\x00\x63\x00"
    yield "invalid/info-garbage", build.request([bad_info], _tasks(), now_ms=NOW_MS)
    no_info = pb.MemberSubscription(member_id="m-z")
    no_info.subscription.topics.append("t0")
    yield "invalid/no-user-data", build.request([no_info], _tasks(), now_ms=NOW_MS)
    bad_pid = pb.MemberSubscription(member_id="m-w")
    bad_pid.subscription.info.CopyFrom(pb.SubscriptionInfo(version=11, process_id="not-a-uuid"))
    yield "invalid/bad-process-id", build.request([bad_pid], _tasks(), now_ms=NOW_MS)
    yield (
        "invalid/bad-task-ref",
        build.request(
            build.client(UUID(int=2), previous_active=["9_9"], topics=["t0"]),
            [pb.TaskInfo(id=pb.TaskId(subtopology=-1, partition=0))],
            now_ms=NOW_MS,
        ),
    )
    yield (
        "invalid/tag-config-without-tags",
        build.request(
            [ok],
            _tasks(),
            configs=build.configs(rack_aware_assignment_tags=["zone"], num_standby_replicas=1),
            now_ms=NOW_MS,
        ),
    )


def _seeded(seed: int) -> pb.AssignRequest:
    """One random but reproducible group: clients, lags, history, standbys, tags, racks."""
    rng = random.Random(seed)
    subtopologies = rng.randint(1, 3)
    partitions = rng.randint(1, 8)
    racks = [f"rack-{r}" for r in range(rng.randint(1, 3))]
    rack_aware = rng.random() < 0.3
    tasks: list[pb.TaskInfo] = []
    stateful: list[str] = []
    for s in range(subtopologies):
        is_stateful = rng.random() < 0.7
        for p in range(partitions):
            task_racks = rng.sample(racks, rng.randint(1, len(racks))) if rack_aware else ()
            if is_stateful:
                stateful.append(f"{s}_{p}")
                tasks.append(
                    build.task(
                        s,
                        p,
                        source=[f"in-{s}"],
                        changelog=[f"store-{s}-changelog"],
                        end_offset_sum=rng.choice((0, 1_000, 100_000)),
                        racks=task_racks,
                    )
                )
            else:
                tasks.append(build.task(s, p, source=[f"in-{s}"], racks=task_racks))
    names = [f"{t.id.subtopology}_{t.id.partition}" for t in tasks]
    clients = rng.randint(1, 6)
    tags = rng.random() < 0.25
    members: list[list[pb.MemberSubscription]] = []
    for c in range(clients):
        previous = [n for n in names if rng.random() < 1 / clients]
        offsets = {n: rng.choice((0, 50, 5_000, 100_000)) for n in stateful if rng.random() < 0.4}
        extra: dict[str, object] = {}
        if tags:
            extra["tags"] = {"zone": f"z{c % 3}", "cluster": f"k{c % 2}"}
        members.append(
            build.client(
                UUID(int=rng.getrandbits(128)),
                threads=rng.randint(1, 3),
                previous_active=previous,
                offset_sums=offsets,
                rack=rng.choice(racks),
                end_point=f"host-{c}:8080",
                encoding=rng.choice(_ENCODINGS),  # type: ignore[arg-type]
                topics=sorted({f"in-{s}" for s in range(subtopologies)}),
                **extra,
            )
        )
    values: dict[str, object] = {
        "num_standby_replicas": rng.choice((0, 0, 1, 2)),
        "max_warmup_replicas": rng.choice((1, 2, 4)),
        "acceptable_recovery_lag": rng.choice((0, 100, 10_000)),
        "assignor": rng.choice(("high_availability", "high_availability", "sticky")),
    }
    configs = build.configs(
        rack_aware_strategy=rng.choice(_STRATEGIES) if rack_aware else None,
        rack_aware_assignment_tags=["zone", "cluster"] if tags else (),
        **values,  # type: ignore[arg-type]
    )
    if rack_aware:
        configs.assignment_time_budget_ms = 120_000
    return build.request(members, tasks, configs=configs, group_id=f"g{seed}", now_ms=NOW_MS)
