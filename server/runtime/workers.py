"""``kassign serve --workers N``: N server processes on one port, metrics aggregated in the parent.

OR-Tools holds the GIL while it solves, so threads cannot use a second core; processes can.
The process model, in order (it matters: gRPC must not exist before the fork):

1. The parent makes a fresh ``PROMETHEUS_MULTIPROC_DIR`` and reserves the port with a socket
   bound (not listening) with ``SO_REUSEPORT``, so port 0 means one port for every worker.
2. It serves ``/metrics`` with ``MultiProcessCollector`` (every worker's files, summed) and its
   own ``PoolCollector`` (process metrics of each process, build info, the worker pool); a
   metrics port it cannot bind stops start-up here, before any worker exists.
3. It forks N workers before any gRPC server or channel exists. Each worker closes the metrics
   socket it inherited, switches prometheus_client to multiprocess values, builds its metrics,
   and serves the port with ``grpc.so_reuseport`` (the kernel spreads *connections* over the
   workers, not requests).
4. It leaves the workers to ``kassign.server.runtime.supervisor``: it forwards SIGTERM/SIGINT to
   them as SIGTERM (a second signal forwards a second SIGTERM: stop at once), marks each worker
   dead as it exits, replaces one that exits while the service is up, gives up a slot that keeps
   failing (``kassign.server.runtime.slots`` tells the workers' health service), and returns when
   all have exited.

Workers sit in their own process group, so a terminal's Ctrl-C reaches the parent only and each
worker gets exactly one SIGTERM; on Linux a worker also gets SIGTERM if the parent dies, and one
forked by a parent already dead exits at once. A stopped (SIGSTOPped) worker whose parent dies is
in an orphaned process group, which the kernel sends SIGHUP and SIGCONT: it ends too.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from kassign.server.runtime.app import (
    CONSUMER_SERVICE_NAME,
    SERVICE_NAME,
    ServerConfig,
    run_process,
)
from kassign.server.runtime.heartbeat import (
    DEFAULT_TIMEOUT_SECONDS,
    Heartbeats,
    Watchdog,
    keep_probing,
)
from kassign.server.runtime.readiness import Readiness
from kassign.server.runtime.slots import LostSlots, report_lost_slots
from kassign.server.runtime.supervisor import STOP_SIGNALS, Supervisor

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

__all__ = ["MetricsUnavailable", "PortInUse", "metrics_host_for", "reserve_port", "serve_workers"]

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_PR_SET_PDEATHSIG = 1


class PortInUse(OSError):
    """Another socket holds the port: with ``SO_REUSEPORT`` a second ``kassign serve`` would
    silently share it and split the connections, so that takes ``--join``."""


class MetricsUnavailable(OSError):
    """The metrics port cannot be bound: start-up stops rather than serve unseen by Prometheus
    (its alerts would call a live service absent)."""


def check_port_free(host: str, port: int) -> None:
    """Refuse a port some socket is bound to. A probe without ``SO_REUSEPORT`` cannot bind
    beside a listener (``SO_REUSEADDR`` only lets it past connections in TIME_WAIT)."""
    if port == 0:
        return
    name = host.strip("[]") or "::"
    for family, _, _, _, address in socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)[:1]:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                raise PortInUse(
                    exc.errno,
                    f"port {port} on {host} is already in use (another kassign serve?);"
                    " pass --join to share it with a kassign serve there",
                ) from exc


@contextlib.contextmanager
def reserve_port(host: str, port: int) -> Iterator[int]:
    """Hold ``host:port`` (0: any free port) with ``SO_REUSEPORT`` so workers can share it.

    The socket is bound but never listens, so the kernel hands it no connections.
    """
    sock = _bound_reuseport(host.strip("[]") or "::", port)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _bound_reuseport(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with SO_REUSEPORT; "::" falls back to 0.0.0.0 on a
    machine without IPv6 (gRPC does the same when it binds "[::]")."""
    candidates = [host, "0.0.0.0"] if host == "::" else [host]
    for index, name in enumerate(candidates):
        family, _, _, _, address = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)[0]
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            if index + 1 < len(candidates):
                continue
            raise
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(address)
        except OSError:
            sock.close()
            if index + 1 < len(candidates):
                continue
            raise
        return sock
    raise OSError(f"cannot reserve {host}:{port}")  # pragma: no cover - the loop returns or raises


