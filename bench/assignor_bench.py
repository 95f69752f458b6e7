"""Time the high-availability assignor on large groups (1 standby, KIP-708 tags, no racks).

    .venv/bin/python bench/assignor_bench.py [--repeat N]

Two sizes: 1,000 tasks x 100 clients and 10,000 tasks x 1,000 clients (the target: the larger
one under 1 s on a 2-core machine). Each in two shapes:

- ``steady``: the group sits on the balanced assignment it converged to, every client caught
  up (actives -2, standbys a small lag): nothing should move;
- ``scale-out``: the same group plus 10% new clients with no state (warm-ups, movements);
- ``reshuffle``: a history unrelated to the balanced layout, so nearly every task moves.

Alongside each figure, a baseline measured in the same run: the cost of merely writing out a
round-robin answer of the same size (``task_assignment`` of sorted tuples), so the ratio says
how much the algorithm adds over producing the result at all; and the same group without
standbys, which shows what standby placement costs. Building the input is not timed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kassign.assignor.streams.high_availability import assign_high_availability
from kassign.assignor.streams.lags import ConsumerReport, kafka_streams_state
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    AssignmentConfigs,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    application_state,
)
from kassign.assignor.streams.result import KafkaStreamsAssignment, task_assignment

ZONES, CLUSTERS = 3, 4
END_OFFSET = 1_000_000


def _tasks(n_tasks: int) -> list[TaskInfo]:
    """Sub-topologies of 100 partitions; every fifth one stateless."""
    infos = []
    for i in range(n_tasks):
        sub, partition = divmod(i, 100)
        stateful = sub % 5 != 4
        end = END_OFFSET if stateful else 0
        infos.append(TaskInfo(TaskId(sub, partition), stateful, ("s",) * stateful, (), end))
    return infos


def _client(
    n: int, threads: int, actives: list[TaskId], standbys: list[TaskId], ends: dict[TaskId, int]
) -> KafkaStreamsState:
    sums = {t: LATEST_OFFSET for t in actives if t in ends}
    sums.update({t: END_OFFSET - 500 for t in standbys})
    reports = [
        ConsumerReport(
            f"member-{n}-{k}", {t: s for j, (t, s) in enumerate(sums.items()) if j % threads == k}
        )
        for k in range(threads)
    ]
    tags = {"zone": f"z{n % ZONES}", "cluster": f"k{n // ZONES % CLUSTERS}"}
    return kafka_streams_state(UUID(int=(n * 2654435761) % 2**128), reports, ends, client_tags=tags)


CONFIGS = AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_tags=("zone", "cluster"))


def build(
    n_tasks: int, n_clients: int, *, new_clients: int = 0, shape: str = "steady"
) -> ApplicationState:
    """A group of ``n_clients`` with history, plus ``new_clients`` without any state.

    ``steady``: the history is the balanced assignment the assignor converges to (what a
    group looks like between scaling events). ``reshuffle``: client ``c`` ran tasks
    ``c, c + C, ...`` and stood by for the next ones, unrelated to the balanced layout, so
    nearly every task needs a movement (a worst case).
    """
    tasks = _tasks(n_tasks)
    ends = {t.id: t.changelog_end_offset_sum for t in tasks if t.stateful}
    history = (
        _converged(tasks, n_clients, ends)
        if shape == "steady"
        else _strided(tasks, n_clients, ends)
    )
    clients = [_client(c, 1 + c % 3, a, s, ends) for c, (a, s) in enumerate(history)]
    for c in range(n_clients, n_clients + new_clients):
        clients.append(_client(c, 1 + c % 3, [], [], ends))
    return application_state(tasks, clients, CONFIGS, now_ms=0)


def _strided(
    tasks: list[TaskInfo], n_clients: int, ends: dict[TaskId, int]
) -> list[tuple[list[TaskId], list[TaskId]]]:
    ids = [t.id for t in tasks]
    history = []
    for c in range(n_clients):
        standbys = [ids[(i + 1) % len(ids)] for i in range(c, len(ids), n_clients)]
        history.append((ids[c::n_clients], [t for t in standbys if t in ends]))
    return history


def _converged(
    tasks: list[TaskInfo], n_clients: int, ends: dict[TaskId, int]
) -> list[tuple[list[TaskId], list[TaskId]]]:
    """The assignor's own answer when every client may take anything: the balanced target."""
    fresh = [_client(c, 1 + c % 3, [], [], ends) for c in range(n_clients)]
    anything = replace(CONFIGS, acceptable_recovery_lag=2**63 - 1)
    target = assign_high_availability(application_state(tasks, fresh, anything)).by_process()
    return [(list(target[c.process_id].active), list(target[c.process_id].standby)) for c in fresh]


def _baseline(state: ApplicationState) -> None:
    clients = list(state.clients)
    tasks = list(state.tasks)
    task_assignment(
        KafkaStreamsAssignment.of(p, tasks[i :: len(clients)]) for i, p in enumerate(clients)
    )


def _median_seconds(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``run`` (CPU time is steadier on a busy machine)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    args = parser.parse_args(argv)
    print(
        f"{'shape':<10} {'tasks':>6} {'clients':>7} {'HA s':>7} {'HA cpu s':>8} "
        f"{'no-standby s':>12} {'baseline s':>10} {'ratio':>6}  warm-ups"
    )
    for n_tasks, n_clients in ((1_000, 100), (10_000, 1_000)):
        shapes = (("steady", 0), ("scale-out", n_clients // 10), ("reshuffle", 0))
        for shape, new in shapes:
            state = build(
                n_tasks,
                n_clients,
                new_clients=new,
                shape="reshuffle" if shape == "reshuffle" else "steady",
            )
            bare = replace(state, configs=replace(state.configs, num_standby_replicas=0))
            result = assign_high_availability(state)
            ha, ha_cpu = _median_seconds(partial(assign_high_availability, state), args.repeat)
            no_standby, _ = _median_seconds(partial(assign_high_availability, bare), args.repeat)
            base, _ = _median_seconds(partial(_baseline, state), args.repeat)
            print(
                f"{shape:<10} {n_tasks:>6} {len(state.clients):>7} {ha:>7.3f} {ha_cpu:>8.3f} "
                f"{no_standby:>12.3f} {base:>10.3f} {ha / base:>6.1f}  {result.diagnostics.warmups}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
