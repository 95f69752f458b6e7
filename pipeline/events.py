"""Events that change a group between rebalances: clients join or leave, a rack fails or returns.

Why: what an operator fears is not the steady state but the churn after a change; simulate
applies each event to a converged group and counts the rebalances until it settles again.

EVENTS.json is a list, applied in order, each event starting a new phase of the simulation::

    [{"kind": "rack_fail", "rack": 0},
     {"kind": "rack_return", "rack": 0},
     {"kind": "join", "count": 2},
     {"kind": "leave", "count": 1}]

``rack`` is an index into the group's racks (or a rack name); a rack the group does not have
makes the event a no-op. A failed rack's clients keep their disks: when the rack returns they
report their old stores as (possibly lagging) standby state, never as running actives.
"""

from __future__ import annotations

import enum
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kassign.assignor.streams.model import LATEST_OFFSET, TaskId
from kassign.pipeline.generate import GroupSpec, new_client
from kassign.pipeline.group import Group, SimClient

__all__ = ["Event", "EventKind", "apply_event", "events_from_json", "load_events", "rack_name"]


class EventKind(enum.Enum):
    JOIN = "join"
    LEAVE = "leave"
    RACK_FAIL = "rack_fail"
    RACK_RETURN = "rack_return"


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    kind: EventKind
    count: int = 1
    rack: int | str = 0

    @property
    def label(self) -> str:
        if self.kind in (EventKind.JOIN, EventKind.LEAVE):
            return f"{self.kind.value}:{self.count}"
        return f"{self.kind.value}:{self.rack}"


def events_from_json(document: Sequence[Mapping[str, Any]]) -> tuple[Event, ...]:
    """Events from EVENTS.json's list; an unknown kind is an error."""
    events = []
    for entry in document:
        kind = EventKind(entry["kind"])
        events.append(Event(kind=kind, count=int(entry.get("count", 1)), rack=entry.get("rack", 0)))
    return tuple(events)


def load_events(path: str | Path | None) -> tuple[Event, ...]:
    return () if path is None else events_from_json(json.loads(Path(path).read_text()))


def rack_name(group: Group, rack: int | str) -> str | None:
    """The rack an event names, or ``None`` when the group has no such rack."""
    if isinstance(rack, int):
        return group.racks[rack] if 0 <= rack < len(group.racks) else None
    return rack if rack in group.racks else None


def _demoted(client: SimClient, group: Group) -> SimClient:
    """A client back from a failure: its former actives are on disk, no longer running."""
    end = {t.id: t.changelog_end_offset_sum for t in group.tasks if t.stateful}
    sums: dict[TaskId, int] = {}
    for task, offset in client.offset_sums.items():
        if task in end:
            sums[task] = end[task] if offset == LATEST_OFFSET else offset
    return replace(client, offset_sums=sums)


def apply_event(group: Group, event: Event, *, spec: GroupSpec, phase: int) -> Group:
    """The group after ``event``; random choices are seeded by the group id and the phase."""
    rng = random.Random(f"kassign-event:{group.group_id}:{phase}")
    if event.kind is EventKind.JOIN:
        start = len(group.clients) + len(group.offline)
        racks = group.racks or ("",)
        joined = tuple(
            new_client(rng, spec, racks[(start + i) % len(racks)], start + i)
            for i in range(event.count)
        )
        return replace(group, clients=group.clients + joined)
    if event.kind is EventKind.LEAVE:
        keep = max(1, len(group.clients) - event.count)
        kept = sorted(rng.sample(range(len(group.clients)), keep))
        return replace(group, clients=tuple(group.clients[i] for i in kept))
    rack = rack_name(group, event.rack)
    if rack is None:
        return group
    if event.kind is EventKind.RACK_FAIL:
        down = tuple(c for c in group.clients if c.rack == rack)
        up = tuple(c for c in group.clients if c.rack != rack)
        if not up:  # a group with one rack cannot lose it and still be assigned: keep it
            return group
        return replace(group, clients=up, offline=group.offline + down)
    back = tuple(_demoted(c, group) for c in group.offline if c.rack == rack)
    still_down = tuple(c for c in group.offline if c.rack != rack)
    return replace(group, clients=group.clients + back, offline=still_down)
