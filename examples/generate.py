"""Writes the example requests in this directory (``python examples/generate.py``).

Each example is built from plain values with ``kassign_client.build`` and stored as protobuf JSON,
ready for ``kassign assign examples/<name>.json`` or ``kassign call``. Plain consumer groups'
requests (``kassign_client.consumer``, ``ConsumerAssignmentService``) go in ``consumer/``, for
``kassign assign --kind consumer examples/consumer/<name>.json``. ``tests/test_examples.py``
checks the stored files are exactly what this script writes, and that each one assigns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

from google.protobuf import json_format
from google.protobuf.message import Message
from kassign.kafka.consumer_user_data import encode_sticky_user_data
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import build, consumer

__all__ = ["CONSUMER_EXAMPLES", "EXAMPLES", "render", "write_all"]

HERE = Path(__file__).resolve().parent
NOW_MS = 1_700_000_000_000
"""A fixed rebalance time: follow-up deadlines in the output are reproducible."""


def _pid(n: int) -> UUID:
    return UUID(int=n)


def _stateful(sub: int, partition: int, *, end: int = 1_000_000, racks: object = ()) -> pb.TaskInfo:
    return build.task(
        sub,
        partition,
        source=[f"input-{sub}"],
        changelog=[f"app-store-{sub}-changelog"],
        stores=[f"store-{sub}"],
        end_offset_sum=end,
        racks=racks,  # type: ignore[arg-type]
    )


def small() -> pb.AssignRequest:
    """Three clients of two threads, a stateful and a stateless sub-topology, one standby each."""
    tasks = [_stateful(0, p) for p in range(4)] + [
        build.task(1, p, source=["clicks"]) for p in range(4)
    ]
    members = [build.client(_pid(n), threads=2, end_point=f"app-{n}:8080") for n in (1, 2, 3)]
    return build.request(
        members,
        tasks,
        configs=build.configs(num_standby_replicas=1),
        group_id="small-app",
        now_ms=NOW_MS,
    )


def kip441_scale_out() -> pb.AssignRequest:
    """KIP-441 "Scaling Out": T1-T3 with one standby on I1, I2; fresh I3 joins and gets warm-ups."""
    t1, t2, t3 = "0_0", "0_1", "0_2"
    tasks = [_stateful(0, p) for p in range(3)]
    i1 = build.client(
        _pid(1),
        previous_active=[t1, t3],
        offset_sums={t2: 999_500},
        owned_partitions={f"{_pid(1)}-StreamThread-1-consumer": [("input-0", 0), ("input-0", 2)]},
    )
    i2 = build.client(
        _pid(2),
        previous_active=[t2],
        offset_sums={t1: 999_500, t3: 999_500},
        owned_partitions={f"{_pid(2)}-StreamThread-1-consumer": [("input-0", 1)]},
    )
    i3 = build.client(_pid(3))
    return build.request(
        [i1, i2, i3],
        tasks,
        configs=build.configs(num_standby_replicas=1),
        group_id="kip-441-scale-out",
        now_ms=NOW_MS,
    )


def kip708_nine_nodes() -> pb.AssignRequest:
    """KIP-708's ideal distribution: nine nodes over three k8s clusters x three zones, two standbys."""
    members = []
    for n in range(9):
        cluster, zone = f"K8s_Cluster{n // 3 + 1}", f"eu-central-1{'abc'[n % 3]}"
        members.append(build.client(_pid(n + 1), tags={"cluster": cluster, "zone": zone}))
    tasks = [_stateful(0, p) for p in range(9)]
    configs = build.configs(num_standby_replicas=2, rack_aware_assignment_tags=["zone", "cluster"])
    return build.request(
        members, tasks, configs=configs, group_id="kip-708-nine-nodes", now_ms=NOW_MS
    )


def rack_aware_min_traffic() -> pb.AssignRequest:
    """KIP-925 min_traffic: three clients in three racks, each partition's replicas in two racks."""
    racks = ("rack-a", "rack-b", "rack-c")
    tasks = [
        _stateful(sub, p, racks=[racks[(p + sub) % 3], racks[(p + sub + 1) % 3]])
        for sub in (0, 1)
        for p in range(6)
    ]
    members = [build.client(_pid(n + 1), threads=2, rack=rack) for n, rack in enumerate(racks)]
    configs = build.configs(num_standby_replicas=1, rack_aware_strategy="min_traffic")
    return build.request(members, tasks, configs=configs, group_id="rack-aware", now_ms=NOW_MS)


ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")


