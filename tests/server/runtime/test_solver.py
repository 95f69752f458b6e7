"""The serving process's solver: large graphs in a helper process, the same flows as here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from kassign.assignor import flow, interrupt
from kassign.assignor.errors import Interrupted, SolverError
from kassign.server.runtime import solver
from kassign.server.runtime.solver import HelperSolver


@pytest.fixture
def helper() -> Iterator[HelperSolver]:
    """A helper that takes every graph (``offload_arcs`` 1), ``flow.solve``'s runner meanwhile."""
    solver = HelperSolver(offload_arcs=1)
    solver.start()
    previous = flow.use_runner(solver)
    try:
        yield solver
    finally:
        flow.use_runner(previous)
        solver.stop()


def _tied_assignment(n: int, seed: int, *, costs: int = 3) -> flow.FlowGraph:
    """n workers x n tasks with many equal costs: the arc order decides between optima. With
    ``costs`` a million, a costly solve instead: about a second of CPU at n = 1,200."""
    cost = np.random.default_rng(seed).integers(0, costs, size=(n, n))
    lay = flow.layout(("worker", n), ("task", n))
    tails = np.repeat(np.arange(n), n)
    heads = lay.start("task") + np.tile(np.arange(n), n)
    supplies = np.concatenate([np.ones(n, np.int64), -np.ones(n, np.int64)])
    return flow.FlowGraph.of(lay.num_nodes, [(tails, heads, 1, cost.ravel())], supplies)


class Stop(Interrupted):
    pass


def test_a_call_stops_waiting_for_its_solve_when_its_check_ends_it(helper: HelperSolver) -> None:
    """Issue 27: a call whose deadline passed waited for its offloaded solve to the end, then
    went on. The wait now runs the call's checkpoint, so the call ends within a slice of its
    check firing, long before the solve would end. What the trip itself costs (copying a
    million arcs in and out) is measured on the same graph without supplies, which solves at
    once; the solve's own cost on the graph, in this process."""
    graph = _tied_assignment(1_200, 27, costs=1_000_000)
    idle = replace(graph, supplies=np.zeros_like(graph.supplies))
    flow.solve(_tied_assignment(20, 1))  # the helper has started and imported OR-Tools
    started = time.monotonic()
    flow.solve(idle)
    trip = time.monotonic() - started
    started_cpu = time.thread_time()
    flow.optimal_flows(graph)
    solve_cpu = time.thread_time() - started_cpu
    fires = time.monotonic() + 0.05

    def check() -> None:
        if time.monotonic() >= fires:
            raise Stop("the deadline passed")

    started = time.monotonic()
    with interrupt.checked(check), pytest.raises(Stop):
        flow.solve(graph)
    waited = time.monotonic() - started
    print(f"trip {trip:.2f} s, solve {solve_cpu:.2f} s cpu; the call waited {waited:.2f} s")
    assert waited < trip + solve_cpu / 2


def test_the_helper_gives_the_flows_an_in_process_solve_gives(helper: HelperSolver) -> None:
    for seed in range(3):
        graph = _tied_assignment(60, seed)
        here = flow.optimal_flows(graph)
        solved = flow.solve(graph)
        assert here[0] == "OPTIMAL" and solved.cost == here[2]
        assert np.array_equal(solved.flows, here[1])


def test_a_status_other_than_optimal_comes_back_as_the_solver_error(helper: HelperSolver) -> None:
    with pytest.raises(SolverError) as err:
        flow.solve(flow.FlowGraph.of(2, [([0], [1], [1], [0])], [2, -2]))
    assert err.value.status == "INFEASIBLE"


def test_small_graphs_stay_in_this_process() -> None:
    solver = HelperSolver()  # never started: a small graph must not need it
    graph = _tied_assignment(5, 0)
    assert graph.num_arcs < solver.offload_arcs
    assert solver(graph)[0] == "OPTIMAL"
    assert solver._pool is None


def test_a_lost_helper_fails_its_solve_and_is_replaced(helper: HelperSolver) -> None:
    graph = _tied_assignment(20, 1)
    flow.solve(graph)
    pool = helper._pool
    assert pool is not None
    for pid in list(pool._processes):  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(SolverError) as err:
        for _ in range(2):  # the kill may land before the pool notices
            flow.solve(graph)
    assert err.value.status == "HELPER_LOST"
    assert np.array_equal(flow.solve(graph).flows, flow.optimal_flows(graph)[1])


def test_a_block_without_room_is_refused_and_the_graph_solved_here() -> None:
    assert solver._reserved(1 << 50) is None  # far beyond /dev/shm: ENOSPC, never SIGBUS
    block = solver._reserved(1 << 16)
    assert block is not None
    block.close()
    block.unlink()


def _marked(marker: str) -> list[int]:
    """Processes whose environment carries ``marker`` (a helper inherits its parent's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as env:
                    if marker.encode() in env.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_helper_whose_worker_ends_before_it_starts_ends_too() -> None:
    """The parent-death signal is set by the helper once it runs; a worker gone before that
    (killed while its helper still imports) left the helper to init for good (issue 24: such
    helpers were found alive after the suite). It now notices and ends."""
    marker = f"KASSIGN_HELPER_TEST={uuid.uuid4().hex}"
    key, value = marker.split("=")
    script = (
        "import os\n"
        "from kassign.server.runtime.solver import HelperSolver\n"
        "HelperSolver().start()\n"
        "os._exit(0)\n"  # before the helper has imported anything
    )
    subprocess.run([sys.executable, "-c", script], env={**os.environ, key: value}, check=True)
    deadline = time.monotonic() + 30  # a helper takes a second or two to start, more when busy
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _marked(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"helper processes outlived their worker: {left}"
