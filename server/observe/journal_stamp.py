"""Where a journal line sits among a group's rebalances (issue 26): ``JournalStamp``.

Lines are ordered by ``received_unix_ms``, then ``server_id``, then ``sequence``
(docs/shadow.md, *Ordering*). Why that order holds across workers and restarts:

- ``received_unix_ms`` is the wall clock when the call arrived, never earlier than the last
  stamp of the same journal in the same process (a clock stepped back does not reorder one
  process's calls); calls of one group follow each other (Kafka's coordinator runs one
  rebalance of a group at a time), so across processes and hosts the clock orders them to
  within its skew.
- ``server_id`` is host, pid and the time this process first stamped: a restarted process, or
  a new worker given a recycled pid, gets another id, so two processes never share one.
- ``sequence`` counts the calls this process's journal of the room stamped before: within a
  process it is the arrival order, whatever the clock says.

A ``Stamper`` per journal (one per room), reset in a forked child (the pid changes), behind a
lock (stamps come from the server's threads); the server id is the process's, shared.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable

from kassign.v1 import common_pb2

__all__ = ["Stamper", "server_id"]

_lock = threading.Lock()
_process: tuple[int, str] = (-1, "")


def server_id(now_ms: int) -> str:
    """``HOST/PID/START_MS`` of this process, START_MS the first time it was asked for here."""
    global _process
    with _lock:
        if _process[0] != os.getpid():
            _process = (os.getpid(), f"{socket.gethostname()}/{os.getpid()}/{now_ms}")
        return _process[1]


class Stamper:
    """One journal's stamps: its sequence and its clock's floor, per process."""

    def __init__(self, clock_ms: Callable[[], int]) -> None:
        self._clock_ms = clock_ms
        self._lock = threading.Lock()
        self._pid = -1
        self._sequence = 0
        self._last_ms = 0

    def stamp(self, group_key: str) -> common_pb2.JournalStamp:
        """This call's stamp: now (never before this journal's last in this process), the
        process's id, the sequence number; ``group_key`` the request's group id."""
        now = self._clock_ms()
        with self._lock:
            if self._pid != os.getpid():
                self._pid, self._sequence, self._last_ms = os.getpid(), 0, 0
            self._last_ms = max(self._last_ms, now)
            sequence, self._sequence = self._sequence, self._sequence + 1
            received = self._last_ms
        return common_pb2.JournalStamp(
            received_unix_ms=received,
            server_id=server_id(now),
            sequence=sequence,
            group_key=group_key,
        )
