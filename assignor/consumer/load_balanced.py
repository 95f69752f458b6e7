"""Load-aware consumer assignment (issue 25, ``balance=LOAD``): the sticky assignors' mode and
``rack-optimal``'s, balancing each member's load per unit of capacity rather than its count.

Every partition of a subscribed topic is an item of the load core (``assignor/load``) with its
load (``AssignOptions.loads``, 1 where none is given), each member's capacity its weight
(``AssignOptions.capacities``, 1 by default); a partition may go to the members subscribed to
its topic, and starts with its previous owner: the member that claims it (eager ``sticky``: in
its userData, as Kafka's ``StickyAssignor`` reads it; the others: the subscription's owned
partitions; a partition claimed by two members stays with the first in member-id order). The
core minimises the peak, then the moves. ``cooperative``: a partition another member still
claims is withheld from its new owner this round and listed in that member's ``revoked``, as
``rack-optimal`` does.

Racks (KIP-881: a member's rack, a partition's replicas' racks) steer the core's last fill
(``LoadProblem.sites``): a partition goes to a rack-local member when one has room within the
target found, so racks never raise the peak. ``rack-optimal`` weighs them whenever a member has
a rack, before moves (its order at ``stickiness_cost`` 0: a cross-rack partition a rack-local
member could take is placed again); ``sticky`` and ``cooperative-sticky`` when Kafka's would
(``group_rack_reason``), after moves (a partition its owner keeps stays). A member without a
rack is never cross-rack, as the report counts.

Budget: the core is priced before each fill at ``_MS_PER_ITEM`` per item (no clock, so the
same request gets the same answer under any load) against ``options.time_budget_s``; past it
the assignor's count-balanced answer stands (its own solver given what is left), its load
figures read with the same loads, and a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from kassign.assignor.budget import priced_budget
from kassign.assignor.consumer import rack_optimal, sticky
from kassign.assignor.consumer.common import group_rack_reason, partitions_per_topic
from kassign.assignor.consumer.model import (
    AssignOptions,
    ConsumerGroup,
    Member,
    TopicPartition,
)
from kassign.assignor.consumer.result import (
    GroupAssignment,
    group_assignment,
)
from kassign.assignor.consumer.revoked import moving_away, withheld_from
from kassign.assignor.errors import InvalidRequest, SolverError
from kassign.assignor.load import LoadProblem, balance
from kassign.assignor.load.bound import lower_bound, peak_ratio
from kassign.assignor.load.figures import Balance, LoadFigures

__all__ = ["assign_load_balanced", "claims_of", "member_capacities", "partition_loads"]

_MS_PER_ITEM = 0.001
"""A fill's price per item placed: conservative (docs/load-aware.md, "Limits")."""

CountAssignor = Callable[[ConsumerGroup, AssignOptions], GroupAssignment]


def assign_load_balanced(
    name: str, group: ConsumerGroup, options: AssignOptions, count: CountAssignor
) -> GroupAssignment:
    """``group`` assigned by load under assignor ``name``'s claims and protocol; ``count``:
    the assignor's count-balanced mode, the answer past the time budget."""
    topics = partitions_per_topic(group)
    members = sorted(group.members, key=lambda m: m.member_id)
    index = {m.member_id: i for i, m in enumerate(members)}
    names = list(topics)
    offsets = np.cumsum([0, *topics.values()])
    loads = partition_loads(topics, options.loads)
    caps = member_capacities(members, options.capacities)
    row = {t: i for i, t in enumerate(names)}
    subscribers = np.zeros((len(names), len(members)), dtype=bool)
    for m in members:
        for t in m.topics:
            if t in row:
                subscribers[row[t], index[m.member_id]] = True
    classes = np.repeat(np.arange(len(names)), list(topics.values()))
    claims = claims_of(name, group, members)
    owners = np.full(len(loads), -1, dtype=np.int64)
    for m in reversed(members):  # the first claimant in id order is written last: it stays
        for tp in claims[m.member_id]:
            if tp.topic in topics and tp.partition < topics[tp.topic]:
                owners[offsets[row[tp.topic]] + tp.partition] = index[m.member_id]
    reason = group_rack_reason(group)
    by_rack = name == rack_optimal.NAME or reason.enables
    sites, local = _racks(group, topics, members) if by_rack else (None, None)
    if subscribers.all():  # one class, every member: the core's unrestricted (bulk) path
        problem = LoadProblem(loads, caps, owners, sites=sites, local=local)
    else:
        problem = LoadProblem(loads, caps, owners, classes, subscribers, sites, local)
    afford = priced_budget(options.time_budget_s, _MS_PER_ITEM, "item placements")
    try:
        plan = balance(problem, racks_first=name == rack_optimal.NAME, afford=afford)
    except SolverError as exc:
        left = max(options.time_budget_s - afford(0), 0.0)
        counted = count(group, replace(options, balance=Balance.COUNT, time_budget_s=left))
        owned = _owners(counted, names, offsets, index)
        figures = LoadFigures(
            lower_bound(loads, caps), peak_ratio(loads, caps, owned), _mean(loads, caps)
        )
        note = f"balance LOAD not applied ({exc}): the count-balanced answer stands"
        return counted.with_load(figures, note)
    target: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    for k, topic in enumerate(names):
        start, end = int(offsets[k]), int(offsets[k + 1])
        for p, owner in enumerate(plan.owners[start:end].tolist()):
            target[members[owner].member_id].append(TopicPartition(topic, p))
    cooperative = options.cooperative or name == "cooperative-sticky"
    result = group_assignment(
        name,
        group,
        target,
        claims=claims,
        rack_reason=reason,
        withheld=withheld_from(group, target) if cooperative else (),
        revoked=moving_away(group, target) if cooperative else None,
    )
    return result.with_load(LoadFigures(plan.bound, plan.peak, _mean(loads, caps)))


