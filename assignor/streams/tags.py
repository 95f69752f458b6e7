"""Where clients stand for standby placement: the tag keys to spread over and each client's values.

KIP-708 lets users tag clients (``client.tag.zone=eu-central-1a``) and name the keys that matter
(``rack.aware.assignment.tags``); standbys of a task should then sit on clients that differ from
the active and from each other on every such key. KIP-925 §D adds: with no tags configured but a
rack id on every client, the rack is the one tag; with both present, the tags win and a
disagreement is reported (not fatal). kassign reads §D so only when ``standby_rack_spread`` is
set: Kafka's assignors never hand racks to standby placement (issue 27: spreading cost balance
and traffic on groups where Kafka's least-loaded placement did better), so by default racks
without tags leave standbys least loaded, as in Kafka.

This module only describes the layout; ``standby.py`` places the replicas.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from kassign.assignor.ordering import sorted_processes
from kassign.assignor.streams.model import ApplicationState, ProcessId

__all__ = [
    "RACK_TAG",
    "TagLayout",
    "TagSource",
    "exclude_used_values",
    "is_excluded",
    "one_tag_layout",
    "rack_tag_mismatches",
    "tag_layout",
]

RACK_TAG = "rack"
"""The tag key a client's rack id stands for (KIP-925 §D compares it with ``client.tag.rack``)."""


class TagSource(enum.Enum):
    """What the layout was built from."""

    NONE = "none"  # least-loaded placement, no tags
    TAGS = "tags"  # rack_aware_assignment_tags over client_tags (KIP-708)
    RACK = "rack"  # every client's rack id as the single tag (KIP-925 §D)


@dataclass(frozen=True, slots=True)
class TagLayout:
    """The keys standbys are spread over and, per client, its value for each key (``None``: unset).

    ``distinct[i]`` counts the different values of ``keys[i]`` over all clients: once a task's
    replicas have used that many clients, the key can no longer tell them apart (partial
    awareness, KIP-708). ``notes`` explains anything surprising (a rack/tag disagreement).
    """

    source: TagSource
    keys: tuple[str, ...]
    values: Mapping[ProcessId, tuple[str | None, ...]]
    distinct: tuple[int, ...]
    notes: tuple[str, ...] = ()

    @property
    def tag_aware(self) -> bool:
        return self.source is not TagSource.NONE


_SCOPE: ContextVar[list[object] | None] = ContextVar("tag_layout_scope", default=None)
"""Inside ``one_tag_layout``: ``[state, its layout or None until first asked]``."""


@contextmanager
def one_tag_layout(state: ApplicationState) -> Iterator[None]:
    """Within the block, ``tag_layout(state)`` is built at most once (an assignor's call asks
    for it from up to seven places, a map keyed by process id each time: 3-6% of a call at
    10,000 x 1,000 and 100,000 x 5,000; issue 24). Scoped to the block and the thread, so no
    layout outlives its call and concurrent calls never share one."""
    token = _SCOPE.set([state, None])
    try:
        yield
    finally:
        _SCOPE.reset(token)


def tag_layout(state: ApplicationState) -> TagLayout:
    """The layout standby placement should use for ``state`` (tags, else racks when
    ``standby_rack_spread`` is set, else none); once per ``one_tag_layout`` block.

    Tag keys keep their configured order (duplicates dropped); tags a client carries outside
    the configured keys are ignored, as KIP-708 says.
    """
    scope = _SCOPE.get()
    if scope is None or scope[0] is not state:
        return _tag_layout(state)
    if scope[1] is None:
        scope[1] = _tag_layout(state)
    layout = scope[1]
    assert isinstance(layout, TagLayout)
    return layout


