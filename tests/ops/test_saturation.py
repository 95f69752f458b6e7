"""A worker saturated with heavy calls, as a caller and an operator see it (issue 16).

Before: four valid heavy requests filled a worker's threads; for 50 s every small call and
every health check on it timed out, and the heavy calls went on computing long after their
callers gave up. Now (``kassign.server.runtime.admission``, ``kassign.assignor.interrupt``) one
``kassign serve`` worker with 3 slots and a queue of 1:

1. two heavy calls compute, the second a KIP-925 ``min_traffic`` one (``rack_heavy_request``:
   its rack steps and solves, then its standby placement; its deadline ``RACK_DEADLINE``, the
   last); ``HEAVY_TASKS`` says how far past their deadlines their work runs;
   small calls take the third slot and are answered well within their 2 s deadlines;
2. a third heavy call takes the last slot, a fourth waits in line, and the worker is saturated:
   health says NOT_SERVING for the server (readiness) and SERVING for ``kassign.workers``
   (liveness), the queue depth is 1, and a burst of ``SHED`` more heavy calls is shed with
   RESOURCE_EXHAUSTED at once, each within a second (issue 27 saw 2.4 s when solves held the
   GIL in the worker);
3. every heavy call ends DEADLINE_EXCEEDED, and the worker's CPU time after the last deadline
   stays near zero: the work stopped inside standby placement and the rack steps instead of
   running on (issue 27: a rack-aware call ran seconds past its deadline, with no check in its
   rack steps); the solver helper may finish the one solve it was in, unread (printed);
4. throughout, every health check is answered within its 2 s deadline.

The heavy request is tests/ops/serving.py's ``heavy_request``: 3,000 tasks over 100 clients with
100 standby replicas. About 15 s, most of it the server starting and the deadlines.

Then (issue 24) a worker in the middle of KIP-925 ``min_traffic`` solves still answers health
within ``SOLVE_HEALTH_LIMIT``: OR-Tools' ``SimpleMinCostFlow.solve`` holds the GIL for its whole
run, so before the solves ran in a helper process (``kassign.server.runtime.solver``) every
check asked during one waited for it (about 1.4 s per solve of ``rack_heavy_request``).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.server.runtime.slots import WORKERS_SERVICE
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import DATA, Served, heavy_request, kassign_serve, rack_heavy_request

pytestmark = pytest.mark.slow

SERVE_ARGS = ("--max-workers", "3", "--max-queue", "1")
HEAVY_DEADLINE = 4.0
RACK_DEADLINE = 6.0
"""The rack-aware heavy call's, the last of the saturation: its solver budget is half of it
(``calls.BUDGET_SHARE``), 3 s, enough for its two active solves (0.9M arcs in all, 2.7 s by the
budget's estimate: a shorter deadline would skip them). Its group, 12,000 tasks over 150
clients, has those solves' arcs (``tasks / 2 x clients``); ``RACK_STANDBYS`` standby replicas
put standby placement after them, inside ``assign`` (their own rack solve is priced past the
budget and falls back)."""
RACK_STANDBYS = 30
HEAVY_TASKS = 3_000
"""The heavy calls' sizes: each one's work alone is at least 1.7x its deadline (measured, CPU, one core of this
machine, nothing else running: 3,000 tasks x 100 standbys 6.8 s against 4 s; the rack call 11.2
s against 6 s). A saturated worker shares its GIL between three such calls, so each runs slower
still; the margin is for a faster machine with the worker alone at the end. CI once saw the rack
call with 0 standbys, 2.9 s alone, answer OK at 5.85 s of its 6 s: it finished before its
deadline, and the test said the worker failed to stop it."""
SMALL_DEADLINE = 2.0
SHED = 8  # heavy calls sent at once to a saturated worker
HEALTH_DEADLINE = 2.0
CPU_AFTER_DEADLINE_LIMIT = 1.0
SOLVE_HEALTH_LIMIT = 0.1
"""The issue's bound on a health answer while a solve runs. An idle worker answers a loopback
check in about 1 ms; one computing Python hands a health thread the GIL within a few switch
intervals (5 ms each), some tens of ms on a busy 2-core machine. A solve holding the GIL shows as
one answer of over a second: the bound sits 10x from each side."""
RACK_HEAVY_DEADLINE = 120.0
MAX_HEALTH_POLLS = 100_000  # a bound on the loop, far above what the call's duration allows
POLL_EVERY = 0.01
"""Between checks the test waits on the call's end (at most this long), so the prober does not
take a core of its own from the worker and the helper: on 2 cores, polling back to back made
three processes compete and a check now and then waited 100 ms for a core, not for the GIL. A
solve of about 1.4 s still sees over 100 checks."""
STARTING = re.compile(r"worker 0 \(pid (\d+)\) starting")
ENDED = re.compile(r"call ended: the (?:deadline passed|caller left) (\w+ \w+)")
"""Where a call past its deadline stopped, as the worker logs it ("during assign": at a
checkpoint inside the assignor; "before distribute": only once the assignor had finished)."""
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a worker's: its solver helper and the spawn
    context's resource tracker), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended while listed
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system time of a process so far, from /proc (utime, stime in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Answer:
    code: grpc.StatusCode
    seconds: float  # from sending to the answer
    ended: float  # time.monotonic() at the answer


def timed(fn: Callable[[], object]) -> Answer:
    start = time.monotonic()
    try:
        fn()
        code = grpc.StatusCode.OK
    except grpc.RpcError as exc:
        code = exc.code()
    end = time.monotonic()
    return Answer(code, end - start, end)


class HealthWatch:
    """Asks the worker's health every 0.2 s from its own connection, until stopped."""

    def __init__(self, target: str) -> None:
        self._channel = grpc.insecure_channel(target)
        self._stub = health_pb2_grpc.HealthStub(self._channel)
        self.answers: list[tuple[str, Answer, int | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def check(self, service: str) -> tuple[Answer, int | None]:
        reply: list[int] = []

        def ask() -> None:
            request = health_pb2.HealthCheckRequest(service=service)
            response = self._stub.Check(request, timeout=HEALTH_DEADLINE)  # type: ignore[attr-defined]
            reply.append(response.status)

        answer = timed(ask)
        return answer, (reply[0] if reply else None)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            for service in ("", WORKERS_SERVICE):
                self.answers.append((service, *self.check(service)))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self._channel.close()


def metric(served: Served, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(served.metrics_text()):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return sample.value
    raise AssertionError(f"no {name} {labels}")


def test_a_saturated_worker_answers_small_calls_and_probes_and_stops_heavy_work(
    tmp_path: Path,
) -> None:
    heavy = heavy_request(tasks=HEAVY_TASKS, clients=100, standbys=100)
    rack = rack_heavy_request(tasks=12_000, clients=150, standbys=RACK_STANDBYS)
    small = json_format.Parse((DATA / "group_12.json").read_text(), pb.AssignRequest())
    with (
        kassign_serve(tmp_path, *SERVE_ARGS, workers=1) as served,
        grpc.insecure_channel(served.target) as channel,
        ThreadPoolExecutor(16) as pool,
    ):
        (pid,) = {int(p) for p in STARTING.findall(served.log.read_text())}
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        watch = HealthWatch(served.target)

        def send(request: pb.AssignRequest, deadline: float) -> Future[Answer]:
            return pool.submit(timed, lambda: stub.Assign(request, timeout=deadline))

        def wait_for_queue(depth: float) -> None:
            limit = time.monotonic() + 10
            while metric(served, "kassign_queue_depth") != depth:
                assert time.monotonic() < limit, f"queue depth never reached {depth}"
                time.sleep(0.05)

        # 1. two heavy calls compute, one rack-aware; small calls are served beside them
        heavy_calls = [send(heavy, HEAVY_DEADLINE), send(rack, RACK_DEADLINE)]
        time.sleep(0.5)
        small_answers = [send(small, SMALL_DEADLINE).result() for _ in range(4)]
        # 2. the last slot, then the line: saturated
        heavy_calls.append(send(heavy, HEAVY_DEADLINE))
        time.sleep(0.3)
        heavy_calls.append(send(heavy, HEAVY_DEADLINE))
        wait_for_queue(1)
        shed = [call.result() for call in [send(heavy, HEAVY_DEADLINE) for _ in range(SHED)]]
        saturated_health = {s: watch.check(s)[1] for s in ("", WORKERS_SERVICE)}
        # 3. every heavy call ends at its deadline; then the worker idles
        heavy_answers = [call.result() for call in heavy_calls]
        cpu_at_last_deadline = cpu_seconds(pid)
        helpers = children(pid)
        helpers_at_last_deadline = sum(map(cpu_seconds, helpers))
        time.sleep(2.0)
        cpu_after = cpu_seconds(pid) - cpu_at_last_deadline
        helper_after = sum(map(cpu_seconds, helpers)) - helpers_at_last_deadline
        wait_for_queue(0)
        after_health = watch.check("")[1]
        watch.stop()
        shed_total = metric(
            served,
            "kassign_calls_shed_total",
            grpc_service="kassign.v1.TaskAssignmentService",
            grpc_method="Assign",
        )
        late_small = send(small, SMALL_DEADLINE).result()
    ended = ENDED.findall(served.log.read_text())

    print(
        f"small calls: {[round(a.seconds, 3) for a in small_answers]} s;"
        f" {SHED} shed after {[round(a.seconds, 3) for a in shed]} s; heavy calls ended after"
        f" {[round(a.seconds, 2) for a in heavy_answers]} s;"
        f" worker CPU in the 2 s after the last deadline: {cpu_after:.2f} s"
        f" (its solver helper's: {helper_after:.2f} s);"
        f" calls ended: {ended};"
        f" slowest of {len(watch.answers)} health checks:"
        f" {max(a.seconds for _, a, _ in watch.answers):.3f} s"
    )
    assert [a.code for a in small_answers] == [grpc.StatusCode.OK] * 4
    assert all(a.seconds < SMALL_DEADLINE for a in small_answers)
    assert [a.code for a in shed] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * SHED
    assert max(a.seconds for a in shed) < 1.0  # refused at once, every one of a burst
    assert saturated_health == {"": NOT_SERVING, WORKERS_SERVICE: SERVING}
    assert [a.code for a in heavy_answers] == [grpc.StatusCode.DEADLINE_EXCEEDED] * 4
    assert cpu_after < CPU_AFTER_DEADLINE_LIMIT
    assert "before distribute" not in ended  # every call stopped inside the assignor
    assert watch.answers and all(a.code == grpc.StatusCode.OK for _, a, _ in watch.answers)
    assert all(status == SERVING for s, _, status in watch.answers if s == WORKERS_SERVICE)
    assert after_health == SERVING and late_small.code == grpc.StatusCode.OK
    assert shed_total == SHED


def test_health_answers_within_100_ms_while_a_worker_solves(tmp_path: Path) -> None:
    """Health asked every ``POLL_EVERY``, from its own connection, for as long as a
    ``min_traffic`` call computes on the same (only) worker: every answer SERVING within
    ``SOLVE_HEALTH_LIMIT``. The checks cover the whole call, so they cover its solves; the
    report says the solves ran."""
    heavy = rack_heavy_request(tasks=6_000, clients=300)
    with (
        kassign_serve(tmp_path, workers=1) as served,
        grpc.insecure_channel(served.target) as channel,
        grpc.insecure_channel(served.target) as health_channel,
    ):
        stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        health = health_pb2_grpc.HealthStub(health_channel)
        ask = health_pb2.HealthCheckRequest(service="")
        health.Check(ask, timeout=HEALTH_DEADLINE)  # type: ignore[attr-defined]  # connected
        started = time.monotonic()
        call = stub.Assign.future(heavy, timeout=RACK_HEAVY_DEADLINE)
        done = threading.Event()
        call.add_done_callback(lambda _: done.set())
        answers: list[tuple[float, int]] = []
        while not done.wait(POLL_EVERY) and len(answers) < MAX_HEALTH_POLLS:
            before = time.monotonic()
            status = health.Check(ask, timeout=HEALTH_DEADLINE).status  # type: ignore[attr-defined]
            answers.append((time.monotonic() - before, status))
        response = call.result()
        call_seconds = time.monotonic() - started

    times = sorted(seconds for seconds, _ in answers)
    slowest = times[-1]
    print(
        f"rack-heavy call: {call_seconds:.2f} s, rack status {response.report.rack_status};"
        f" {len(answers)} health checks during it: median {1000 * times[len(times) // 2]:.1f} ms,"
        f" 99th percentile {1000 * times[len(times) * 99 // 100]:.1f} ms,"
        f" over 50 ms {sum(t > 0.05 for t in times)}, slowest {1000 * slowest:.1f} ms"
    )
    assert response.report.rack_status == pb.RACK_OPTIMISATION_OPTIMAL
    assert response.report.cross_rack_cost_after < response.report.cross_rack_cost_before
    assert len(answers) < MAX_HEALTH_POLLS and len(answers) > 10
    assert all(status == SERVING for _, status in answers)
    assert slowest < SOLVE_HEALTH_LIMIT, f"a health check took {1000 * slowest:.0f} ms"
