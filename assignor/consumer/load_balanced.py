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
``rack-optimal`` does. Racks are not weighed in this mode yet: the report's cross-rack counts
say what the answer costs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from kassign.assignor.consumer import sticky
from kassign.assignor.consumer.common import partitions_per_topic, rack_reason
from kassign.assignor.consumer.model import (
    AssignOptions,
    ConsumerGroup,
    Member,
    TopicPartition,
)
from kassign.assignor.consumer.result import (
    GroupAssignment,
    group_assignment,
    moving_away,
    withheld_from,
)
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.load import LoadProblem, balance
from kassign.assignor.load.figures import LoadFigures

__all__ = ["assign_load_balanced", "partition_loads"]


def assign_load_balanced(
    name: str, group: ConsumerGroup, options: AssignOptions
) -> GroupAssignment:
    """``group`` assigned by load under assignor ``name``'s claims and protocol."""
    topics = partitions_per_topic(group)
    members = sorted(group.members, key=lambda m: m.member_id)
    index = {m.member_id: i for i, m in enumerate(members)}
    names = list(topics)
    offsets = np.cumsum([0, *topics.values()])
    loads = partition_loads(topics, options.loads)
    caps = _capacities(members, options.capacities)
    row = {t: i for i, t in enumerate(names)}
    subscribers = np.zeros((len(names), len(members)), dtype=bool)
    for m in members:
        for t in m.topics:
            if t in row:
                subscribers[row[t], index[m.member_id]] = True
    classes = np.repeat(np.arange(len(names)), list(topics.values()))
    claims = _claims(name, group, members)
    owners = np.full(len(loads), -1, dtype=np.int64)
    for m in reversed(members):  # the first claimant in id order is written last: it stays
        for tp in claims[m.member_id]:
            if tp.topic in topics and tp.partition < topics[tp.topic]:
                owners[offsets[row[tp.topic]] + tp.partition] = index[m.member_id]
    plan = balance(LoadProblem(loads, caps, owners, classes, subscribers))
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
        rack_reason=rack_reason(
            (m.rack for m in group.members if m.rack is not None),
            (group.topics[t].partition_racks[p] for t, n in topics.items() for p in range(n)),
        ),
        withheld=withheld_from(group, target) if cooperative else (),
        revoked=moving_away(group, target) if cooperative else None,
    )
    mean = float(loads.sum() / caps.sum()) if len(caps) else 0.0
    return result.with_load(LoadFigures(plan.bound, plan.peak, mean))


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


def _capacities(members: Sequence[Member], given: Mapping[str, float] | None) -> np.ndarray:
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


def _claims(
    name: str, group: ConsumerGroup, members: Sequence[Member]
) -> dict[str, Sequence[TopicPartition]]:
    """What each member claims under ``name``: eager sticky's userData, else owned partitions."""
    if name == sticky.NAME:
        return {m: d.partitions for m, d in sticky.sticky_members_data(group, members).items()}
    return {m.member_id: m.owned_partitions for m in members}
