"""Measures of a rack-aware answer, the same for kassign's and Kafka's: traffic, tag spread, balance.

Why these three: KIP-925's optimiser trades cross-rack traffic for nothing else, so two valid
answers are compared on the traffic they cause. KIP-708's tags may ask for standbys somewhere
else than the cheapest rack, so an answer that pays traffic to spread replicas over tag values is
not worse; the tag spread says which side spread better. Balance is reported, not compared here.

- ``cross_rack_cost``: Kafka's built-in cost model (``RackAwareTaskAssignor#getCost`` with a
  traffic cost of 1 and no non-overlap cost): each active counts its *source* partitions with no
  replica on its client's rack, each standby its *changelog* partitions likewise. A client's rack
  is its consumers' ``rack_id``.
- ``tag_spread``: with tag keys configured (``rack_aware_assignment_tags``), the number of stateful
  tasks whose replicas (the active's client and the standbys' clients, ``r`` clients) take fewer
  than ``min(r, V)`` distinct values of some key, ``V`` being how many distinct values that key
  takes over all the group's clients (a client without the tag counts as the value ``""``). That
  is: a task counts when two of its replicas share a value although the group has a value to
  spare. Keys are counted independently, so a group where zone and cluster are tied may not let
  every task spread on both: both sides pay that alike. Without tag keys, when the request sets
  ``standby_rack_spread`` and every client has a rack, the rack is the one key: kassign then
  keeps a task's replicas on different racks where it can (KIP-925 C and D; docs/assignors.md,
  Racks as tags), which Kafka's high-availability assignor does not (it hands its standby
  assignor no racks), so the spread says what that option costs. Otherwise it is 0: by default
  kassign, like Kafka, does not spread standbys over racks, and both sides are held to traffic.
- ``thread_spread``: the most minus the fewest active tasks per thread over the clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kassign.v1 import assignment_pb2 as pb

from tests.differential.compare import Outcome

__all__ = ["GroupView", "Measures", "cross_rack_cost", "measure", "tag_spread", "thread_spread"]


@dataclass(frozen=True, slots=True)
class GroupView:
    """What the measures read from a request: per client (process id) its rack, threads and tags;
    per task (``"1_2"``) the replica racks of each source and each changelog partition."""

    rack: Mapping[str, str]
    threads: Mapping[str, int]
    tags: Mapping[str, Mapping[str, str]]
    tag_keys: tuple[str, ...]
    rack_spread: bool
    sources: Mapping[str, tuple[frozenset[str], ...]]
    changelogs: Mapping[str, tuple[frozenset[str], ...]]
    stateful: frozenset[str]

    @classmethod
    def of(cls, request: pb.AssignRequest) -> GroupView:
        rack: dict[str, str] = {}
        threads: dict[str, int] = {}
        tags: dict[str, dict[str, str]] = {}
        for member in request.members:
            sub = member.subscription
            pid = sub.info.process_id
            threads[pid] = threads.get(pid, 0) + 1
            rack[pid] = rack.get(pid) or sub.rack_id
            tags[pid] = {t.key: t.value for t in sub.info.client_tags}
        sources, changelogs = {}, {}
        for task in request.tasks:
            tid = _task_id(task.id)
            parts = task.topic_partitions
            sources[tid] = tuple(frozenset(p.rack_ids) for p in parts if p.is_source)
            changelogs[tid] = tuple(frozenset(p.rack_ids) for p in parts if p.is_changelog)
        return cls(
            rack=rack,
            threads=threads,
            tags=tags,
            tag_keys=tuple(request.configs.rack_aware_assignment_tags),
            rack_spread=request.configs.standby_rack_spread,
            sources=sources,
            changelogs=changelogs,
            stateful=frozenset(_task_id(t.id) for t in request.tasks if t.stateful),
        )


@dataclass(frozen=True, slots=True)
class Measures:
    """One side's answer measured; the cost split into its actives' and its standbys' parts."""

    active_cost: int
    standby_cost: int
    tag_spread: int
    thread_spread: float

    @property
    def cost(self) -> int:
        return self.active_cost + self.standby_cost


def _task_id(t: pb.TaskId) -> str:
    """The id ``compare.Outcome`` uses (``TaskId.toString`` without named topologies)."""
    return f"{t.subtopology}_{t.partition}"


def _cross_rack(racks: tuple[frozenset[str], ...], client_rack: str) -> int:
    return sum(client_rack not in r for r in racks)


def cross_rack_cost(view: GroupView, outcome: Outcome) -> tuple[int, int]:
    """(actives' source partitions, standbys' changelog partitions) off their client's rack."""
    actives = sum(
        _cross_rack(view.sources[t], view.rack[pid])
        for pid, tasks in outcome.active.items()
        for t in tasks
    )
    standbys = sum(
        _cross_rack(view.changelogs[t], view.rack[pid])
        for pid, tasks in outcome.standby.items()
        for t in tasks
    )
    return actives, standbys


def tag_spread(view: GroupView, outcome: Outcome) -> int:
    """Stateful tasks whose replicas could take more distinct values of some tag key (module
    docstring); 0 without tag keys."""
    tags, keys = _spread_keys(view)
    if not keys:
        return 0
    replicas: dict[str, list[str]] = {}
    for held in (outcome.active, outcome.standby):
        for pid, tasks in held.items():
            for t in tasks:
                replicas.setdefault(t, []).append(pid)
    available = {k: len({tags[p].get(k, "") for p in tags}) for k in keys}
    return sum(
        any(
            len({tags[p].get(k, "") for p in clients}) < min(len(clients), available[k])
            for k in keys
        )
        for t, clients in replicas.items()
        if t in view.stateful
    )


_RACK_KEY = "\0rack"
"""The key the rack stands in for when no tag keys are configured (no tag can be named so)."""


def _spread_keys(view: GroupView) -> tuple[Mapping[str, Mapping[str, str]], tuple[str, ...]]:
    """The tags and keys replicas should spread over: the configured ones, else the rack when
    the request asks for it (``standby_rack_spread``)."""
    if view.tag_keys:
        return view.tags, view.tag_keys
    if view.rack_spread and view.rack and all(view.rack.values()):
        return {p: {_RACK_KEY: r} for p, r in view.rack.items()}, (_RACK_KEY,)
    return {}, ()


def thread_spread(view: GroupView, outcome: Outcome) -> float:
    """Most minus fewest active tasks per thread."""
    loads = [len(outcome.active.get(pid, ())) / n for pid, n in view.threads.items()]
    return max(loads) - min(loads)


def measure(view: GroupView, outcome: Outcome) -> Measures:
    active_cost, standby_cost = cross_rack_cost(view, outcome)
    return Measures(
        active_cost=active_cost,
        standby_cost=standby_cost,
        tag_spread=tag_spread(view, outcome),
        thread_spread=thread_spread(view, outcome),
    )
