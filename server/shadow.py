"""What both rooms' shadow calls share (issue 26): the comparison as the contract's message,
and the check that a member or task is not given twice in Kafka's answer.

Each room decodes Kafka's answer in its own ``shadow.py`` (``server/streams``,
``server/consumer``) and measures it with the library (``kassign.assignor.*.shadow``).
"""

from __future__ import annotations

from collections.abc import Hashable

from kassign.assignor.errors import InvalidRequest
from kassign.assignor.shadow import Comparison, Figures
from kassign.v1 import common_pb2

__all__ = ["SHADOW_PHASE", "comparison_message", "figures_message", "once"]

SHADOW_PHASE = "shadow"
"""The phase a shadow call adds after ``encode`` (decoding Kafka's answer is in ``decode``)."""


def figures_message(figures: Figures) -> common_pb2.ShadowFigures:
    message = common_pb2.ShadowFigures(
        cross_rack_partitions=figures.cross_rack_partitions,
        moved=figures.moved,
        standbys_moved=figures.standbys_moved,
        max_per_member=figures.max_per_member,
        min_per_member=figures.min_per_member,
        standbys_sharing_rack_or_tag=figures.standbys_sharing_rack_or_tag,
    )
    if figures.max_load is not None:
        message.max_load = figures.max_load
    return message


def comparison_message(comparison: Comparison) -> common_pb2.ShadowComparison:
    return common_pb2.ShadowComparison(
        kafka_assignor=comparison.kafka_assignor,
        kafka=figures_message(comparison.kafka),
        kassign=figures_message(comparison.kassign),
        same=comparison.same,
        differing_members=comparison.differing_members,
    )


def once(seen: dict[Hashable, str], key: Hashable, field: str, member: str, what: str) -> None:
    """Record that ``field`` gives ``key``; ``InvalidRequest`` naming both places if an
    earlier field of Kafka's answer gave it already."""
    earlier = seen.setdefault(key, field)
    if earlier != field:
        raise InvalidRequest(f"{what} given twice (first in {earlier})", field=field, member=member)
