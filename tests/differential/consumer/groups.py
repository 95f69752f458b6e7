"""Seeded consumer groups for the differential suite: ``group(seed)`` rebuilds any of them.

A group is drawn as a cluster (brokers on racks, some without; topics whose partitions have
one to three replicas, or one per rack), members (2-50, unequal or equal subscriptions, some
static, with and without racks, some on a rack no broker is in) and a history: the previous
generation's assignment, which members kept (current generation), which missed rebalances
(stale generations, claims that overlap others'), which are new (no generation), and a few
partitions claimed twice in one generation. Members are listed in a random order, the order
the leader would receive them in.

The same group is then shaped for each assignor (``for_kafka``, ``for_kassign``): ownership in
the subscription for all (only cooperative-sticky reads it), and the userData each sticky
assignor writes: ``sticky``'s previous assignment and generation (v1; some v0 without a
generation, some bytes that are not userData at all), ``cooperative-sticky``'s generation for
members that send no generation field (protocol v0-1).
"""

from __future__ import annotations

import base64
import random
import uuid
from dataclasses import dataclass
from typing import Any

from kassign.assignor.consumer import ConsumerGroup, Member, Topic, TopicPartition, consumer_group
from kassign.assignor.consumer.java_order import hash_order, string_hash
from kassign.kafka.consumer_user_data import encode_cooperative_generation, encode_sticky_user_data

__all__ = ["GeneratedGroup", "GeneratedMember", "for_kafka", "for_kassign", "group", "line_for"]

RACKS = ("rack-a", "rack-b", "rack-c", "rack-d")
NOWHERE = "rack-z"  # a member rack no broker is in
GHOST = "ghost"  # a topic some members subscribe to that has no metadata


@dataclass(frozen=True, slots=True)
class GeneratedMember:
    """A member and, apart from its subscription fields, what its userData says.

    ``sticky``: the previous assignment and generation ``StickyAssignor`` wrote (generation
    ``None``: v0 bytes), or raw bytes (``sticky_raw``) when it wrote something else.
    ``cooperative_generation``: the generation in ``CooperativeStickyAssignor``'s userData, or
    raw bytes (``cooperative_raw``); either only for members with no generation field.
    """

    member: Member
    sticky: tuple[tuple[TopicPartition, ...], int | None] | None
    sticky_raw: bytes | None
    cooperative_generation: int | None
    cooperative_raw: bytes | None


@dataclass(frozen=True, slots=True)
class GeneratedGroup:
    seed: int
    shape: str
    brokers: tuple[tuple[int, str | None], ...]
    replicas: dict[str, tuple[tuple[int, ...], ...]]
    members: tuple[GeneratedMember, ...]


def group(seed: int) -> GeneratedGroup:
    """The group of ``seed`` (same seed, same group)."""
    rnd = random.Random(seed)
    racks = RACKS[: rnd.randint(1, 4)]
    brokers, replicas, full = _cluster(rnd, racks)
    counts = {t: len(ps) for t, ps in replicas.items()}
    members, subs_shape = _members(rnd, racks, sorted(counts))
    history = _history(rnd, members, counts)
    shape = (
        f"seed={seed} members={len(members)} topics={len(counts)}"
        f" partitions={sum(counts.values())} racks={len(racks)} full_rf={full} {subs_shape}"
    )
    return GeneratedGroup(seed, shape, brokers, replicas, tuple(history))


def _cluster(
    rnd: random.Random, racks: tuple[str, ...]
) -> tuple[tuple[tuple[int, str | None], ...], dict[str, tuple[tuple[int, ...], ...]], bool]:
    rackless = rnd.random() < 0.1
    n_brokers = rnd.randint(1, 8)
    brokers = tuple(
        (i, None if rackless or rnd.random() < 0.1 else racks[i % len(racks)])
        for i in range(n_brokers)
    )
    by_rack: dict[str, list[int]] = {}
    for b, r in brokers:
        if r is not None:
            by_rack.setdefault(r, []).append(b)
    full = rnd.random() < 0.2 and len(by_rack) == len(racks)  # a replica in every rack
    budget = rnd.choice((40, 120, 300))
    names = rnd.sample(["orders", "clicks", "t", "a.b", "x-y", "_z", "Pay", "logs"], 3)
    replicas: dict[str, tuple[tuple[int, ...], ...]] = {}
    for i in range(rnd.randint(1, 20)):
        n = min(rnd.choice((1, 2, 3, 4, 6, 8, 12, 16, 24, 40)), max(1, budget))
        budget -= n
        topic: list[tuple[int, ...]] = []
        for _ in range(n):
            if full:
                topic.append(tuple(rnd.choice(bs) for bs in by_rack.values()))
            else:
                rf = rnd.randint(1, min(3, n_brokers))
                topic.append(tuple(rnd.sample(range(n_brokers), rf)))
        replicas[f"{names[i % 3]}{i}"] = tuple(topic)
    return brokers, replicas, full