def _orphaned_at_birth(parent: int) -> bool:
    """Sets the parent-death signal, then whether the parent died before it was set: a
    supervisor SIGKILLed just after forking a replacement left that worker serving on with
    parent 1 (issue 27), since a signal asked for after the parent's death never comes."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() != parent


def _worker_main(
    config: ServerConfig, index: int, lost: LostSlots, beats: Heartbeats | None, parent: int
) -> int:
    """Runs in a forked worker: multiprocess metrics, then the ordinary serving loop. The stop
    signals are still blocked from the fork (``Supervisor._spawn``), so one sent before the
    handlers below are reset waits for them instead of running the parent's handler here."""
    os.setpgid(0, 0)
    if _orphaned_at_birth(parent):
        return 0
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's forwarding handler is not ours
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    from grpc_health.v1 import health
    from kassign.server.observe.calllog import (
        CallLog,
        ConsumerCallLog,
        ConsumerObservers,
        Observers,
    )
    from kassign.server.observe.consumer_metrics import ConsumerMetrics
    from kassign.server.observe.load_source_metrics import LoadSourceMetrics
    from kassign.server.observe.prometheus import (
        AssignmentMetrics,
        GrpcMetrics,
        LoadMetrics,
        MetricsInterceptor,
    )
    from kassign.server.observe.shadow_observer import (
        ConsumerShadowObserver,
        ShadowMetrics,
        ShadowObserver,
    )
    from prometheus_client import CollectorRegistry, values

    # Whatever imported prometheus_client first, this process writes to the shared files.
    values.ValueClass = values.MultiProcessValue()
    registry = CollectorRegistry()  # never exposed: the parent reads the files
    shadow = ShadowMetrics(registry)  # issue 26: both rooms' shadow calls
    observer = Observers((AssignmentMetrics(registry), CallLog(), ShadowObserver(shadow)))
    consumer_observer = ConsumerObservers(
        (ConsumerMetrics(registry), ConsumerCallLog(), ConsumerShadowObserver(shadow))
    )
    grpc_metrics = GrpcMetrics(registry)
    grpc_metrics.initialise((SERVICE_NAME, CONSUMER_SERVICE_NAME))
    load_metrics = LoadMetrics(registry)
    load_metrics.initialise((SERVICE_NAME, CONSUMER_SERVICE_NAME))
    source_metrics = LoadSourceMetrics(registry) if config.load_source is not None else None
    health_servicer = health.HealthServicer()
    readiness = Readiness(health_servicer)
    report_lost_slots(lost, health_servicer)
    log.info("worker %d (pid %d) starting", index, os.getpid())
    on_started: Callable[[], object] = lambda: None
    if beats is not None:
        probe_path = Path(os.environ[MULTIPROC_ENV]) / f"probe-{os.getpid()}.sock"
        config = replace(config, probe_path=probe_path)
        on_started = partial(keep_probing, beats, index, probe_path, readiness)
    run_process(
        config,
        observer=observer,
        consumer_observer=consumer_observer,
        interceptors=(MetricsInterceptor(grpc_metrics),),
        health_servicer=health_servicer,
        load_observer=load_metrics,
        readiness=readiness,
        on_started=on_started,
        load_source_observer=source_metrics,
    )
    return 0


