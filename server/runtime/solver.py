"""A serving process's min-cost flow solves, the large ones in a helper process (issue 24).

OR-Tools' ``SimpleMinCostFlow.solve`` holds the GIL for its whole run (a KIP-925 ``min_traffic``
graph of 900,000 arcs: 1.4 s), and every other thread of the worker waits for it: health
checks, small calls, the admission gate. A graph of ``OFFLOAD_ARCS`` arcs or more is therefore
sent to one helper process per worker, started with ``spawn`` (a fork of a process whose gRPC
threads run is unsafe); the serving thread waits for the answer with the GIL released. The
helper runs the same ``kassign.assignor.flow.optimal_flows`` on the same arrays in the same
order, so the flows are the ones an in-process solve gives. Smaller graphs solve in-process:
they take a few ms, less than the trip.

The arrays travel through shared memory, not a pipe: pickling a 900,000-arc graph (29 MB) held
the GIL for 200 ms here, while numpy's copies into and out of a shared block release it. The
block (40 bytes an arc) is reserved before it is written; where ``/dev/shm`` has no room for it
the graph is solved here, as before.

As with any ``spawn``, the helper imports the program's main module: it must guard its entry
point (``kassign``'s command and ``python -m kassign.cli`` do).

A call waits for its solve in slices of ``interrupt.CHECK_EVERY_SECONDS``, running its
checkpoint between them (issue 27): a call whose deadline passes during a solve ends there, its
solve taken off the helper's queue if it has not started, or left to finish unread (a solve
cannot be interrupted) if it has; either way the call's thread is free at once.

One helper: solves from several calls take turns, as they did on the GIL, so a worker still uses
one core for them. A helper that dies (killed, out of memory) fails its solve with
``SolverError`` (the rack optimiser's fallback) and is replaced for the next one. It gets SIGTERM
when its worker's main thread ends (Linux), so it never outlives the worker.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.shared_memory import SharedMemory

import numpy as np
from kassign.assignor import flow, interrupt
from kassign.assignor.errors import SolverError
from kassign.server.runtime import malloc

__all__ = ["OFFLOAD_ARCS", "HelperSolver"]

OFFLOAD_ARCS = 10_000
"""Graphs with at least this many arcs are solved in the helper. At 10,000 arcs a solve takes
about 5-15 ms, the trip (pickled arrays both ways) about 1 ms; below it the solve stays here."""

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """The helper's initializer: SIGTERM when the worker that started it is gone. A worker
    that ended before this ran (the helper takes a second or two to start) has already
    handed it to init, which the signal never follows: then it ends here."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(0)


def _start_helper(parent: int, tuned: bool) -> None:
    """The helper's initializer: it dies with its worker, and allocates as the worker does."""
    _die_with_parent(parent)
    if tuned:
        malloc.tune()


def _columns(block: SharedMemory, nodes: int, arcs: int) -> list[flow.IntArray]:
    """The block's views: tails, heads, capacities, unit costs, flows (arcs each), supplies."""
    if block.buf is None:
        raise ValueError(f"shared block {block.name} is closed")
    whole: flow.IntArray = np.ndarray((5 * arcs + nodes,), np.int64, buffer=block.buf)
    return [whole[i * arcs : (i + 1) * arcs] for i in range(5)] + [whole[5 * arcs :]]


def _solve_shared(name: str, nodes: int, arcs: int) -> tuple[str, int]:
    """In the helper: solve the graph in block ``name``, write the flows beside it."""
    block = SharedMemory(name=name)
    try:
        return _solve_columns(_columns(block, nodes, arcs), nodes)
    finally:
        block.close()


def _solve_columns(columns: list[flow.IntArray], nodes: int) -> tuple[str, int]:
    tails, heads, capacities, costs, flows, supplies = columns
    graph = flow.FlowGraph(nodes, tails, heads, capacities, costs, supplies)
    status, solved, cost = flow.optimal_flows(graph)
    if solved.size:
        flows[...] = solved
    return status, cost


