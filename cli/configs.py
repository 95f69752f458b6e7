"""Kafka's config names where a Streams request's ``configs`` are given: ``--config KEY=VALUE``.

Issue 27: ``"num.standby.replicas": 1`` in a request gave a bare protobuf error. Operators know
Kafka's names (``StreamsConfig``), the contract has its own (``AssignmentConfigs``): ``--config``
on ``assign``, ``call`` and ``explain`` takes either, and a Kafka name inside a JSON request is
answered with the contract's name and the flag that takes Kafka's.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb

__all__ = ["KAFKA_NAMES", "add_config_option", "config_patch", "kafka_name_hint", "streams_only"]

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


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set one of a Streams request's configs, by Kafka's name (num.standby.replicas=1) or"
        " the contract's (num_standby_replicas=1); a list comma-separated; repeatable"
        " (default: the request's own)",
    )


def streams_only(pairs: Sequence[str]) -> None:
    """A consumer request has no ``configs``: ``--config`` given with one is refused."""
    if pairs:
        raise json_format.ParseError("--config sets a Kafka Streams request's configs")


def config_patch(pairs: Iterable[str]) -> dict[str, object]:
    """``{"configs": {...}}`` in protobuf's JSON mapping from ``KEY=VALUE`` pairs (a later one
    wins; a list's items comma-separated); the caller parses it as it parses requests."""
    configs: dict[str, object] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals:
            raise json_format.ParseError(f"--config {pair}: expected KEY=VALUE")
        key = key.strip()
        name = KAFKA_NAMES.get(key, key.replace("-", "_"))
        field = _FIELDS.get(name)
        if field is None:
            known = ", ".join([*KAFKA_NAMES, *sorted(_FIELDS)])
            raise json_format.ParseError(f"--config {key}: no such config (known: {known})")
        if field.is_repeated:
            configs[field.json_name] = [v.strip() for v in value.split(",")]
        elif field.type == field.TYPE_BOOL:
            configs[field.json_name] = _flag(key, value)
        else:
            configs[field.json_name] = value
    return {"configs": configs}


def _flag(key: str, value: str) -> bool:
    """A bool config's text: protobuf's JSON takes ``true``, not ``"true"`` (as a flag gives it)."""
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise json_format.ParseError(f"--config {key}={value}: expected true or false")
    return text == "true"


def kafka_name_hint(name: str) -> str:
    """For a field a JSON request's ``configs`` has no room for: the contract's name, if
    ``name`` is Kafka's; "" otherwise."""
    field = KAFKA_NAMES.get(name)
    if field is None:
        return ""
    return (
        f"({name!r} is Kafka's name: a request's configs call it {_FIELDS[field].json_name!r};"
        f" --config {name}=VALUE takes Kafka's name)"
    )