def _fork_worker(
    config: ServerConfig,
    index: int,
    lost: LostSlots,
    metrics: WSGIServer | None = None,
    beats: Heartbeats | None = None,
) -> int:
    """A worker process; ``metrics`` is the parent's endpoint, which a worker would otherwise
    keep listening (and the port taken) after the parent."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        if metrics is not None:
            metrics.socket.close()
        code = _worker_main(config, index, lost, beats, parent)
    except BaseException:
        log.exception("worker %d failed", index)
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _start_metrics_server(
    multiproc_dir: str, host: str, port: int, pool: Supervisor
) -> WSGIServer | None:
    from kassign.server.observe.pool_metrics import PoolCollector
    from kassign.server.observe.prometheus import serve_metrics
    from kassign.server.version import version
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    if port < 0:
        return None
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=multiproc_dir)
    registry.register(PoolCollector(pool, version=version()))
    try:
        server = serve_metrics(registry, port=port, host=host)
    except OSError as exc:  # a service whose alerts cannot see it is not started quietly
        raise MetricsUnavailable(
            exc.errno,
            f"the metrics endpoint cannot bind {host}:{port} ({exc.strerror or exc}); choose"
            " another --metrics-port (0 picks a free one) or --metrics-host, or -1 to serve"
            " without metrics",
        ) from exc
    log.info("metrics on http://%s:%d/metrics", host, server.server_port)
    return server


def metrics_host_for(host: str) -> str:
    """Where ``/metrics`` binds when ``--metrics-host`` is not given: the gRPC ``host``, so
    ``--host 127.0.0.1`` keeps both private; its wildcard ``[::]`` becomes ``0.0.0.0`` (every
    IPv4 address, as before: an IPv6 socket fails on hosts without IPv6)."""
    name = host.strip("[]")
    return "0.0.0.0" if name in ("", "::", "0.0.0.0") else name


def _mark_dead(pid: int, multiproc_dir: str) -> None:
    """Its gauges go; its counters and histograms stay in the totals."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid, multiproc_dir)


def serve_workers(
    config: ServerConfig,
    *,
    workers: int,
    metrics_port: int,
    metrics_host: str | None = None,
    join: bool = False,
    worker_timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> int:
    """Serve with ``workers`` processes until SIGTERM/SIGINT; 0 when every worker exited cleanly.

    ``metrics_port`` -1 turns the metrics endpoint off; 0 picks a free port; one that cannot be
    bound raises ``MetricsUnavailable`` before any worker starts. ``metrics_host`` None: follow
    ``config.host`` (``metrics_host_for``). ``join``: share a port another ``kassign serve``
    already serves (``SO_REUSEPORT``); otherwise that is refused. ``worker_timeout`` seconds
    without an answer to its own probe and a worker is killed and replaced
    (``kassign.server.runtime.heartbeat``); 0 turns that off.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if not join:
        check_port_free(config.host, config.port)
    multiproc_dir = tempfile.mkdtemp(prefix="kassign-metrics-")
    os.environ[MULTIPROC_ENV] = multiproc_dir
    supervisor: Supervisor | None = None
    metrics = None
    try:
        with reserve_port(config.host, config.port) as port:
            worker_config = replace(config, port=port, reuse_port=True)
            lost = LostSlots(workers)
            beats = Heartbeats(workers) if worker_timeout > 0 else None
            supervisor = Supervisor(
                fork=lambda index: _fork_worker(worker_config, index, lost, metrics, beats),
                on_exit=lambda pid: _mark_dead(pid, multiproc_dir),
                on_lost=lost.lose,
            )
            # Before the workers: a port that cannot be bound stops start-up, and every worker
            # closes the endpoint's socket it inherits (``_fork_worker``).
            metrics = _start_metrics_server(
                multiproc_dir,
                metrics_host_for(config.host) if metrics_host is None else metrics_host,
                metrics_port,
                supervisor,
            )
            supervisor.install_signal_handlers()
            supervisor.start(workers)
            log.info("kassign: %d worker(s) on port %d", workers, port)
            if beats is not None:
                Watchdog(beats, supervisor, timeout=worker_timeout).run()
            failed = supervisor.wait()
    finally:
        if supervisor is not None:
            supervisor.kill_all()
        if metrics is not None:
            metrics.shutdown()
        shutil.rmtree(multiproc_dir, ignore_errors=True)
    return 0 if failed == 0 else 1
