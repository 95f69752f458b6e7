"""Requests in, responses out: protobuf's JSON mapping, as ``kassign assign | call | explain`` read.

Why apart from ``main.py``: every subcommand reads a request file, and Kafka's spellings (config
names, ``rack.aware.assignment.strategy`` values) and the other kind's fields get hints here,
once, whichever command read the file.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from google.protobuf import json_format
from kassign.cli import configs
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "KAFKA_STRATEGIES",
    "KINDS",
    "Request",
    "Response",
    "parse_json",
    "read_consumer_request",
    "read_kind",
    "read_request",
    "with_configs",
    "write_response",
]

KINDS = ("streams", "consumer")
"""``--kind``: which service's request a file holds (Kafka Streams, or a plain consumer group)."""


def _read_text(source: str) -> str:
    return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")


def read_request(source: str) -> pb.AssignRequest:
    """An ``AssignRequest`` in protobuf's JSON mapping from a file, or stdin for ``-``."""
    return parse_json(_read_text(source), pb.AssignRequest())


def read_consumer_request(source: str) -> cpb.ConsumerAssignRequest:
    """A ``ConsumerAssignRequest`` in protobuf's JSON mapping from a file, or stdin for ``-``."""
    return parse_json(_read_text(source), cpb.ConsumerAssignRequest())


_M = TypeVar("_M", pb.AssignRequest, cpb.ConsumerAssignRequest)

KAFKA_STRATEGIES = {
    s.name.removeprefix("RACK_AWARE_STRATEGY_").lower(): s.name
    for s in pb.RackAwareStrategy.DESCRIPTOR.values
    if s.number != pb.RACK_AWARE_STRATEGY_UNSPECIFIED
}
"""Kafka's spellings of ``rack.aware.assignment.strategy`` (``none``, ``min_traffic``,
``balance_subtopology``), accepted for the enum's names in request JSON."""

_INVALID_ENUM = re.compile(r"Invalid enum value (\S+) for enum type ([\w.]+)")


def parse_json(text: str, message: _M) -> _M:
    """Protobuf's JSON mapping, with Kafka's strategy spellings accepted, and an invalid enum
    value answered with the valid ones."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise json_format.ParseError(f"not JSON: {exc}") from exc
    configs = data.get("configs") if isinstance(data, dict) else None
    if isinstance(configs, dict):
        for key in ("rackAwareStrategy", "rack_aware_strategy"):
            value = configs.get(key)
            if isinstance(value, str) and value.lower() in KAFKA_STRATEGIES:
                configs[key] = KAFKA_STRATEGIES[value.lower()]
    try:
        return json_format.ParseDict(data, message)
    except json_format.ParseError as exc:
        if hint := _kafka_name_hint(str(exc)) or _other_kind_hint(str(exc), message):
            raise json_format.ParseError(f"{exc}\n{hint}") from exc
        found = _INVALID_ENUM.search(str(exc))
        if found is None:
            raise
        enum = message.DESCRIPTOR.file.pool.FindEnumTypeByName(found.group(2))
        names = [v.name for v in enum.values]
        hint = f"; valid values: {', '.join(names)}"
        if enum.full_name == pb.RackAwareStrategy.DESCRIPTOR.full_name:
            hint += f" (or Kafka's {', '.join(KAFKA_STRATEGIES)})"
        raise json_format.ParseError(f"{exc}{hint}") from exc


_UNKNOWN_FIELD = re.compile(r'has no field named "([\w.]+)"')


def _kafka_name_hint(error: str) -> str:
    found = _UNKNOWN_FIELD.search(error)
    return configs.kafka_name_hint(found.group(1)) if found else ""


def _other_kind_hint(error: str, message: pb.AssignRequest | cpb.ConsumerAssignRequest) -> str:
    """A field the request has no room for, but the other kind of request has: the file is
    most likely that kind (a consumer request sent without ``--kind consumer``, say)."""
    found = _UNKNOWN_FIELD.search(error)
    if found is None:
        return ""
    consumer = isinstance(message, cpb.ConsumerAssignRequest)
    other = (pb.AssignRequest if consumer else cpb.ConsumerAssignRequest).DESCRIPTOR
    name = found.group(1)
    if not any(name in (f.name, f.json_name) for f in other.fields):
        return ""
    if consumer:
        return f"({name!r} is a Kafka Streams AssignRequest's field: drop --kind consumer)"
    return f"({name!r} is a ConsumerAssignRequest's field: pass --kind consumer)"


Request = pb.AssignRequest | cpb.ConsumerAssignRequest
Response = pb.AssignResponse | cpb.ConsumerAssignResponse


def read_kind(source: str, kind: str, config: Sequence[str] = ()) -> Request:
    """The request of ``kind`` (``KINDS``) in ``source``, with ``--config`` pairs over a Streams
    request's configs (a consumer request takes none)."""
    if kind == "consumer":
        configs.streams_only(config)
        return read_consumer_request(source)
    return with_configs(read_request(source), config)


def with_configs(request: pb.AssignRequest, config: Sequence[str]) -> pb.AssignRequest:
    """``request`` with ``--config KEY=VALUE`` pairs over its configs (a list given replaces
    the request's)."""
    if config:
        patch = parse_json(json.dumps(configs.config_patch(config)), pb.AssignRequest())
        for field, _ in patch.configs.ListFields():
            if field.is_repeated:
                request.configs.ClearField(field.name)
        request.configs.MergeFrom(patch.configs)
    return request


def write_response(response: Response, *, fmt: str, timings: bool, reasons: bool = False) -> None:
    """The response as protobuf JSON, or as a table; timings cleared unless ``timings``."""
    if isinstance(response, cpb.ConsumerAssignResponse):
        from kassign.cli.consumer_table import format_consumer_table
        from kassign.server.consumer import encode as consumer_encode

        mine = response if timings else consumer_encode.without_timings(response)
        text = format_consumer_table(mine) if fmt == "table" else _json(mine)
        if fmt == "table" and reasons and mine.HasField("explanation"):
            from kassign.cli.table_reasons import consumer_reason_lines

            text += "\n" + "\n".join(consumer_reason_lines(mine.explanation)) + "\n"
    else:
        from kassign.cli.table import format_table
        from kassign.server.streams import encode

        shown = response if timings else encode.without_timings(response)
        text = format_table(shown, reasons=reasons) if fmt == "table" else _json(shown)
    sys.stdout.write(text)


def _json(response: Response) -> str:
    return json_format.MessageToJson(response, indent=2) + "\n"
