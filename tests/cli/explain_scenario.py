"""A group worth explaining: four clients in four racks over two zones scale out to six.

Two stateful sub-topologies (their partitions' replicas in two racks each) and a stateless one; one
standby; KIP-925 min_traffic and KIP-708 zone tags. The four old clients ran everything (actives
caught up, standbys a little behind); the two new ones have no state, so the answer moves
stateless actives at once, puts warm-ups on the new clients and reads some partitions across
racks. ``scale_out(leaving=...)`` is the same group with some clients gone (a rack failure), for
``--diff``.
"""

from __future__ import annotations

from uuid import UUID

from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

NOW_MS = 1_700_000_000_000
RACKS = {"rack-a1": "eu-1a", "rack-a2": "eu-1a", "rack-b1": "eu-1b", "rack-b2": "eu-1b"}
CLIENT_RACKS = ("rack-a1", "rack-a2", "rack-b1", "rack-b2", "rack-a1", "rack-b2")
OLD = 4  # clients 1..4 ran the group before; 5 and 6 are new
STATEFUL = {0: 8, 1: 4}  # sub-topology -> partitions
STATELESS = {2: 6}


def pid(n: int) -> UUID:
    return UUID(int=n)


def _racks(sub: int, p: int) -> list[str]:
    """Two racks for sub-topology 0's partitions, one for the others' (some must cross)."""
    names = sorted(RACKS)
    return sorted({names[(p + sub) % 4], names[(p + sub + (sub == 0)) % 4]})


def _tasks() -> list[pb.TaskInfo]:
    tasks = [
        build.task(
            sub,
            p,
            source=[f"input-{sub}"],
            changelog=[f"app-store-{sub}-changelog"],
            stores=[f"store-{sub}"],
            end_offset_sum=1_000_000,
            racks=_racks(sub, p),
        )
        for sub, n in STATEFUL.items()
        for p in range(n)
    ]
    return tasks + [
        build.task(sub, p, source=[f"clicks-{sub}"], racks=_racks(sub, p))
        for sub, n in STATELESS.items()
        for p in range(n)
    ]


def _previous() -> dict[int, tuple[list[str], dict[str, int], list[tuple[str, int]]]]:
    """Each old client's previous actives, offset sums and owned source partitions."""
    held: dict[int, tuple[list[str], dict[str, int], list[tuple[str, int]]]] = {
        n: ([], {}, []) for n in range(1, OLD + 1)
    }
    for sub, count in {**STATEFUL, **STATELESS}.items():
        topic = f"input-{sub}" if sub in STATEFUL else f"clicks-{sub}"
        for p in range(count):
            owner, standby = 1 + (p + sub) % OLD, 1 + (p + sub + 1) % OLD
            active, _, owned = held[owner]
            active.append(f"{sub}_{p}")
            owned.append((topic, p))
            if sub in STATEFUL:
                held[standby][1][f"{sub}_{p}"] = 1_000_000 - 200 * (p + 1)
    return held


def scale_out(*, leaving: tuple[int, ...] = ()) -> pb.AssignRequest:
    previous = _previous()
    members = []
    for n, rack in enumerate(CLIENT_RACKS, start=1):
        if n in leaving:
            continue
        active, sums, owned = previous.get(n, ([], {}, []))
        members.append(
            build.client(
                pid(n),
                threads=2,
                rack=rack,
                tags={"zone": RACKS[rack]},
                previous_active=active,
                offset_sums=sums,
                owned_partitions={f"{pid(n)}-StreamThread-1-consumer": owned},
            )
        )
    configs = build.configs(
        num_standby_replicas=1,
        rack_aware_strategy="min_traffic",
        rack_aware_assignment_tags=["zone"],
    )
    return build.request(members, _tasks(), configs=configs, group_id="orders-app", now_ms=NOW_MS)