CLIENT_IDS = ("consumer", "app-1", "c", "svc-payments")
ODD_IDS = ("zähler", "消费者", "\U0001f600app", "\ue000x", "\uffffz")
"""Ids whose Java order (UTF-16 code units) differs from Python's, or that hash beyond ASCII."""


def _member_id(rnd: random.Random) -> str:
    client = rnd.choice(ODD_IDS if rnd.random() < 0.05 else CLIENT_IDS)
    return f"{client}-{uuid.UUID(int=rnd.getrandbits(128))}"


def _members(
    rnd: random.Random, racks: tuple[str, ...], topics: list[str]
) -> tuple[list[Member], str]:
    n = rnd.randint(2, 50)
    equal = rnd.random() < 0.4
    rack_mode = rnd.choice(("none", "some", "all", "all"))
    static = rnd.random() < 0.3
    pool = topics + ([GHOST] if rnd.random() < 0.2 else [])
    common = tuple(rnd.sample(pool, rnd.randint(1, len(pool))))
    patterns = [
        tuple(rnd.sample(pool, rnd.randint(1, len(pool)))) for _ in range(rnd.randint(1, 4))
    ]
    members = []
    for i in range(n):
        if equal:
            subscribed = common
        elif rnd.random() < 0.5:
            subscribed = rnd.choice(patterns)
        else:
            subscribed = tuple(rnd.sample(pool, rnd.randint(1, len(pool))))
        if rnd.random() < 0.03:
            subscribed = ()  # subscribed to nothing (a pattern that matches no topic)
        if rack_mode == "none" or rack_mode == "some" and rnd.random() < 0.4:
            rack = None
        else:
            rack = NOWHERE if rnd.random() < 0.05 else rnd.choice(racks)
        prefix = rnd.choice(ODD_IDS) if rnd.random() < 0.2 else "instance"
        instance = (
            f"{prefix}-{rnd.randint(0, 10**6)}-{i}" if static and rnd.random() < 0.5 else None
        )
        members.append(
            Member(
                member_id=_member_id(rnd),
                topics=tuple(rnd.sample(subscribed, len(subscribed))),
                group_instance_id=instance,
                rack_id=rack,
            )
        )
    return members, f"equal={equal} member_racks={rack_mode} static={static}"


def _history(
    rnd: random.Random, members: list[Member], counts: dict[str, int]
) -> list[GeneratedMember]:
    """Claims and generations from a previous generation, then the userData variants."""
    generation = rnd.randint(1, 40)
    everything = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
    kept = rnd.random() < 0.8  # the previous assignment covered the group's partitions
    previous: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    returning = [m.member_id for m in members if rnd.random() < 0.8]
    if returning and kept:
        for tp in everything:
            if rnd.random() < 0.9:
                previous[rnd.choice(returning)].append(tp)
    out = []
    for m in members:
        kind = rnd.random()
        if m.member_id not in returning:
            claims: list[TopicPartition] = []
            gen = -1
        elif kind < 0.15:  # missed rebalances: older claims, overlapping others'
            claims = rnd.sample(everything, min(len(everything), rnd.randint(0, 6)))
            gen = max(0, generation - rnd.randint(1, 3))
        else:
            claims = previous[m.member_id]
            gen = generation
        if claims and rnd.random() < 0.05 and everything:
            claims = [*claims, rnd.choice(everything)]  # maybe claimed by another, same generation
        claims = list(dict.fromkeys(claims))
        rnd.shuffle(claims)
        out.append(_with_user_data(rnd, m, tuple(claims), gen))
    rnd.shuffle(out)
    return out


def _with_user_data(
    rnd: random.Random, m: Member, claims: tuple[TopicPartition, ...], gen: int
) -> GeneratedMember:
    """The member as each assignor's consumer would send it."""
    sticky: tuple[tuple[TopicPartition, ...], int | None] | None = None
    sticky_raw = None
    roll = rnd.random()
    if gen < 0 and not claims and roll < 0.5:
        sticky_raw = None  # a new member: no userData yet
    elif roll < 0.05:
        sticky_raw = rnd.randbytes(rnd.randint(0, 9))  # not userData at all
    elif roll < 0.1:
        sticky = (claims, None)  # v0: no generation
    else:
        sticky = (claims, gen)
    field_generation = gen
    cooperative_generation = None
    cooperative_raw = None
    if rnd.random() < 0.15:  # protocol v0-1: no generation field, it is in the userData
        field_generation = -1
        roll = rnd.random()
        if roll < 0.7:
            cooperative_generation = gen
        elif roll < 0.85:
            cooperative_raw = rnd.randbytes(rnd.randint(0, 3))
    elif rnd.random() < 0.05:
        field_generation = rnd.choice((-1, gen + 1))  # sticky: field and userData disagree
    member = Member(
        member_id=m.member_id,
        topics=m.topics,
        group_instance_id=m.group_instance_id,
        rack_id=m.rack_id,
        owned_partitions=claims,
        generation=field_generation,
    )
    return GeneratedMember(member, sticky, sticky_raw, cooperative_generation, cooperative_raw)