def _tag_layout(state: ApplicationState) -> TagLayout:
    configured = tuple(dict.fromkeys(state.configs.rack_aware_assignment_tags))
    clients = state.clients
    if configured:
        values = {pid: tuple(map(c.client_tags.get, configured)) for pid, c in clients.items()}
        notes = _uncarried(configured, values) + rack_tag_mismatches(state)
        return _layout(TagSource.TAGS, configured, values, notes)
    if state.configs.standby_rack_spread and clients and all(c.rack_id for c in clients.values()):
        values = {pid: (c.rack_id,) for pid, c in clients.items()}
        return _layout(TagSource.RACK, (RACK_TAG,), values, ())
    return TagLayout(TagSource.NONE, (), {pid: () for pid in clients}, ())


def _uncarried(
    configured: tuple[str, ...], values: Mapping[ProcessId, tuple[str | None, ...]]
) -> tuple[str, ...]:
    """A note on configured tag keys no client carries: they cannot spread anything, and
    without one the standbys are placed as if no tags were configured (a typo in a key, or
    clients not yet tagged, would otherwise go unnoticed)."""
    missing = [k for i, k in enumerate(configured) if all(v[i] is None for v in values.values())]
    if not missing or not values:
        return ()
    if len(missing) == len(configured):
        note = f"no client carries any of rack_aware_assignment_tags {missing}"
        return (note + ": standbys are placed without tag awareness",)
    return (f"no client carries rack_aware_assignment_tags key(s) {missing}: they are ignored",)


def _layout(
    source: TagSource,
    keys: tuple[str, ...],
    values: Mapping[ProcessId, tuple[str | None, ...]],
    notes: tuple[str, ...],
) -> TagLayout:
    distinct = tuple(
        len({v[i] for v in values.values() if v[i] is not None}) for i in range(len(keys))
    )
    return TagLayout(source, keys, values, distinct, notes)


def rack_tag_mismatches(state: ApplicationState) -> tuple[str, ...]:
    """Notes on clients whose rack id disagrees with their tags (KIP-925 §D option III).

    Only when tags are configured and some client reports a rack: either ``rack`` is not a
    configured tag key, or a client's ``client.tag.rack`` differs from its rack id. The
    assignment goes on with the tags; the notes say what was ignored.
    """
    configured = state.configs.rack_aware_assignment_tags
    if not configured or not any(c.rack_id for c in state.clients.values()):
        return ()
    if RACK_TAG not in configured:
        return (
            f"clients report rack ids but rack_aware_assignment_tags {list(configured)} has no "
            + f"'{RACK_TAG}' key: standbys follow the tags, rack ids are ignored for standbys",
        )
    clients = state.clients  # sorted only for the note: most groups have no disagreement
    odd = [
        pid for pid, c in clients.items() if c.rack_id and c.client_tags.get(RACK_TAG) != c.rack_id
    ]
    differing = [
        f"{pid} (rack {clients[pid].rack_id!r}, tag {clients[pid].client_tags.get(RACK_TAG)!r})"
        for pid in sorted_processes(odd)
    ]
    if not differing:
        return ()
    return (
        f"client tag '{RACK_TAG}' differs from the rack id on {len(differing)} client(s), "
        f"standbys follow the tags: " + ", ".join(differing),
    )


def exclude_used_values(
    excluded: dict[int, set[str]],
    used_values: Sequence[str | None],
    used_count: int,
    distinct: Sequence[int],
) -> None:
    """Record a client just given a replica in ``excluded`` (scratch of one task's placement).

    For each key the client has a value for: when the task's replicas already occupy as many
    clients as the key has values, the key stops constraining (all its values freed: partial
    awareness); otherwise the client's value is barred for the task's next replicas. Keys the
    client lacks are left as they were, as Kafka does.
    """
    for index, value in enumerate(used_values):
        if value is None:
            continue
        if distinct[index] <= used_count:
            excluded.pop(index, None)
        else:
            excluded.setdefault(index, set()).add(value)


def is_excluded(values: Sequence[str | None], excluded: Mapping[int, set[str]]) -> bool:
    """Whether a client's values hit a barred value on any still-constraining key."""
    for index, barred in excluded.items():
        value = values[index]
        if value is not None and value in barred:
            return True
    return False
