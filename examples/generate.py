"""Writes the example requests in this directory (``python examples/generate.py``).

Each example is built from plain values with ``kassign_client.build`` and stored as protobuf JSON,
ready for ``kassign assign examples/<name>.json`` or ``kassign call``. ``tests/test_examples.py``
checks the stored files are exactly what this script writes, and that each one assigns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

__all__ = ["EXAMPLES", "render", "write_all"]

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


EXAMPLES: dict[str, Callable[[], pb.AssignRequest]] = {
    "kip441-scale-out": kip441_scale_out,
    "kip708-nine-nodes": kip708_nine_nodes,
    "rack-aware-min-traffic": rack_aware_min_traffic,
    "small-three-clients": small,
}


def render(request: pb.AssignRequest) -> str:
    """The stored form: canonical protobuf JSON, two-space indent, trailing newline."""
    return json_format.MessageToJson(request, indent=2) + "\n"


def write_all(directory: Path = HERE) -> list[Path]:
    paths = []
    for name, make in EXAMPLES.items():
        path = directory / f"{name}.json"
        path.write_text(render(make()), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(written)
