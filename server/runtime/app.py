"""The gRPC server: one ``create_server`` to build it, one ``serve`` to run it until a signal.

``create_server(config)`` returns ``(server, port)`` and is all tests need (bind port 0, read the
port back). ``serve(config)`` adds the process concerns: signals, graceful shutdown, the port file,
``wait_for_termination``. The process model (how many processes serve) is ``serve``'s alone, so
forking workers with ``SO_REUSEPORT`` before any gRPC server exists can be added there without
touching the rest.

Limits: requests and responses up to ``max_message_bytes`` (64 MiB by default; a 10,000-task group
with 100 clients is a few MiB), ``max_workers`` assignment calls computed at once and ``max_queue``
waiting, any further one refused at once (``kassign.server.runtime.admission``); per request,
``ServerConfig.limits`` (``kassign.server.limits``), the answer's estimate against
``max_message_bytes``.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, cast

import grpc
from google.protobuf import descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from kassign.assignor import flow
from kassign.server.consumer import service as consumer
from kassign.server.consumer.service import ConsumerRequestJournal
from kassign.server.consumer.servicer import ConsumerObserver
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.loads.source import LoadSource, LoadSourceConfig, LoadSourceObserver
from kassign.server.observe.journal_retention import DEFAULT_RETENTION, Retention
from kassign.server.runtime import malloc
from kassign.server.runtime.admission import (
    DEFAULT_MAX_QUEUE,
    RESERVED_THREADS,
    AdmissionInterceptor,
    Gate,
    Load,
    LoadObserver,
    saturation_health,
)
from kassign.server.runtime.readiness import Readiness
from kassign.server.runtime.solver import HelperSolver
from kassign.server.runtime.tls import ServerTls, server_credentials
from kassign.server.streams import service as streams
from kassign.server.streams.service import SERVICE_NAME, RequestJournal
from kassign.server.streams.servicer import AssignObserver

if TYPE_CHECKING:
    from kassign.server.observe.journal import Journal

__all__ = [
    "CONSUMER_SERVICE_NAME",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_QUEUE",
    "DEFAULT_PORT",
    "SERVICE_NAME",
    "RequestJournal",
    "ServerConfig",
    "channel_options",
    "create_server",
    "run_process",
    "serve",
]

log = logging.getLogger(__name__)

DEFAULT_PORT = 50051
CONSUMER_SERVICE_NAME = consumer.SERVICE_NAME
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """How to serve. ``port`` 0 picks a free port; ``port_file`` receives the bound port.

    ``default_budget_ms`` fills ``assignment_time_budget_ms`` when a request leaves it unset.
    ``reuse_port`` lets several processes share one port (for forked workers; off otherwise, so
    a second server on a taken port fails instead of silently sharing it). ``tls`` set: TLS only.
    ``reflection`` off: no gRPC server reflection service. ``max_workers`` assignment calls
    compute at once and ``max_queue`` wait for a slot; beyond that a call is shed
    (RESOURCE_EXHAUSTED). The server has ``max_workers + max_queue + RESERVED_THREADS`` threads,
    so health checks never wait behind assignments.
    """

    host: str = "[::]"
    port: int = DEFAULT_PORT
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_workers: int = 4
    max_queue: int = DEFAULT_MAX_QUEUE
    grace_seconds: float = 10.0
    default_budget_ms: int | None = 5_000
    reuse_port: bool = False
    port_file: Path | None = None
    journal_dir: Path | None = None
    journal_retention: Retention = DEFAULT_RETENTION  # each of journal_dir and its consumer/
    tls: ServerTls | None = None
    reflection: bool = True
    extra_options: tuple[tuple[str, int | str], ...] = field(default=())
    limits: RequestLimits = DEFAULT_LIMITS  # per request; answer_bytes is max_message_bytes
    probe_path: Path | None = None  # a worker's private Unix socket, for its own probe
    load_source: LoadSourceConfig | None = None  # --load-source: each process reads its own
    malloc_tuning: bool = False  # run_process: glibc's thresholds raised (runtime/malloc.py)


def channel_options(max_message_bytes: int) -> list[tuple[str, int]]:
    """Message size limits, the same on both ends (the Python client uses them too)."""
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
    ]


class _MethodSymbolPool:
    """The default descriptor pool, which reflection also asks for methods by full name.

    The reflection protocol's ``file_containing_symbol`` takes ``package.Service.Method`` too, and
    ghz asks for exactly that (``--call kassign.v1.TaskAssignmentService.Assign``), but protobuf's
    upb pool finds only services, messages, enums and fields by name ("Symbol not found").
    """

    def __init__(self, pool: Any) -> None:  # the stubs leave DescriptorPool's methods untyped
        self._pool = pool

    def FindFileContainingSymbol(self, symbol: str) -> Any:
        try:
            return self._pool.FindFileContainingSymbol(symbol)
        except KeyError:
            service_name, _, method = symbol.rpartition(".")
            try:
                service = self._pool.FindServiceByName(service_name)
            except KeyError:
                raise KeyError(symbol) from None
            if method not in service.methods_by_name:
                raise KeyError(symbol) from None
            return service.file

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


def create_server(
    config: ServerConfig,
    *,
    observer: AssignObserver | None = None,
    consumer_observer: ConsumerObserver | None = None,
    journal: RequestJournal | None = None,
    consumer_journal: ConsumerRequestJournal | None = None,
    health_servicer: health.HealthServicer | None = None,
    interceptors: Sequence[grpc.ServerInterceptor] = (),
    load_observer: LoadObserver | None = None,
    readiness: Readiness | None = None,
    load_source_observer: LoadSourceObserver | None = None,
) -> tuple[grpc.Server, int]:
    """A started-ready (not started) server with both assignment services, health and reflection.

    ``observer`` and ``journal`` serve the Streams room, ``consumer_observer`` and
    ``consumer_journal`` the consumer room; ``interceptors`` wrap every call of every service
    (``kassign.server.observe.prometheus.MetricsInterceptor``); ``load_observer`` hears of the
    queue and of shed calls (``kassign.server.observe.prometheus.LoadMetrics``); ``readiness``
    votes on ``health_servicer``'s statuses (one is made if not given). ``config.probe_path``
    set: the server also listens there (a Unix socket), for the worker's own probe.
    ``config.load_source`` set: this server's own reader of it, telling ``load_source_observer``
    (``kassign.server.observe.load_source_metrics``) each reading's outcome.
    """
    options = channel_options(config.max_message_bytes)
    options.append(("grpc.so_reuseport", 1 if config.reuse_port else 0))
    health_servicer = health_servicer or health.HealthServicer()
    readiness = readiness or Readiness(health_servicer)
    admission = _admission(config, readiness, load_observer or _NoLoadObserver())
    threads = config.max_workers + config.max_queue + RESERVED_THREADS
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kassign"),
        options=[*options, *config.extra_options],
        interceptors=[*interceptors, admission],
    )
    # Each room adds its own service; health and reflection follow the names they return.
    limits = replace(config.limits, answer_bytes=config.max_message_bytes)
    loads = _load_source(config.load_source, load_source_observer)  # one reader, both rooms
    services = (
        streams.add_to_server(
            server,
            default_budget_ms=config.default_budget_ms,
            observer=observer,
            journal=journal,
            limits=limits,
            loads=loads,
        ),
        consumer.add_to_server(
            server,
            observer=consumer_observer,
            journal=consumer_journal,
            limits=limits,
            loads=loads,
        ),
    )
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", *services):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    if config.reflection:
        pool = _MethodSymbolPool(descriptor_pool.Default())  # type: ignore[no-untyped-call]
        reflection.enable_server_reflection(
            (*services, health.SERVICE_NAME, reflection.SERVICE_NAME),
            server,
            pool=cast(descriptor_pool.DescriptorPool, pool),
        )
    address = f"{config.host}:{config.port}"
    try:
        if config.tls is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, server_credentials(config.tls))
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    if config.probe_path is not None and not server.add_insecure_port(f"unix:{config.probe_path}"):
        raise OSError(f"cannot listen on unix:{config.probe_path}")
    return server, port


def _load_source(
    config: LoadSourceConfig | None, observer: LoadSourceObserver | None
) -> LoadSource | None:
    return None if config is None else LoadSource(config, observer)


ASSIGNMENT_SERVICES = (SERVICE_NAME, CONSUMER_SERVICE_NAME)
"""The services whose calls queue for a slot and are shed (health and reflection never are)."""


class _NoLoadObserver:
    def on_load(self, load: Load) -> None:
        pass

    def on_shed(self, service: str, method: str) -> None:
        pass


def _admission(
    config: ServerConfig, readiness: Readiness, observer: LoadObserver
) -> AdmissionInterceptor:
    """The gate of the assignment services; while saturated, they and ``""`` are NOT_SERVING
    (a readiness probe's question), ``kassign.workers`` (liveness) is left alone."""
    on_health = saturation_health(readiness, ("", *ASSIGNMENT_SERVICES))

    def on_load(load: Load) -> None:
        observer.on_load(load)
        on_health(load)

    gate = Gate(config.max_workers, config.max_queue, on_load)
    return AdmissionInterceptor(gate, ASSIGNMENT_SERVICES, observer)


def _write_port_file(path: Path, port: int) -> None:
    """Atomically, so a reader never sees a half-written number."""
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n")
    tmp.replace(path)


def _open_journals(config: ServerConfig) -> tuple[Journal, Journal] | tuple[None, None]:
    """The Streams room's journal in ``journal_dir``, the consumer room's in a folder inside."""
    if config.journal_dir is None:
        return None, None
    from kassign.server.observe.journal import CONSUMER_SUBDIR, Journal

    kept = config.journal_retention
    return (
        Journal(config.journal_dir, retention=kept),
        Journal(config.journal_dir / CONSUMER_SUBDIR, retention=kept),
    )


def _install_shutdown(stop: Callable[[bool], None]) -> None:
    """SIGTERM/SIGINT: first one drains gracefully, a second one stops at once."""
    signals_seen = 0

    def handler(signum: int, _frame: FrameType | None) -> None:
        nonlocal signals_seen
        signals_seen += 1
        log.info("received %s, shutting down", signal.Signals(signum).name)
        # On its own thread: a second signal arriving while stop() holds the server's lock
        # would otherwise run a nested stop() in this thread and deadlock on it.
        threading.Thread(
            target=stop, args=(signals_seen > 1,), name="kassign-stop", daemon=True
        ).start()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, handler)


