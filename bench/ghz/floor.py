"""How close to the empty-RPC baseline any Python handler of the 12-task group can get.

The issue's target is the 12-task group at >= 60% of the health check's requests/s. This bench
measures where that ceiling lies for handlers that do less and less than kassign does, each in
the same server (one process, the thread pool ``kassign serve`` uses) under the same load:

- ``canned``: returns a prebuilt answer. What gRPC itself costs for messages of this size.
- ``touch``: reads every field of the request once (hand-written attribute reads, no objects
  made) and builds an answer of the same shape field by field from plain values prepared at
  start-up. No decoding, no model, no assignment: the least any Python implementation of the
  contract must do, since it must read all of its input and write all of its output.
- ``kassign``: the real servicer (``kassign.server.streams.servicer.TaskAssignmentServicer``, no
  metrics, no interceptors, the request parsed by gRPC), in the same server as the two above.
- ``served``: ``kassign serve --workers 1`` itself, as users run it: the body parsed by the
  servicer, metrics and call log, the metrics and admission interceptors, the tuned collector.
  The CPU is the worker's. This is the figure to quote; ``kassign`` isolates the handler.

For each it prints requests/s and the server's CPU time per call for the health check and the
12-task group, and the group's share of the baseline; under each row, the group's system CPU and
voluntary context switches (every thread of the serving process) per call: a served worker
parks the calls waiting for a slot on threads of its own, which these show (issue 24).

    .venv/bin/python bench/ghz/floor.py --seconds 6 --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent import futures
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import TICKS, _start_server, cpu_seconds, cpu_ticks, load_case

if TYPE_CHECKING:
    import grpc
    from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
    from kassign.v1 import assignment_pb2

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "ghz" / "data" / "group_12.json"
MODES = ("canned", "touch", "kassign", "served")
NOW_MS = 1_700_000_000_000
_REPORT_SCALARS = (
    "assignor", "tasks", "clients", "active_tasks_moved", "standby_tasks_moved", "warmups",
    "followup_scheduled", "rack_aware_strategy", "rack_optimisation", "cross_rack_cost_before",
    "cross_rack_cost_after", "solver_fallback", "assign_seconds", "total_seconds", "rack_status",
    "rack_reason",
)  # fmt: skip
"""The report's single fields, in one place for reading and writing; ``notes`` follows them."""
Plain: TypeAlias = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[Any]]
"""An answer as plain Python values: clients, members, report fields (see ``_plain``)."""


def _read_request(request: assignment_pb2.AssignRequest) -> int:
    """Reads each field the contract defines once; returns a count so nothing is optimised away."""
    n = len(request.group_id) + request.now_ms
    for member in request.members:
        n += len(member.member_id) + len(member.group_instance_id)
        sub = member.subscription
        n += len(sub.topics) + sub.generation_id + len(sub.rack_id)
        for tp in sub.owned_partitions:
            n += len(tp.topic) + tp.partition
        info = sub.info
        n += info.version + info.latest_supported_version + len(info.process_id)
        n += len(info.user_end_point) + info.unique_field + info.error_code
        for task in (*info.prev_tasks, *info.standby_tasks):
            n += task.subtopology + task.partition + len(task.named_topology)
        for entry in info.task_offset_sums:
            task = entry.task
            n += task.subtopology + task.partition + len(task.named_topology) + entry.offset_sum
        for tag in info.client_tags:
            n += len(tag.key) + len(tag.value)
    for task_info in request.tasks:
        task = task_info.id
        n += task.subtopology + task.partition + len(task.named_topology) + task_info.stateful
        n += len(task_info.state_store_names) + task_info.changelog_end_offset_sum
        for ttp in task_info.topic_partitions:
            n += (
                len(ttp.topic)
                + ttp.partition
                + ttp.is_source
                + ttp.is_changelog
                + len(ttp.rack_ids)
            )
    c = request.configs
    n += len(c.assignor) + c.acceptable_recovery_lag + c.max_warmup_replicas
    n += c.num_standby_replicas + c.probing_rebalance_interval_ms
    n += len(c.rack_aware_assignment_tags) + c.rack_aware_strategy + c.traffic_cost
    n += c.non_overlap_cost + c.assignment_time_budget_ms
    return n