def _ready() -> bool:
    """A no-op task: the helper has started and imported the solver."""
    return True


@dataclass(slots=True)
class HelperSolver:
    """A ``flow.Runner``: large graphs to the helper process, small ones in this process.

    Start it from the worker's main thread (``start``): the helper's parent-death signal
    follows the thread that started it. ``malloc_tuning``: the helper sets the worker's
    ``malloc`` thresholds too, and ``trim`` gives its free heap back.
    """

    offload_arcs: int = OFFLOAD_ARCS
    malloc_tuning: bool = False
    _pool: ProcessPoolExecutor | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def start(self) -> None:
        """Start the helper now and let it import OR-Tools while the server starts."""
        self._helper().submit(_ready)

    def __call__(self, graph: flow.FlowGraph) -> flow.Outcome:
        if graph.num_arcs < self.offload_arcs:
            return flow.optimal_flows(graph)
        block = _reserved(8 * (5 * graph.num_arcs + graph.num_nodes))
        if block is None:  # no room in /dev/shm: here, holding the GIL, as before
            return flow.optimal_flows(graph)
        pool = self._helper()
        try:
            return _offloaded(pool, block, graph)
        except BrokenProcessPool as exc:
            with self._lock:
                if self._pool is pool:
                    self._pool = None  # the next solve starts a fresh helper
            raise SolverError("HELPER_LOST", f"the solver process ended: {exc}") from exc
        finally:
            block.close()
            block.unlink()

    def trim(self) -> None:
        """Ask a running helper to give its free heap back (after its solves in flight)."""
        with self._lock:
            pool = self._pool
        if pool is not None:
            with contextlib.suppress(RuntimeError, BrokenProcessPool):
                pool.submit(malloc.trim)

    def stop(self) -> None:
        """End the helper (a solve in flight finishes first)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _helper(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_helper,
                    initargs=(os.getpid(), self.malloc_tuning),
                )
            return self._pool


def _reserved(size: int) -> SharedMemory | None:
    """A shared block of ``size`` bytes with its pages reserved, or ``None`` when there is no
    room: ``/dev/shm`` is 64 MB in a default container, and writing past a tmpfs's room would
    kill the worker with SIGBUS where ``posix_fallocate`` fails with ENOSPC."""
    try:
        block = SharedMemory(create=True, size=size)
    except OSError:
        return None
    try:
        os.posix_fallocate(getattr(block, "_fd"), 0, size)  # noqa: B009 - private in typeshed
    except (OSError, AttributeError):
        block.close()
        block.unlink()
        return None
    return block


def _offloaded(
    pool: ProcessPoolExecutor, block: SharedMemory, graph: flow.FlowGraph
) -> flow.Outcome:
    """``graph`` copied into ``block``, solved by the helper, its flows copied out (numpy's
    copies release the GIL); no view of the block outlives this function."""
    nodes, arcs = graph.num_nodes, graph.num_arcs
    columns = _columns(block, nodes, arcs)
    sources = (graph.tails, graph.heads, graph.capacities, graph.unit_costs, None, graph.supplies)
    for column, source in zip(columns, sources, strict=True):
        if source is not None:
            column[...] = source
    del columns  # no view may be left if the wait below ends the call
    status, cost = _waited(pool.submit(_solve_shared, block.name, nodes, arcs))
    flows = np.array(_columns(block, nodes, arcs)[4]) if status == "OPTIMAL" else None
    return status, np.zeros(0, np.int64) if flows is None else flows, cost


def _waited(solving: Future[tuple[str, int]]) -> tuple[str, int]:
    """The helper's answer, the caller's checkpoint run every ``CHECK_EVERY_SECONDS`` while
    it waits; a check that ends the call takes the solve off the queue if it has not started."""
    while True:
        try:
            return solving.result(timeout=interrupt.CHECK_EVERY_SECONDS)
        except TimeoutError:
            try:
                interrupt.checkpoint()
            except BaseException:
                solving.cancel()
                raise