GC_THRESHOLDS = (50_000, 20, 100)
"""The collector's thresholds in a serving process (Python's default is 700, 10, 10)."""


def _tune_gc() -> None:
    """Fewer collections while a call decodes and assigns a large group.

    A call allocates many objects that live until its response is sent and few cycles; at the
    default threshold the collector walks them again and again (about 8% of a cooperative-sticky
    call at 50,000 x 1,000). What the process imported is frozen out of the collector's walks;
    cycles are still collected, less often.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


SWITCH_INTERVAL = 0.001
"""How long a thread may keep the GIL while another waits for it, in a serving process (Python's
default is 5 ms). A health check passes the GIL between a few of gRPC's threads; behind a call
computing in Python each hand-over waited up to 5 ms, so checks took 20-90 ms. The interval
only matters while a thread waits, so a worker computing alone does not switch more."""


def _load_exact_solver() -> None:
    """Import CP-SAT before the first call: the load core's exact step (small LOAD groups)
    imports it lazily, which took 0.25-0.3 s on a call's path, past a plug-in's 300 ms
    deadline in the e2e. Plain library users and ``kassign assign`` keep the lazy import."""
    from ortools.sat.python import cp_model

    del cp_model


def _tune_switching() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL)


def run_process(
    config: ServerConfig,
    *,
    observer: AssignObserver | None = None,
    consumer_observer: ConsumerObserver | None = None,
    interceptors: Sequence[grpc.ServerInterceptor] = (),
    health_servicer: health.HealthServicer | None = None,
    load_observer: LoadObserver | None = None,
    readiness: Readiness | None = None,
    on_started: Callable[[], object] = lambda: None,
    load_source_observer: LoadSourceObserver | None = None,
) -> None:
    """Serve in this process until SIGTERM/SIGINT, then finish in-flight calls within the grace.

    Large min-cost flow solves go to a helper process (``kassign.server.runtime.solver``), so
    health and small calls are answered while one runs. ``on_started`` runs once the server
    answers (a forked worker starts probing itself there)."""
    _load_exact_solver()
    _tune_gc()
    _tune_switching()
    solver = HelperSolver(malloc_tuning=config.malloc_tuning)
    if config.malloc_tuning:
        load_observer = malloc.serving(load_observer, solver.trim)
    solver.start()
    flow.use_runner(solver)
    journal, consumer_journal = _open_journals(config)
    health_servicer = health_servicer or health.HealthServicer()
    server, port = create_server(
        config,
        observer=observer,
        consumer_observer=consumer_observer,
        journal=journal,
        consumer_journal=consumer_journal,
        health_servicer=health_servicer,
        interceptors=interceptors,
        load_observer=load_observer,
        readiness=readiness,
        load_source_observer=load_source_observer,
    )

    def stop(now: bool) -> None:
        health_servicer.enter_graceful_shutdown()
        server.stop(None if now else config.grace_seconds)

    _install_shutdown(stop)
    server.start()
    log.info("kassign serving on %s:%d (pid %d)", config.host, port, os.getpid())
    if config.port_file is not None:
        _write_port_file(config.port_file, port)
    on_started()
    server.wait_for_termination()
    for opened in (journal, consumer_journal):
        if opened is not None:
            opened.close()
    solver.stop()
    log.info("kassign stopped")


def serve(
    config: ServerConfig,
    *,
    observer: AssignObserver | None = None,
    consumer_observer: ConsumerObserver | None = None,
) -> None:
    """The process model: one serving process (forked workers would start here, before gRPC)."""
    run_process(config, observer=observer, consumer_observer=consumer_observer)
