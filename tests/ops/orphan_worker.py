"""``python -m tests.ops.orphan_worker PORT PID_FILE``: a supervisor that dies just after forking.

It forks one worker as ``kassign serve`` does (``_fork_worker``) and exits at once, while the
worker is held right after the fork until its parent is gone: the moment a supervisor SIGKILLed
just after forking a replacement leaves that replacement in (issue 27). The worker writes its pid
to ``PID_FILE``; the test then expects it gone, not serving ``PORT`` with parent 1.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from kassign.server.runtime import workers
from kassign.server.runtime.app import ServerConfig
from kassign.server.runtime.slots import LostSlots


class _HeldUntilOrphaned:
    """In the place of the parent's metrics server, whose socket a new worker closes first
    thing: closing it here waits until the worker's parent has died."""

    def __init__(self, pid_file: Path) -> None:
        self.socket = self
        self._pid_file = pid_file

    def close(self) -> None:
        parent = os.getppid()
        self._pid_file.write_text(str(os.getpid()))
        while os.getppid() == parent:
            time.sleep(0.01)


def main(port: int, pid_file: Path) -> None:
    os.environ[workers.MULTIPROC_ENV] = tempfile.mkdtemp(prefix="kassign-orphan-")
    config = ServerConfig(host="127.0.0.1", port=port, reuse_port=True, grace_seconds=1)
    workers._fork_worker(config, 0, LostSlots(1), _HeldUntilOrphaned(pid_file))  # type: ignore[arg-type]
    os._exit(0)  # a SIGKILL's way out: no cleanup, no waiting for the worker


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