def _plain(response: assignment_pb2.AssignResponse) -> Plain:
    """The answer's content as plain Python values, what an implementation would hold."""

    def tasks(items: Iterable[assignment_pb2.TaskId]) -> list[tuple[int, int, str]]:
        return [(t.subtopology, t.partition, t.named_topology) for t in items]

    def parts(items: Iterable[assignment_pb2.TopicPartition]) -> list[tuple[str, int]]:
        return [(p.topic, p.partition) for p in items]

    clients = [
        (
            c.process_id,
            tasks(c.active_tasks),
            tasks(c.standby_tasks),
            c.followup_rebalance_deadline_ms,
            c.rack_id,
            list(c.member_ids),
            c.user_end_point,
        )
        for c in response.clients
    ]
    members = [
        (
            m.member_id,
            m.process_id,
            tasks(m.active_tasks),
            tasks(m.standby_tasks),
            parts(m.active_partitions),
            parts(m.standby_partitions),
        )
        for m in response.members
    ]
    r = response.report
    report = [getattr(r, name) for name in _REPORT_SCALARS] + [list(r.notes)]
    return clients, members, report


def _build(pb: ModuleType, plain: Plain) -> assignment_pb2.AssignResponse:
    """An AssignResponse written field by field from ``plain``."""
    clients, members, report = plain
    out: assignment_pb2.AssignResponse = pb.AssignResponse()

    def add_tasks(
        repeated: RepeatedCompositeFieldContainer[assignment_pb2.TaskId],
        items: list[tuple[int, int, str]],
    ) -> None:
        for subtopology, partition, named in items:
            t = repeated.add()
            t.subtopology, t.partition = subtopology, partition
            if named:
                t.named_topology = named

    def add_parts(
        repeated: RepeatedCompositeFieldContainer[assignment_pb2.TopicPartition],
        items: list[tuple[str, int]],
    ) -> None:
        for topic, partition in items:
            p = repeated.add()
            p.topic, p.partition = topic, partition

    for pid, actives, standbys, deadline, rack, member_ids, endpoint in clients:
        c = out.clients.add()
        c.process_id, c.followup_rebalance_deadline_ms = pid, deadline
        c.rack_id, c.user_end_point = rack, endpoint
        add_tasks(c.active_tasks, actives)
        add_tasks(c.standby_tasks, standbys)
        c.member_ids.extend(member_ids)
    for member_id, pid, actives, standbys, active_parts, standby_parts in members:
        m = out.members.add()
        m.member_id, m.process_id = member_id, pid
        add_tasks(m.active_tasks, actives)
        add_tasks(m.standby_tasks, standbys)
        add_parts(m.active_partitions, active_parts)
        add_parts(m.standby_partitions, standby_parts)
    r = out.report
    for name, value in zip(_REPORT_SCALARS, report, strict=False):
        setattr(r, name, value)
    r.notes.extend(report[-1])
    return out


def _serve(mode: str, port_file: Path) -> None:
    """The server process: health plus ``Assign`` answered the ``mode`` way."""
    import grpc
    from google.protobuf import json_format
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc
    from kassign.server.calls import Serializable, Unary, add_unary_service
    from kassign.server.runtime.app import ServerConfig, channel_options
    from kassign.server.streams.service import SERVICE_NAME
    from kassign.server.streams.servicer import TaskAssignmentServicer, assign_request
    from kassign.v1 import assignment_pb2 as pb

    request = json_format.Parse(DATA.read_text(), pb.AssignRequest())
    answer = assign_request(request, clock_ms=lambda: NOW_MS).response
    plain = _plain(answer)
    real = TaskAssignmentServicer()
    if _build(pb, plain) != answer:
        raise SystemExit("floor: the touch answer differs from kassign's")

    class Floor:
        def Assign(
            self, req: assignment_pb2.AssignRequest, context: grpc.ServicerContext
        ) -> Serializable:
            if mode == "canned":
                return answer
            if mode == "touch":
                _read_request(req)
                return _build(pb, plain)
            return real.Assign(req, context)

    config = ServerConfig()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.max_workers),
        options=channel_options(config.max_message_bytes),
    )
    # registered as the server registers it (``calls.py``): the real answer is a WireResponse
    method = Unary(Floor().Assign, pb.AssignRequest, pb.AssignResponse)
    add_unary_service(server, SERVICE_NAME, {"Assign": method}, on_error=lambda _c, _e: None)
    checks = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    checks.set("", health_pb2.HealthCheckResponse.SERVING)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    port_file.write_text(str(port))
    server.wait_for_termination()


