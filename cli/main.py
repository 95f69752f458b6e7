"""The ``kassign`` command line: ``serve``, ``assign``, ``call``, and subcommands of other modules.

``assign`` and ``call`` take ``--kind streams`` (the default: an ``AssignRequest`` for
``TaskAssignmentService``) or ``--kind consumer`` (a ``ConsumerAssignRequest`` for
``ConsumerAssignmentService``), both in protobuf's JSON mapping, and print the response the same
way, or as a table.

Extending it: a module with ``add_parser(subparsers) -> None`` that creates its subparser and sets
``func`` (``parser.set_defaults(func=run)``, ``run(args) -> int``) is listed in
``COMMAND_MODULES``; ``main`` imports each and lets it add itself.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from google.protobuf import json_format
from kassign.assignor.errors import InvalidRequest
from kassign.cli import configs, limit_options
from kassign.server import limits
from kassign.server.runtime import app, failures, tls
from kassign.server.runtime.cores import usable_cores
from kassign.server.runtime.heartbeat import DEFAULT_TIMEOUT_SECONDS
from kassign.server.status import to_status
from kassign.server.version import version
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "COMMAND_MODULES",
    "KINDS",
    "build_parser",
    "main",
    "read_consumer_request",
    "read_request",
    "write_response",
]

COMMAND_MODULES: tuple[str, ...] = (
    "kassign.server.runtime.probe",
    "kassign.cli.spark_jobs",
    "kassign.cli.explain",
)
"""Modules that add subcommands (``add_parser(subparsers)``), in help order after the built-ins."""

EXIT_OK, EXIT_INVALID, EXIT_FAILED = 0, 2, 1
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


def _read(source: str, kind: str, config: Sequence[str] = ()) -> Request:
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


def _explain_if_asked(request: Request, args: argparse.Namespace) -> None:
    """``-v`` asks for the explanation; a Streams table always does, for its moves split."""
    wanted = args.explain or args.verbose or (args.format == "table" and args.kind != "consumer")
    if wanted and hasattr(request, "explain"):
        request.explain = True


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


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "request",
        metavar="FILE|-",
        help="AssignRequest (--kind consumer: ConsumerAssignRequest) as protobuf JSON",
    )
    parser.add_argument(
        "--kind",
        choices=KINDS,
        default="streams",
        help="streams: Kafka Streams task assignment (default); consumer: a plain consumer group",
    )
    configs.add_config_option(parser)
    parser.add_argument("--format", choices=("json", "table"), default="json")
    parser.add_argument(
        "-v",
        "--verbose",
        dest="explain",
        action="store_true",
        help="explain the answer: each task's previous owners, lags and the rule that placed it",
    )
    parser.add_argument(
        "--no-timings",
        dest="timings",
        action="store_false",
        help="leave out the report's timing fields (output then depends on the request only)",
    )


def _non_negative(text: str) -> int:
    """An argparse type: an integer, 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _add_serve(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every option's help ends with its default (tests/cli/test_serve_help.py checks)."""
    p = subparsers.add_parser("serve", help="serve the gRPC API until SIGTERM/SIGINT")
    p.add_argument(
        "--host", default="[::]", help="gRPC address to bind (default: %(default)s, every address)"
    )
    p.add_argument(
        "--port",
        type=int,
        default=app.DEFAULT_PORT,
        help="gRPC port; 0 picks a free one (default: %(default)s)",
    )
    p.add_argument(
        "--port-file", type=Path, help="write the bound port here once serving (default: none)"
    )
    p.add_argument(
        "--grace",
        type=float,
        default=10.0,
        help="seconds in-flight calls get on shutdown (default: %(default)s)",
    )
    p.add_argument(
        "--max-message-mb",
        type=int,
        default=app.DEFAULT_MAX_MESSAGE_BYTES >> 20,
        help="largest request or answer, MiB; a request whose answer would be larger is refused"
        " before it is computed (default: %(default)s)",
    )
    p.add_argument(
        "--max-workers",
        type=int,
        default=4,
        help="threads per worker process: calls computed at once (default: %(default)s)",
    )
    p.add_argument(
        "--max-queue",
        type=_non_negative,
        default=app.DEFAULT_MAX_QUEUE,
        help="assignment calls per worker process waiting for a thread; past it a call is"
        " refused RESOURCE_EXHAUSTED at once and health reports NOT_SERVING (default:"
        " %(default)s)",
    )
    p.add_argument(
        "--assignment-time-budget-ms",
        type=int,
        default=5_000,
        help="solver budget for requests that set none, 0: none (default: %(default)s)",
    )
    p.add_argument(
        "--journal", type=Path, metavar="DIR", help="record every request under DIR (default: off)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=usable_cores(),
        help="server processes sharing the port (default: the cores this process may use,"
        " its CPU affinity capped by its cgroup's CPU quota: %(default)s here)",
    )
    p.add_argument(
        "--join",
        action="store_true",
        help="share the port with a kassign serve already serving it (SO_REUSEPORT; default:"
        " refuse a port in use)",
    )
    p.add_argument(
        "--no-reflection",
        dest="reflection",
        action="store_false",
        help="do not serve gRPC server reflection (default: served, for grpcurl and ghz)",
    )
    p.add_argument(
        "--max-connection-age-s",
        type=float,
        default=0.0,
        help="close each client connection after this many seconds (GOAWAY; clients reconnect,"
        " so load spreads over the pods behind a Service), 0: never (default: %(default)s)",
    )
    p.add_argument(
        "--max-connection-age-grace-s",
        type=float,
        help="seconds the calls on an aged connection get to finish (default: --grace's value)",
    )
    p.add_argument(
        "--worker-timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="a worker that answers no probe of its own for this long is killed and replaced;"
        " 0: never (default: %(default)s)",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=9464,
        help="Prometheus /metrics port, 0: any, -1: off (default: %(default)s)",
    )
    p.add_argument(
        "--metrics-host",
        help="address the metrics endpoint binds (default: --host's; its [::] as 0.0.0.0,"
        " every IPv4 address)",
    )
    tls.add_server_arguments(p)
    limit_options.add_limit_options(p)
    p.set_defaults(func=_run_serve)


def _connection_age_options(args: argparse.Namespace) -> tuple[tuple[str, int], ...]:
    """gRPC core's server-side max_connection_age: a GOAWAY after the age (jittered by ±10%),
    then the grace for calls in flight on it. Off (no options) at 0."""
    if args.max_connection_age_s <= 0:
        return ()
    grace = (
        args.grace if args.max_connection_age_grace_s is None else args.max_connection_age_grace_s
    )
    return (
        ("grpc.max_connection_age_ms", round(args.max_connection_age_s * 1000)),
        ("grpc.max_connection_age_grace_ms", round(grace * 1000)),
    )


def _serve_config(args: argparse.Namespace) -> app.ServerConfig:
    return app.ServerConfig(
        host=args.host,
        port=args.port,
        port_file=args.port_file,
        grace_seconds=args.grace,
        max_message_bytes=args.max_message_mb << 20,
        max_workers=args.max_workers,
        max_queue=args.max_queue,
        default_budget_ms=args.assignment_time_budget_ms or None,
        journal_dir=args.journal,
        tls=tls.server_tls(args),
        reflection=args.reflection,
        extra_options=_connection_age_options(args),
        limits=limit_options.request_limits(args),
    )


def _run_serve(args: argparse.Namespace) -> int:
    from kassign.server.runtime.workers import serve_workers

    return serve_workers(
        _serve_config(args),
        workers=args.workers,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        join=args.join,
        worker_timeout=args.worker_timeout,
    )


def _add_assign(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("assign", help="compute an assignment locally")
    _add_output_options(p)
    p.add_argument("--assignment-time-budget-ms", type=int, default=5_000)
    limit_options.add_limit_options(p)
    p.set_defaults(func=_run_assign)


def _assign_locally(
    request: Request, budget_ms: int | None, request_limits: limits.RequestLimits
) -> Response:
    if isinstance(request, cpb.ConsumerAssignRequest):
        from kassign.server.consumer.servicer import assign_consumer_request

        return assign_consumer_request(request, limits=request_limits).response
    from kassign.server.streams.servicer import assign_request

    return assign_request(request, default_budget_ms=budget_ms, limits=request_limits).response


def _run_assign(args: argparse.Namespace) -> int:
    request = _read(args.request, args.kind, args.config)
    _explain_if_asked(request, args)
    try:
        response = _assign_locally(
            request, args.assignment_time_budget_ms or None, limit_options.local_limits(args)
        )
    except limits.LimitExceeded as exc:
        print(f"kassign: invalid request: {limit_options.local_refusal(exc)}", file=sys.stderr)
        return EXIT_INVALID
    except InvalidRequest as exc:
        print(f"kassign: invalid request: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - the same edge as the service: a status, no traceback
        mapped = to_status(exc)
        print(f"kassign: {mapped.code.name}: {mapped.message}", file=sys.stderr)
        return EXIT_FAILED
    write_response(
        response, fmt=args.format, timings=args.timings, reasons=args.explain or args.verbose
    )
    return EXIT_OK


def _add_call(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("call", help="ask a running kassign service")
    _add_output_options(p)
    p.add_argument(
        "--target",
        type=failures.target,
        default=f"localhost:{app.DEFAULT_PORT}",
        help="HOST:PORT (default: %(default)s)",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds")
    p.add_argument(
        "--max-message-mb",
        type=int,
        default=app.DEFAULT_MAX_MESSAGE_BYTES >> 20,
        help="largest request or answer this client sends or takes, MiB (default: %(default)s)",
    )
    tls.add_client_arguments(p)
    p.set_defaults(func=_run_call)


def _run_call(args: argparse.Namespace) -> int:
    from kassign_client import KassignCallError, KassignClient, KassignInvalidRequest

    request = _read(args.request, args.kind, args.config)
    _explain_if_asked(request, args)
    credentials = tls.client_tls(args)
    response: Response
    try:
        with KassignClient(
            args.target, credentials=credentials, max_message_bytes=args.max_message_mb << 20
        ) as client:
            if isinstance(request, cpb.ConsumerAssignRequest):
                response = client.consumer_assign(request, timeout=args.timeout)
            else:
                response = client.assign(request, timeout=args.timeout)
    except KassignInvalidRequest as exc:
        print(f"kassign: invalid request: {exc.details}", file=sys.stderr)
        return EXIT_INVALID
    except KassignCallError as exc:
        said = failures.describe(
            exc.code, exc.details, target=args.target, secure=credentials is not None
        )
        print(f"kassign: call failed: {said}", file=sys.stderr)
        return EXIT_FAILED
    write_response(
        response, fmt=args.format, timings=args.timings, reasons=args.explain or args.verbose
    )
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kassign",
        description="Kafka Streams task and consumer group partition assignment as a service.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--version", action="version", version=f"kassign {version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_serve, _add_assign, _add_call):
        add(subparsers)
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        if hasattr(module, "add_parser"):
            module.add_parser(subparsers)
    return parser


_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _record_only_what_is_logged() -> None:
    """Log records without the caller's frame, thread and process, which ``_LOG_FORMAT`` never
    shows: the logging HOWTO's "Optimization" switches. ``serve`` logs a line per call, and
    finding the caller and naming the thread and process took 21 of its 74 Python calls."""
    logging._srcfile = None  # the HOWTO's own spelling: findCaller is skipped
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format=_LOG_FORMAT,
        stream=sys.stderr,
    )
    _record_only_what_is_logged()
    try:
        code: int = args.func(args)
    except (OSError, json_format.ParseError, tls.TlsError) as exc:
        print(f"kassign: {exc}", file=sys.stderr)
        return EXIT_FAILED if isinstance(exc, OSError) else EXIT_INVALID
    return code
