"""``kassign health --target HOST:PORT``: ask a server's gRPC health service, exit 0 if SERVING.

The Docker HEALTHCHECK runs it; so can any supervisor. It uses the standard
``grpc.health.v1.Health/Check``, so it says what every gRPC health prober would.
"""

from __future__ import annotations

import argparse
import sys

import grpc
from kassign.server.runtime import failures, tls

__all__ = ["add_parser", "check"]

EXIT_SERVING, EXIT_NOT_SERVING, EXIT_USAGE = 0, 1, 2


def check(
    target: str,
    *,
    service: str = "",
    timeout: float = 3.0,
    credentials: grpc.ChannelCredentials | None = None,
) -> str:
    """The serving status name the server reports for ``service`` ("" = the whole server)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    channel = (
        grpc.insecure_channel(target)
        if credentials is None
        else grpc.secure_channel(target, credentials)
    )
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        # types-grpcio-health-checking declares HealthStub without the methods it gets in __init__.
        response: health_pb2.HealthCheckResponse = stub.Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(service=service), timeout=timeout
        )
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def _run(args: argparse.Namespace) -> int:
    try:
        credentials = tls.client_tls(args)
    except tls.TlsError as exc:
        print(f"kassign health: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        status = check(
            args.target, service=args.service, timeout=args.timeout, credentials=credentials
        )
    except grpc.RpcError as exc:
        code, details = exc.code(), exc.details() or ""
        said = failures.describe(code, details, target=args.target, secure=credentials is not None)
        print(f"kassign health: {args.target}: {said}", file=sys.stderr)
        return EXIT_NOT_SERVING
    print(f"{args.target}: {status}")
    return EXIT_SERVING if status == "SERVING" else EXIT_NOT_SERVING


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "health", help="check a running server's gRPC health (exit 0: serving)"
    )
    p.add_argument(
        "--target",
        type=failures.target,
        default=f"127.0.0.1:{failures.DEFAULT_TARGET_PORT}",
        help="HOST:PORT (default: %(default)s)",
    )
    p.add_argument("--service", default="", help="service name; empty: the whole server")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds")
    tls.add_client_arguments(p)
    p.set_defaults(func=_run)