def _replicas(partitions: int) -> list[list[str]]:
    """Two replicas per partition, leader first, in zones p and p+1 (mod 3): every partition
    misses one zone, so KIP-881's rack-aware mode has something to do."""
    return [[ZONES[p % 3], ZONES[(p + 1) % 3]] for p in range(partitions)]


def consumer_rack_aware_range() -> cpb.ConsumerAssignRequest:
    """KIP-881 range: six consumers in three zones read two co-partitioned topics of 12
    partitions; each partition has replicas in two zones. Kafka's range keeps partition p of
    both topics together and places them in a zone that has them."""
    members = [
        consumer.member(f"consumer-{n}", ["orders", "payments"], rack=ZONES[n % 3])
        for n in range(6)
    ]
    topics = [
        consumer.topic("orders", _replicas(12)),
        consumer.topic("payments", _replicas(12)),
    ]
    return consumer.request(members, topics, assignor="range", group_id="orders-joiner")


def consumer_cooperative_scale_out() -> cpb.ConsumerAssignRequest:
    """Cooperative-sticky, scaling out: three consumers owned all 12 partitions of "clicks" at
    generation 5; two join (one without a rack). The owners keep what they may and revoke the
    rest first; the newcomers get those in the follow-up rebalance."""
    owners = [
        consumer.member(
            f"consumer-{n}",
            ["clicks"],
            owned=[("clicks", p) for p in range(n, 12, 3)],
            generation=5,
            rack=ZONES[n],
        )
        for n in range(3)
    ]
    joining = [
        consumer.member("consumer-3", ["clicks"], rack=ZONES[0]),
        consumer.member("consumer-4", ["clicks"]),
    ]
    return consumer.request(
        owners + joining,
        [consumer.topic("clicks", _replicas(12))],
        assignor="cooperative-sticky",
        group_id="clicks-reader",
    )


CLICK_LOADS = [48.0, 30.0, 22.0, 15.0, 12.0, 10.0, 8.0, 6.0, 5.0, 4.0, 3.0, 2.0]
"""Messages per second of each partition of "clicks" (issue 25's example): one hot, a long tail."""


def consumer_sticky_by_load() -> cpb.ConsumerAssignRequest:
    """Eager sticky balancing load (issue 25): three consumers each claimed four partitions of
    "clicks" (Kafka's count balance, in their userData) but partition 0 is hot; consumer-3 joins
    with capacity 2 (twice the cores). Each owner keeps what fits its share of the bound; the
    rest moves to where load per unit of capacity is lowest."""
    members = [
        consumer.member(
            f"consumer-{n}",
            ["clicks"],
            user_data=encode_sticky_user_data([("clicks", list(range(n, 12, 3)))], 5),
        )
        for n in range(3)
    ]
    members.append(consumer.member("consumer-3", ["clicks"]))
    members[3].subscription.capacity = 2.0
    out = consumer.request(
        members, [consumer.topic("clicks", 12)], assignor="sticky", group_id="clicks-by-load"
    )
    out.topics[0].partition_loads.extend(CLICK_LOADS)
    out.options.balance = common_pb2.BALANCE_LOAD
    return out


CONSUMER_EXAMPLES: dict[str, Callable[[], cpb.ConsumerAssignRequest]] = {
    "cooperative-sticky-scale-out": consumer_cooperative_scale_out,
    "sticky-by-load": consumer_sticky_by_load,
    "rack-aware-range": consumer_rack_aware_range,
}
"""Stored in ``consumer/``: requests of ``ConsumerAssignmentService``."""

EXAMPLES: dict[str, Callable[[], pb.AssignRequest]] = {
    "kip441-scale-out": kip441_scale_out,
    "kip708-nine-nodes": kip708_nine_nodes,
    "rack-aware-min-traffic": rack_aware_min_traffic,
    "small-three-clients": small,
}


def render(request: Message) -> str:
    """The stored form: canonical protobuf JSON, two-space indent, trailing newline."""
    return json_format.MessageToJson(request, indent=2) + "\n"


def write_all(directory: Path = HERE) -> list[Path]:
    paths = []
    makers: list[tuple[Path, Callable[[], Message]]] = [
        *((directory / f"{name}.json", make) for name, make in EXAMPLES.items()),
        *(
            (directory / "consumer" / f"{name}.json", make)
            for name, make in CONSUMER_EXAMPLES.items()
        ),
    ]
    for path, make in makers:
        path.parent.mkdir(exist_ok=True)
        path.write_text(render(make()), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(written)
