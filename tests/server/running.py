"""A real kassign server for tests: in this process on 127.0.0.1 port 0, or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import grpc
from kassign.server.consumer.servicer import ConsumerObserver
from kassign.server.runtime.app import ServerConfig, create_server
from kassign.server.streams.servicer import AssignObserver

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def in_process(
    observer: AssignObserver | None = None,
    *,
    consumer_observer: ConsumerObserver | None = None,
    **config: object,
) -> Iterator[tuple[grpc.Server, str]]:
    """A started server and its ``127.0.0.1:<port>`` target; stopped on exit."""
    server, port = create_server(
        ServerConfig(host="127.0.0.1", port=0, **config),  # type: ignore[arg-type]
        observer=observer,
        consumer_observer=consumer_observer,
    )
    server.start()
    try:
        yield server, f"127.0.0.1:{port}"
    finally:
        server.stop(None).wait()


@contextmanager
def subprocess_server(
    tmp_path: Path, *args: str, log: Path | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``python -m kassign.cli serve --port 0`` in a child process; the port comes from --port-file.

    ``log``: the server's stderr (its log) goes to that file, to read once the context exits.
    """
    port_file = tmp_path / "port"
    stderr: int | BinaryIO = subprocess.PIPE if log is None else log.open("wb")
    paths = [str(ROOT), str(ROOT / "gen"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kassign.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--workers",
            "1",
            "--metrics-port",
            "-1",
            *args,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"server did not start: {(proc.communicate(timeout=5)[1] or b'').decode()}"
                )
            time.sleep(0.05)
        yield proc, f"127.0.0.1:{port_file.read_text().strip()}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
        if not isinstance(stderr, int):
            stderr.close()