def _mean(loads: np.ndarray, caps: np.ndarray) -> float:
    return float(loads.sum() / caps.sum()) if len(caps) else 0.0


def _racks(
    group: ConsumerGroup, topics: Mapping[str, int], members: Sequence[Member]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each partition's site (its replicas' racks, numbered as first seen) and whether each
    site is rack-local on each member (the member has no rack, or one of the site's); nothing
    when no member has a rack."""
    if all(m.rack is None for m in members):
        return None, None
    numbers: dict[frozenset[str], int] = {}
    sites = np.fromiter(
        (
            numbers.setdefault(racks, len(numbers))
            for t in topics
            for racks in group.topics[t].partition_racks
        ),
        dtype=np.int64,
        count=sum(topics.values()),
    )
    local = np.array(
        [[m.rack is None or m.rack in racks for m in members] for racks in numbers],
        dtype=bool,
    ).reshape(len(numbers), len(members))
    return sites, local


def _owners(
    result: GroupAssignment,
    names: Sequence[str],
    offsets: np.ndarray,
    index: Mapping[str, int],
) -> np.ndarray:
    """Each partition's member index in ``result`` (partitions in the core's item order)."""
    row = {t: i for i, t in enumerate(names)}
    owners = np.zeros(int(offsets[-1]), dtype=np.int64)
    for member_id, partitions in result.partitions().items():
        for tp in partitions:
            owners[offsets[row[tp.topic]] + tp.partition] = index[member_id]
    return owners


def partition_loads(
    topics: Mapping[str, int], given: Mapping[str, Sequence[float]] | None
) -> np.ndarray:
    """Each partition's load, topics in ``topics``' order: ``given``'s, or 1 for a topic it
    does not list. ``InvalidRequest`` for a list of the wrong length or a load that is
    negative or not finite."""
    given = given or {}
    out = []
    for t, n in topics.items():
        values = given.get(t)
        if values is None:
            out.append(np.ones(n))
            continue
        if len(values) != n:
            raise InvalidRequest(
                f"{len(values)} loads for {n} partitions", field=f"topics[{t}].partition_loads"
            )
        row = np.asarray(values, dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(row) | (row < 0))
        if len(bad):
            raise InvalidRequest(
                f"partition {int(bad[0])}'s load {row[bad[0]]} is not a non-negative number",
                field=f"topics[{t}].partition_loads",
            )
        out.append(row)
    return np.concatenate(out) if out else np.zeros(0)


def member_capacities(members: Sequence[Member], given: Mapping[str, float] | None) -> np.ndarray:
    """Each of ``members``' capacity, ``given``'s or 1; ``InvalidRequest`` naming the member
    for one that is not a positive number."""
    given = given or {}
    caps = np.array([given.get(m.member_id, 1.0) for m in members], dtype=np.float64)
    for m, c in zip(members, caps.tolist(), strict=True):
        if not (math.isfinite(c) and c > 0):
            raise InvalidRequest(
                f"capacity {c} is not a positive number",
                field="subscription.capacity",
                member=m.member_id,
            )
    return caps


def claims_of(
    name: str, group: ConsumerGroup, members: Sequence[Member]
) -> dict[str, Sequence[TopicPartition]]:
    """What each member claims under ``name``: eager sticky's userData, else owned partitions."""
    if name == sticky.NAME:
        return {m: d.partitions for m, d in sticky.sticky_members_data(group, members).items()}
    return {m.member_id: m.owned_partitions for m in members}
