"""A bounded gRPC load generator for kassign, for where ghz is not installed.

Sends one request body (a ghz data file: AssignRequest JSON) or the health ``Check`` (the
empty-RPC baseline) from ``--concurrency`` callers over ``--connections`` separate HTTP/2
connections, until ``--count`` calls are done or ``--duration`` seconds have passed, and prints a
summary shaped like ``ghz -O json`` (durations in nanoseconds). ``--processes`` splits the load
over that many generator processes: on a small machine one Python process cannot keep a server
busy, and the generator's own CPU use is part of what it measures.

    .venv/bin/python bench/load.py --target 127.0.0.1:50051 --data bench/ghz/data/group_12.json \
        --count 2000 --concurrency 8 --connections 4 --processes 2
    .venv/bin/python bench/load.py --target 127.0.0.1:50051 --health --duration 10

Requests are serialised once and responses are not parsed (the generator asks for raw bytes),
so the client spends its CPU on gRPC itself, not on protobuf.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Load", "Sample", "main", "run", "summarise"]

ASSIGN_METHOD = "/kassign.v1.TaskAssignmentService/Assign"
HEALTH_METHOD = "/grpc.health.v1.Health/Check"
PERCENTILES = (10, 25, 50, 75, 90, 95, 99)
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    """What one generator process sends. ``count`` 0 means "until ``duration`` has passed"."""

    target: str
    method: str
    body: bytes
    count: int = 0
    duration: float = 0.0
    concurrency: int = 1
    connections: int = 1
    timeout: float = 60.0
    start_at: float = 0.0  # wall-clock time.time() at which to begin (lines processes up)


@dataclass(slots=True)
class Sample:
    """What one generator process saw: per-call latencies (ns) and status codes."""

    latencies_ns: list[int] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    started: float = 0.0
    finished: float = 0.0
    cpu_seconds: float = 0.0  # the generator's own CPU time while it was sending


def request_body(*, data: Path | None, health: bool) -> tuple[str, bytes]:
    """The method to call and its serialised request."""
    if health:
        from grpc_health.v1 import health_pb2

        return HEALTH_METHOD, health_pb2.HealthCheckRequest().SerializeToString()
    if data is None:
        raise SystemExit("load.py: give --data FILE or --health")
    from google.protobuf import json_format
    from kassign.v1 import assignment_pb2 as pb

    request = json_format.Parse(data.read_text(), pb.AssignRequest())
    return ASSIGN_METHOD, request.SerializeToString()


async def _drive(load: Load) -> Sample:
    import grpc

    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.use_local_subchannel_pool", 1),  # one TCP connection per channel, as ghz does
    ]
    channels = [
        grpc.aio.insecure_channel(load.target, options=options) for _ in range(load.connections)
    ]
    sample = Sample()
    try:
        await asyncio.gather(*(c.channel_ready() for c in channels))
        calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
            c.unary_unary(load.method)
            for c in channels  # raw bytes in and out
        ]
        delay = load.start_at - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        sample.started = time.perf_counter()
        cpu_start = time.process_time()
        deadline = sample.started + load.duration if load.duration else math.inf
        budget = [load.count if load.count else -1]

        async def caller(index: int) -> None:
            call = calls[index % len(calls)]
            while budget[0] != 0 and time.perf_counter() < deadline:
                budget[0] -= 1
                begin = time.perf_counter_ns()
                try:
                    await call(load.body, timeout=load.timeout)
                    code = "OK"
                except grpc.aio.AioRpcError as exc:
                    code = _ghz_code(exc.code())
                    sample.errors[f"rpc error: code = {code} desc = {exc.details()}"] += 1
                sample.latencies_ns.append(time.perf_counter_ns() - begin)
                sample.codes[code] += 1

        await asyncio.gather(*(caller(i) for i in range(load.concurrency)))
        sample.finished = time.perf_counter()
        sample.cpu_seconds = time.process_time() - cpu_start
    finally:
        await asyncio.gather(*(c.close() for c in channels))
    return sample


def _ghz_code(code: object) -> str:
    """ghz prints Go's code names (``DeadlineExceeded``); Python has ``DEADLINE_EXCEEDED``."""
    name = getattr(code, "name", str(code))
    return "".join(part.capitalize() for part in name.split("_")).replace("Ok", "OK")


