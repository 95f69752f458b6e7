"""``kassign serve``: its options, and the ``ServerConfig`` they make.

Why apart from ``main.py``: serve has more options than every other subcommand together (limits,
TLS, workers, the journal), and none of them is shared; ``serve_config`` is what tests build
servers from, so what they check is what the command line asks for.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from kassign.cli import limit_options
from kassign.server.loads.prometheus import DEFAULT_QUERY
from kassign.server.loads.source import DEFAULT_TIMEOUT_S, DEFAULT_TTL_S, LoadSourceConfig
from kassign.server.observe.journal_retention import Retention
from kassign.server.runtime import app, tls
from kassign.server.runtime.cores import usable_cores
from kassign.server.runtime.heartbeat import DEFAULT_TIMEOUT_SECONDS

__all__ = ["add_parser", "journal_retention", "serve_config"]


def _non_negative(text: str) -> int:
    """An argparse type: an integer, 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _retention(text: str) -> float:
    """An argparse type: a positive number, or -1 for no bound (Kafka's spelling)."""
    value = float(text)
    if value <= 0 and value != -1:
        raise argparse.ArgumentTypeError(f"must be positive, or -1 for no bound, not {text}")
    return value


def _positive(text: str) -> float:
    """An argparse type: a positive number of seconds."""
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def _load_source(text: str) -> str:
    """An argparse type: ``prometheus://HOST:PORT``, refused at start-up otherwise."""
    try:
        LoadSourceConfig(source=text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def load_source(args: argparse.Namespace) -> LoadSourceConfig | None:
    """``--load-source`` and its companions as the servers' ``LoadSourceConfig`` (None: none)."""
    if args.load_source is None:
        return None
    return LoadSourceConfig(
        source=args.load_source,
        query=args.load_query,
        timeout_s=args.load_timeout_s,
        ttl_s=args.load_ttl_s,
    )


def journal_retention(args: argparse.Namespace) -> Retention:
    """``--journal-retention-hours`` and ``-mb`` as the journal's ``Retention``."""
    hours, mib = args.journal_retention_hours, args.journal_retention_mb
    return Retention(
        max_age_ms=None if hours == -1 else round(hours * 3600 * 1000),
        max_bytes=None if mib == -1 else round(mib * (1 << 20)),
    )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``. Every option's help ends with its default (tests/cli/test_serve_help.py checks)."""
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
        "--journal-retention-hours",
        type=_retention,
        default=168.0,
        metavar="HOURS",
        help="delete journal files (every worker's, this run's and earlier runs') last written"
        " longer ago, as Kafka's log.retention.hours; -1: keep (default: %(default)s, 7 days)",
    )
    p.add_argument(
        "--journal-retention-mb",
        type=_retention,
        default=-1.0,
        metavar="MiB",
        help="delete the oldest journal files while the folder holds more, as Kafka's"
        " log.retention.bytes (DIR and DIR/consumer each); -1: no bound (default: %(default)s;"
        " each worker keeps at most 8 files of 64 MiB)",
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
        "--malloc-tuning",
        action="store_true",
        help="raise glibc malloc's mmap and trim thresholds in the workers and give their free"
        " heap back once idle (docs/operations.md; default: off, glibc's own thresholds)",
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
    _add_load_source_arguments(p)
    tls.add_server_arguments(p)
    limit_options.add_limit_options(p)
    p.set_defaults(func=_run_serve)


def _add_load_source_arguments(p: argparse.ArgumentParser) -> None:
    """Issue 25: partition loads for balance LOAD requests that carry none."""
    p.add_argument(
        "--load-source",
        type=_load_source,
        metavar="prometheus://HOST:PORT",
        help="read partition loads for balance LOAD requests that send none (consumer and Streams)"
        " from this Prometheus (docs/load-aware.md); a failed read balances by count and"
        " says so (default: none, such requests balance by count)",
    )
    p.add_argument(
        "--load-query",
        default=DEFAULT_QUERY,
        metavar="PROMQL",
        help="instant query whose series carry topic and partition labels, one load each"
        " (default: %(default)s)",
    )
    p.add_argument(
        "--load-timeout-s",
        type=_positive,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="longest wait for the load source, further bounded by half the call's time left"
        " (default: %(default)s)",
    )
    p.add_argument(
        "--load-ttl-s",
        type=_seconds,
        default=DEFAULT_TTL_S,
        metavar="SECONDS",
        help="how long each worker reuses a reading (a failed one: 5 s) (default: %(default)s)",
    )


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


def serve_config(args: argparse.Namespace) -> app.ServerConfig:
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
        journal_retention=journal_retention(args),
        tls=tls.server_tls(args),
        reflection=args.reflection,
        extra_options=_connection_age_options(args),
        limits=limit_options.request_limits(args),
        load_source=load_source(args),
        malloc_tuning=args.malloc_tuning,
    )


def _run_serve(args: argparse.Namespace) -> int:
    from kassign.server.runtime.workers import serve_workers

    return serve_workers(
        serve_config(args),
        workers=args.workers,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        join=args.join,
        worker_timeout=args.worker_timeout,
    )
