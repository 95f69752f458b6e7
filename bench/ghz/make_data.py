"""Write the ghz / bench/load.py request bodies: AssignRequest JSON for three group sizes.

Each group is a steady state plus one change, the common rebalance: every client but the last ran
its share of the tasks (stateful ones with one standby elsewhere), and the last client has just
joined with nothing, so the assignor has warm-ups and moves to plan. Everything comes from a
seeded ``random.Random``, so the files are the same on every run:

    .venv/bin/python bench/ghz/make_data.py          # rewrites bench/ghz/data/*.json
    .venv/bin/python bench/ghz/make_data.py --check  # fails if the files are out of date
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from kassign.kafka.subscription_info import LATEST_OFFSET
from kassign.v1 import assignment_pb2 as pb

__all__ = ["GROUPS", "Group", "build_request", "main", "render"]

DATA_DIR = Path(__file__).resolve().parent / "data"
RACKS = ("rack-a", "rack-b", "rack-c")
NOW_MS = 1_700_000_000_000


@dataclass(frozen=True, slots=True)
class Group:
    """A group's shape: ``subtopologies`` x ``partitions`` tasks, odd sub-topologies stateful."""

    name: str
    subtopologies: int
    partitions: int
    clients: int
    threads: int
    seed: int

    @property
    def tasks(self) -> int:
        return self.subtopologies * self.partitions


GROUPS = (
    Group("group_12", subtopologies=2, partitions=6, clients=3, threads=2, seed=12),
    Group("group_200", subtopologies=4, partitions=50, clients=10, threads=4, seed=200),
    Group("group_2000", subtopologies=10, partitions=200, clients=50, threads=4, seed=2000),
)


def _task_info(sub: int, part: int, rng: random.Random) -> pb.TaskInfo:
    stateful = sub % 2 == 1
    racks = sorted(rng.sample(RACKS, 2))
    info = pb.TaskInfo(id=pb.TaskId(subtopology=sub, partition=part), stateful=stateful)
    info.topic_partitions.add(topic=f"input-{sub}", partition=part, is_source=True, rack_ids=racks)
    if stateful:
        info.state_store_names.append(f"store-{sub}")
        info.topic_partitions.add(
            topic=f"bench-store-{sub}-changelog",
            partition=part,
            is_changelog=True,
            rack_ids=sorted(rng.sample(RACKS, 2)),
        )
        info.changelog_end_offset_sum = rng.randrange(100_000, 1_000_000)
    return info


def build_request(group: Group) -> pb.AssignRequest:
    """The request for ``group``: tasks, members with v11 subscriptions, Kafka's default configs
    but one standby replica."""
    rng = random.Random(group.seed)
    tasks = [
        _task_info(s, p, rng) for s in range(group.subtopologies) for p in range(group.partitions)
    ]
    clients = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(group.clients)]
    running = group.clients - 1  # the last client has just joined
    active: dict[int, list[pb.TaskInfo]] = {i: [] for i in range(group.clients)}
    standby: dict[int, list[pb.TaskInfo]] = {i: [] for i in range(group.clients)}
    for n, task in enumerate(tasks):
        owner = n % running
        active[owner].append(task)
        if task.stateful and running > 1:
            standby[(owner + 1 + rng.randrange(running - 1)) % running].append(task)
    request = pb.AssignRequest(group_id=f"bench-{group.name}", tasks=tasks, now_ms=NOW_MS)
    request.configs.num_standby_replicas = 1
    topics = sorted({tp.topic for t in tasks for tp in t.topic_partitions if tp.is_source})
    for i, process in enumerate(clients):
        info = pb.SubscriptionInfo(
            version=11,
            latest_supported_version=11,
            process_id=str(process),
            user_end_point=f"host-{i}:8080",
            client_tags=[pb.ClientTag(key="zone", value=RACKS[i % len(RACKS)])],
        )
        for task in sorted(
            active[i] + standby[i], key=lambda t: (t.id.subtopology, t.id.partition)
        ):
            if not task.stateful:
                continue
            lag = rng.randrange(0, 20_000)
            offset = LATEST_OFFSET if task in active[i] else task.changelog_end_offset_sum - lag
            info.task_offset_sums.add(task=task.id, offset_sum=offset)
        for thread in range(group.threads):
            member = request.members.add(
                member_id=f"client-{i}-StreamThread-{thread + 1}-consumer-{uuid.UUID(int=rng.getrandbits(128), version=4)}",
            )
            sub = member.subscription
            sub.topics.extend(topics)
            sub.generation_id = 7
            sub.rack_id = RACKS[i % len(RACKS)]
            sub.info.CopyFrom(info)
            for task in active[i][thread :: group.threads]:
                sub.owned_partitions.add(
                    topic=f"input-{task.id.subtopology}", partition=task.id.partition
                )
    return request


def render(group: Group) -> str:
    """The JSON text of a group's request: proto field names, as ghz's -D and load.py read it."""
    body = json_format.MessageToDict(build_request(group), preserving_proto_field_name=True)
    indent = 1 if group.tasks <= 50 else None
    separators = None if indent else (",", ":")
    return json.dumps(body, indent=indent, separators=separators) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = parser.parse_args(argv)
    DATA_DIR.mkdir(exist_ok=True)
    stale = []
    for group in GROUPS:
        path = DATA_DIR / f"{group.name}.json"
        text = render(group)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
            print(f"{path}: {group.tasks} tasks, {group.clients} clients, {len(text)} bytes")
    if stale:
        print(f"out of date: {', '.join(stale)} (rerun bench/ghz/make_data.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