def _worker(load: Load, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    sample = asyncio.run(_drive(load))
    results.put(
        (
            sample.latencies_ns,
            dict(sample.codes),
            dict(sample.errors),
            sample.finished - sample.started,
            sample.cpu_seconds,
        )
    )


def _share(total: int, parts: int, index: int) -> int:
    return total // parts + (1 if index < total % parts else 0)


def run(load: Load, *, processes: int = 1) -> tuple[Sample, float]:
    """Run ``load`` split over ``processes``; returns the merged sample and the wall time (s)."""
    if processes <= 1:
        sample = asyncio.run(_drive(load))
        return sample, sample.finished - sample.started
    if load.count and load.count < processes or load.concurrency < processes:
        raise SystemExit("load.py: count and concurrency must be at least --processes")
    ctx = multiprocessing.get_context("spawn")  # no gRPC state crosses a fork
    results = ctx.Queue()
    start_at = time.time() + 2.0 + 0.5 * processes
    workers = []
    for i in range(processes):
        share = Load(
            target=load.target,
            method=load.method,
            body=load.body,
            count=_share(load.count, processes, i),
            duration=load.duration,
            concurrency=_share(load.concurrency, processes, i),
            connections=max(1, _share(load.connections, processes, i)),
            timeout=load.timeout,
            start_at=start_at,
        )
        workers.append(ctx.Process(target=_worker, args=(share, results), daemon=True))
    for w in workers:
        w.start()
    merged, wall = Sample(), 0.0
    for _ in workers:
        latencies, codes, errors, seconds, cpu = results.get(timeout=load.duration + 600)
        merged.cpu_seconds += cpu
        merged.latencies_ns.extend(latencies)
        merged.codes.update(codes)
        merged.errors.update(errors)
        wall = max(wall, seconds)
    for w in workers:
        w.join()
    return merged, wall


def _percentile(ordered: Sequence[int], pct: int) -> int:
    """Nearest-rank percentile of sorted latencies."""
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def summarise(sample: Sample, wall_seconds: float, options: dict[str, object]) -> dict[str, object]:
    """The ghz ``-O json`` report's summary fields, durations in nanoseconds."""
    ordered = sorted(sample.latencies_ns)
    count = len(ordered)
    return {
        "options": options,
        "count": count,
        "total": int(wall_seconds * 1e9),
        "average": int(sum(ordered) / count) if count else 0,
        "fastest": ordered[0] if count else 0,
        "slowest": ordered[-1] if count else 0,
        "rps": count / wall_seconds if wall_seconds > 0 else 0.0,
        "latencyDistribution": [
            {"percentage": p, "latency": _percentile(ordered, p) if count else 0}
            for p in PERCENTILES
        ],
        "statusCodeDistribution": dict(sorted(sample.codes.items())),
        "errorDistribution": dict(sorted(sample.errors.items())),
        "clientCpuSeconds": sample.cpu_seconds,  # not in ghz: the generator's own CPU use
    }


def _summary_text(report: dict[str, Any]) -> str:
    def ms(ns: float) -> str:
        return f"{ns / 1e6:.2f} ms"

    lines = [
        "Summary:",
        f"  Count:        {report['count']}",
        f"  Total:        {ms(report['total'])}",
        f"  Slowest:      {ms(report['slowest'])}",
        f"  Fastest:      {ms(report['fastest'])}",
        f"  Average:      {ms(report['average'])}",
        f"  Requests/sec: {report['rps']:.2f}",
        "Latency distribution:",
        *(f"  {d['percentage']} % in {ms(d['latency'])}" for d in report["latencyDistribution"]),
        "Status code distribution:",
        *(f"  [{c}]   {n} responses" for c, n in report["statusCodeDistribution"].items()),
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Bounded gRPC load for kassign, ghz-shaped output.")
    p.add_argument("--target", default="127.0.0.1:50051", help="host:port")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--data", type=Path, help="AssignRequest JSON (a ghz -D data file)")
    what.add_argument("--health", action="store_true", help="grpc.health.v1 Check: the baseline")
    bound = p.add_mutually_exclusive_group(required=True)
    bound.add_argument("-n", "--count", type=int, help="number of calls")
    bound.add_argument("-z", "--duration", type=float, help="seconds to send for")
    p.add_argument("-c", "--concurrency", type=int, default=8, help="calls in flight")
    p.add_argument("--connections", type=int, default=2, help="HTTP/2 connections")
    p.add_argument("--processes", type=int, default=1, help="generator processes")
    p.add_argument("-t", "--timeout", type=float, default=60.0, help="per-call deadline (s)")
    p.add_argument("-O", "--format", choices=("json", "pretty", "summary"), default="json")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if min(args.concurrency, args.connections, args.processes) < 1 or (args.count or 1) < 1:
        raise SystemExit("load.py: counts must be positive")
    method, body = request_body(data=args.data, health=args.health)
    load = Load(
        target=args.target,
        method=method,
        body=body,
        count=args.count or 0,
        duration=args.duration or 0.0,
        concurrency=args.concurrency,
        connections=args.connections,
        timeout=args.timeout,
    )
    sample, wall = run(load, processes=args.processes)
    options = {
        "call": method.strip("/").replace("/", "."),
        "host": args.target,
        "data-file": str(args.data) if args.data else None,
        "total": args.count,
        "duration": args.duration,
        "concurrency": args.concurrency,
        "connections": args.connections,
        "processes": args.processes,
    }
    report = summarise(sample, wall, options)
    if args.format == "summary":
        print(_summary_text(report))
    else:
        print(json.dumps(report, indent=2 if args.format == "pretty" else None))
    return 0 if set(sample.codes) <= {"OK"} else 1


if __name__ == "__main__":
    sys.exit(main())
