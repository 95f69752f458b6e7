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
from kassign.server.streams.config_names import KAFKA_NAMES, config_field, known_names
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "KAFKA_NAMES",
    "add_config_option",
    "config_pairs",
    "config_patch",
    "kafka_name_hint",
    "streams_only",
]

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


def config_pairs(pairs: Iterable[str]) -> dict[str, str | bool | list[str]]:
    """``AssignmentConfigs`` field -> value from ``KEY=VALUE`` pairs (a later one wins; a list's
    items comma-separated); the pipeline's commands take these as their grid files' entries."""
    configs: dict[str, str | bool | list[str]] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals:
            raise json_format.ParseError(f"--config {pair}: expected KEY=VALUE")
        name = config_field(key)
        if name is None:
            raise json_format.ParseError(
                f"--config {key.strip()}: no such config (known: {known_names()})"
            )
        field = _FIELDS[name]
        if field.is_repeated:
            configs[name] = [v.strip() for v in value.split(",")]
        elif field.type == field.TYPE_BOOL:
            configs[name] = _flag(key, value)
        else:
            configs[name] = value
    return configs


def config_patch(pairs: Iterable[str]) -> dict[str, object]:
    """``{"configs": {...}}`` in protobuf's JSON mapping from ``KEY=VALUE`` pairs
    (``config_pairs``); the caller parses it as it parses requests."""
    configs = config_pairs(pairs)
    return {"configs": {_FIELDS[name].json_name: value for name, value in configs.items()}}


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
