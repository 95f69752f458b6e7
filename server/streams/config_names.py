"""The names a Streams config goes by: Kafka's (``StreamsConfig``) and the contract's.

Why here: ``kassign assign --config``, ``kassign replay --config`` and the pipeline's grid files
all take either name for the same ``AssignmentConfigs`` field (issue 27: one naming scheme), and
the pipeline may not import the command line; this module is the one table.
"""

from __future__ import annotations

from kassign.v1 import assignment_pb2 as pb

__all__ = ["KAFKA_NAMES", "config_field", "known_names"]

KAFKA_NAMES = {
    "acceptable.recovery.lag": "acceptable_recovery_lag",
    "max.warmup.replicas": "max_warmup_replicas",
    "num.standby.replicas": "num_standby_replicas",
    "probing.rebalance.interval.ms": "probing_rebalance_interval_ms",
    "rack.aware.assignment.tags": "rack_aware_assignment_tags",
    "rack.aware.assignment.strategy": "rack_aware_strategy",
    "rack.aware.assignment.traffic_cost": "traffic_cost",
    "rack.aware.assignment.non_overlap_cost": "non_overlap_cost",
    "kassign.standby.rack.spread": "standby_rack_spread",
}
"""Kafka Streams' config names (``StreamsConfig``) and the ``AssignmentConfigs`` field each sets;
``kassign.*`` ones are kassign's own, named as the Streams plug-in reads them (docs/java.md)."""

_FIELDS = pb.AssignmentConfigs.DESCRIPTOR.fields_by_name


def known_names() -> str:
    """Every accepted name, Kafka's first, for an error message."""
    return ", ".join([*KAFKA_NAMES, *sorted(_FIELDS)])


def config_field(key: str) -> str | None:
    """The ``AssignmentConfigs`` field ``key`` names (Kafka's name, or the contract's with ``-``
    or ``_``), or None."""
    key = key.strip()
    name = KAFKA_NAMES.get(key, key.replace("-", "_"))
    return name if name in _FIELDS else None