def switching(pids: list[int]) -> tuple[float, int]:
    """System CPU seconds and voluntary context switches (every thread) of ``pids`` so far."""
    system, switches = 0.0, 0
    for pid in pids:
        system += cpu_ticks(pid)[1] / TICKS
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                for line in (task / "status").read_text().splitlines():
                    if line.startswith("voluntary_ctxt_switches:"):
                        switches += int(line.split()[1])
    return system, switches


def measure(
    mode: str, args: argparse.Namespace, tmp: Path
) -> dict[str, tuple[float, float, float, float]]:
    """Median requests/s, and per call the mean server CPU ms, system CPU ms and voluntary
    context switches, for "health" and "group_12"."""
    if mode == "served":
        proc, target, pids, _metrics = _start_server(1, tmp, args.serve_option)
    else:
        proc, target = _start_floor(mode, tmp)
        pids = [proc.pid]
    try:
        rps: dict[str, list[float]] = {"health": [], "group_12": []}
        cpu: dict[str, list[float]] = {"health": [], "group_12": []}
        calls: dict[str, int] = {"health": 0, "group_12": 0}
        system: dict[str, float] = {"health": 0.0, "group_12": 0.0}
        switches: dict[str, int] = {"health": 0, "group_12": 0}
        cases = ("health", "group_12")
        for case in cases:
            load_case(target, case, args.warmup, args)
        for _ in range(args.repeats):
            for case in cases:
                before, (system_before, switches_before) = cpu_seconds(pids), switching(pids)
                report = load_case(target, case, args.seconds, args)
                cpu[case].append(cpu_seconds(pids) - before)
                system_after, switches_after = switching(pids)
                system[case] += system_after - system_before
                switches[case] += switches_after - switches_before
                rps[case].append(float(report["rps"]))
                calls[case] += int(report["count"])
        return {
            case: (
                statistics.median(rps[case]),
                1000 * sum(cpu[case]) / calls[case],
                1000 * system[case] / calls[case],
                switches[case] / calls[case],
            )
            for case in cases
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _start_floor(mode: str, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """This script's own server answering the ``mode`` way, and its address."""
    port_file = tmp / f"port-{mode}"
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", mode, "--port-file", str(port_file)], cwd=ROOT
    )
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"floor server ({mode}) did not start")
        time.sleep(0.1)
    return proc, f"127.0.0.1:{port_file.read_text()}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--seconds", type=float, default=6.0, help="per measured run")
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--processes", type=int, default=2, help="generator processes")
    p.add_argument(
        "--serve-option",
        action="append",
        default=[],
        help="an option added to the served mode's kassign serve, such as --malloc-tuning"
        " (repeatable; default: none)",
    )
    p.add_argument("--serve", choices=MODES[:3], help=argparse.SUPPRESS)
    p.add_argument("--port-file", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        _serve(args.serve, args.port_file)
        return 0
    print(
        "mode     health req/s  ms/call   group_12 req/s  ms/call   group_12 / health"
        "   CPU / touch's"
    )
    touch_ms = None
    with tempfile.TemporaryDirectory(prefix="kassign-floor-") as tmp:
        for mode in args.modes:
            figures = measure(mode, args, Path(tmp))
            (h_rps, h_ms, _, _), (g_rps, g_ms, g_system, g_switches) = (
                figures["health"],
                figures["group_12"],
            )
            touch_ms = g_ms if mode == "touch" else touch_ms
            versus = f"{g_ms / touch_ms:14.2f}x" if touch_ms else ""
            print(
                f"{mode:8} {h_rps:12.1f} {h_ms:8.3f} {g_rps:16.1f} {g_ms:8.3f} "
                f"{100 * g_rps / h_rps:14.1f}%{versus}",
                flush=True,
            )
            print(
                f"         group_12 per call: system CPU {g_system:.3f} ms,"
                f" {g_switches:.1f} voluntary context switches",
                flush=True,
            )
    print(
        f"load: {args.concurrency} in flight over {args.connections} connections from "
        f"{args.processes} generator process(es), {args.seconds:g} s x {args.repeats}; one "
        f"serving process; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