def _sticky_bytes(g: GeneratedMember) -> bytes | None:
    """What ``StickyAssignor`` wrote: partitions grouped by topic in the order of the Java
    ``HashMap`` Kafka groups them in (filled with ``computeIfAbsent``)."""
    if g.sticky is None:
        return g.sticky_raw
    claims, generation = g.sticky
    by_topic: dict[str, list[int]] = {}
    for tp in claims:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    # one computeIfAbsent per partition: a call for a present key may still grow the table
    ordered = hash_order([tp.topic for tp in claims], string_hash, compute_if_absent=True)
    return encode_sticky_user_data([(t, by_topic[t]) for t in ordered], generation)


def _user_data(g: GeneratedMember, assignor: str) -> bytes | None:
    if assignor == "sticky":
        return _sticky_bytes(g)
    if assignor == "cooperative-sticky":
        if g.cooperative_generation is not None:
            return encode_cooperative_generation(g.cooperative_generation)
        return g.cooperative_raw
    return None


def for_kassign(g: GeneratedGroup, assignor: str) -> ConsumerGroup:
    """The group as kassign's model, with ``assignor``'s userData."""
    rack_of = dict(g.brokers)
    topics = [
        Topic(
            name,
            tuple(frozenset(r for b in ps if (r := rack_of[b]) is not None) for ps in parts),
        )
        for name, parts in g.replicas.items()
    ]
    members = [
        Member(
            member_id=m.member.member_id,
            topics=m.member.topics,
            group_instance_id=m.member.group_instance_id,
            rack_id=m.member.rack_id,
            owned_partitions=m.member.owned_partitions,
            generation=m.member.generation,
            user_data=_user_data(m, assignor),
        )
        for m in g.members
    ]
    return consumer_group(members, topics)


def for_kafka(g: GeneratedGroup, assignor: str) -> dict[str, Any]:
    """The group as the oracle's JSON line for ``assignor``."""
    members = []
    for gm in g.members:
        m = gm.member
        data = _user_data(gm, assignor)
        entry: dict[str, Any] = {
            "memberId": m.member_id,
            "groupInstanceId": m.group_instance_id,
            "topics": list(m.topics),
            "ownedPartitions": [[tp.topic, tp.partition] for tp in m.owned_partitions],
            "generation": m.generation,
            "rackId": m.rack_id,
            "userData": None if data is None else base64.b64encode(data).decode(),
        }
        if assignor == "sticky" and gm.sticky is not None and gm.sticky[1] is not None:
            entry["stickyPrevious"] = {
                "partitions": [[tp.topic, tp.partition] for tp in gm.sticky[0]],
                "generation": gm.sticky[1],
            }
        if assignor == "cooperative-sticky" and gm.cooperative_generation is not None:
            entry["cooperativeGeneration"] = gm.cooperative_generation
        members.append(entry)
    return {
        "assignor": assignor,
        "nodes": [{"id": b, "rack": r} for b, r in g.brokers],
        "topics": [{"name": t, "replicas": [list(p) for p in ps]} for t, ps in g.replicas.items()],
        "members": members,
    }


def line_for(cg: ConsumerGroup, assignor: str) -> dict[str, Any]:
    """A hand-written kassign group as the oracle's JSON line: one broker per rack (and one
    without), each partition's replicas on the brokers of its racks."""
    racks = sorted({r for t in cg.topics.values() for rs in t.partition_racks for r in rs})
    broker = {r: i + 1 for i, r in enumerate(racks)}
    return {
        "assignor": assignor,
        "nodes": [{"id": 0, "rack": None}] + [{"id": broker[r], "rack": r} for r in racks],
        "topics": [
            {
                "name": t.name,
                "replicas": [sorted(broker[r] for r in rs) or [0] for rs in t.partition_racks],
            }
            for t in cg.topics.values()
        ],
        "members": [
            {
                "memberId": m.member_id,
                "groupInstanceId": m.group_instance_id,
                "topics": list(m.topics),
                "ownedPartitions": [[tp.topic, tp.partition] for tp in m.owned_partitions],
                "generation": m.generation,
                "rackId": m.rack_id,
                "userData": None if m.user_data is None else base64.b64encode(m.user_data).decode(),
            }
            for m in cg.members
        ],
    }
