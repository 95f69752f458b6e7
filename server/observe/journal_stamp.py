"""Where a journal line sits among a group's rebalances (issue 26): ``JournalStamp``.

Lines are ordered by ``received_unix_ms``, then ``server_id``, then ``sequence``
(docs/shadow.md, *Ordering*). Why that order holds across workers and restarts:

- ``received_unix_ms`` is the wall clock when the call arrived, never earlier than the last
  stamp of the same process (a clock stepped back does not reorder one process's calls);
  calls of one group follow each other (Kafka's coordinator runs one rebalance of a group at a
  time), so across processes and hosts the clock orders them to within its skew.
- ``server_id`` is host, pid and the time this process first stamped: a restarted process, or
  a new worker given a recycled pid, gets another id, so two processes never share one.
- ``sequence`` counts the calls this process stamped before (both rooms): within a process it
  is the arrival order, whatever the clock says.

One counter per process, reset in a forked child (the pid changes), behind a lock (stamps come
from the server's threads).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable

from kassign.v1 import common_pb2

__all__ = ["stamp"]

_lock = threading.Lock()
_pid = -1
_server_id = ""
_sequence = 0
_last_ms = 0


def stamp(group_key: str, clock_ms: Callable[[], int]) -> common_pb2.JournalStamp:
    """This call's stamp: now (per ``clock_ms``, never before this process's last), this
    process's id, its sequence number; ``group_key`` the request's group id."""
    global _pid, _server_id, _sequence, _last_ms
    now = clock_ms()
    with _lock:
        if _pid != os.getpid():
            _pid, _sequence, _last_ms = os.getpid(), 0, 0
            _server_id = f"{socket.gethostname()}/{_pid}/{now}"
        _last_ms = max(_last_ms, now)
        sequence, _sequence = _sequence, _sequence + 1
        return common_pb2.JournalStamp(
            received_unix_ms=_last_ms,
            server_id=_server_id,
            sequence=sequence,
            group_key=group_key,
        )
