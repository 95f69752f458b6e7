"""The ``kassign`` command line: ``serve``, ``assign``, ``call``, and subcommands of other modules.

``serve``'s options are ``serve.py``'s, reading requests and writing answers ``messages.py``'s.
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
import logging
import sys
from collections.abc import Sequence

from google.protobuf import json_format
from kassign.assignor.errors import InvalidRequest
from kassign.cli import configs, limit_options, serve
from kassign.cli.messages import (
    KINDS,
    Request,
    Response,
    parse_json,
    read_consumer_request,
    read_kind,
    read_request,
    with_configs,
    write_response,
)
from kassign.server import limits
from kassign.server.runtime import app, failures, tls
from kassign.server.status import to_status
from kassign.server.version import version
from kassign.v1 import consumer_pb2 as cpb

__all__ = [  # the request helpers are ``messages.py``'s, named here too for older imports
    "COMMAND_MODULES",
    "KINDS",
    "build_parser",
    "main",
    "parse_json",
    "read_consumer_request",
    "read_request",
    "with_configs",
    "write_response",
]

COMMAND_MODULES: tuple[str, ...] = (
    "kassign.server.runtime.probe",
    "kassign.cli.spark_jobs",
    "kassign.cli.explain",
    "kassign.cli.next_round",
    "kassign.cli.shadow_report",
)
"""Modules that add subcommands (``add_parser(subparsers)``), in help order after the built-ins."""

EXIT_OK, EXIT_INVALID, EXIT_FAILED = 0, 2, 1


def _explain_if_asked(request: Request, args: argparse.Namespace) -> None:
    """``-v`` asks for the explanation; a Streams table always does, for its moves split."""
    wanted = args.explain or args.verbose or (args.format == "table" and args.kind != "consumer")
    if wanted and hasattr(request, "explain"):
        request.explain = True


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
    request = read_kind(args.request, args.kind, args.config)
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

    request = read_kind(args.request, args.kind, args.config)
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
    for add in (serve.add_parser, _add_assign, _add_call):
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
