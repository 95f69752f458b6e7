"""Requests the service tests share, built from plain values with the Python client's builders."""

from __future__ import annotations

from uuid import UUID

from kassign.v1 import assignment_pb2 as pb
from kassign_client import build
from kassign_client.build import Encoding


def pid(n: int) -> UUID:
    return UUID(int=(n << 64) | n)


def group(
    *,
    clients: int = 3,
    threads: int = 2,
    partitions: int = 6,
    standbys: int = 1,
    encoding: Encoding = "structured",
    now_ms: int = 1_000_000,
) -> pb.AssignRequest:
    """Stateful sub-topology 0 and stateless 1; client n had actives p % clients == n before."""
    tasks = [
        build.task(
            0, p, source=["orders"], changelog=["app-store-changelog"], end_offset_sum=10_000
        )
        for p in range(partitions)
    ] + [build.task(1, p, source=["clicks"]) for p in range(partitions)]
    members = []
    for n in range(clients):
        mine = [f"0_{p}" for p in range(partitions) if p % clients == n]
        others = {f"0_{p}": 9_990 for p in range(partitions) if p % clients == (n + 1) % clients}
        members.append(
            build.client(
                pid(n + 1),
                threads=threads,
                previous_active=mine,
                offset_sums=others,
                rack=f"rack-{n % 2}",
                end_point=f"host-{n}:8080",
                encoding=encoding,
                topics=["clicks", "orders"],
            )
        )
    return build.request(
        members,
        tasks,
        configs=build.configs(num_standby_replicas=standbys),
        group_id="g",
        now_ms=now_ms,
    )
