"""``kassign serve`` for a bench: one worker on loopback, started and stopped around a run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

__all__ = ["kassign_serve", "serving_on_loopback"]


@contextmanager
def serving_on_loopback(command: list[str], what: str, log: Path | None = None) -> Iterator[str]:
    """``command`` run with ``--port-file PATH`` added, until it writes its port there;
    yields its target on loopback, and stops it after. Its output goes to ``log`` if given
    (the call log: the server's time of each call), else nowhere."""
    with tempfile.TemporaryDirectory() as work, ExitStack() as files:
        port_file = Path(work) / "port"
        sink = subprocess.DEVNULL if log is None else files.enter_context(log.open("ab"))
        server = subprocess.Popen(
            [*command, "--port-file", str(port_file)],
            stdout=sink,
            stderr=sink,
        )
        try:
            deadline = time.monotonic() + 60
            while not (port_file.exists() and port_file.read_text().strip()):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not start")
                time.sleep(0.1)
            yield f"127.0.0.1:{port_file.read_text().strip()}"
        finally:
            server.terminate()
            server.wait(timeout=30)


@contextmanager
def kassign_serve(log: Path | None = None, journal: Path | None = None) -> Iterator[str]:
    """``kassign serve`` with one worker on loopback, metrics off; yields its target; its
    output (the call log) to ``log`` if given; every request it gets kept under ``journal``
    (``--journal``) if given: the exact requests a plug-in sent, to time apart."""
    kassign = str(Path(sys.executable).parent / "kassign")
    kept = [] if journal is None else ["--journal", str(journal)]
    with serving_on_loopback(
        [kassign, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1"]
        + ["--metrics-port", "-1", *kept],
        "kassign serve",
        log,
    ) as target:
        yield target
