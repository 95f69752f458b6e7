"""A request journal: every request the server answers, as protobuf-JSON Lines.

Why: ``kassign replay`` reads exactly these files, so production traffic can be re-run under
other settings (docs/pipeline.md). The journal is off unless ``kassign serve --journal DIR``.
Each room has its own directory: ``AssignRequest`` lines in ``DIR`` (what replay reads),
``ConsumerAssignRequest`` lines in ``DIR/consumer`` (``CONSUMER_SUBDIR``), so no reader ever
meets the other room's messages.

- One request per line, in the protobuf JSON mapping (``json_format``), so the files are readable
  and the pipeline needs no custom decoder.
- Each process writes its own files, ``requests-<pid>-<seq>.jsonl``: forked server workers never
  share a file handle, and a lock makes ``record`` safe across the threads of one process.
- A file is rotated before it would pass ``max_file_bytes``; a process keeps at most ``max_files``
  of its own files and deletes its oldest, so each process holds at most
  ``max_file_bytes * max_files`` bytes on disk.
- ``retention`` bounds the whole folder, every process's files, past and present, by age and
  total size (``journal_retention.py``); checked at each rotation and at most once a minute.
  A file of another live worker deleted for size is noticed by that worker within the minute,
  which then starts a new one.
- A Streams request that leaves ``now_ms`` at 0 (the server's clock) is recorded with the clock
  at the call, so each line says when it came (``kassign explain`` orders by it) and a replay
  computes the same follow-up deadlines.
- Every line carries ``journal`` (``JournalStamp``, issue 26: arrival time, server id,
  sequence, group key; ``journal_stamp.py`` says why they order a group's calls across workers
  and restarts); a value the caller sent is replaced. A shadow call's line is written once it
  is answered, stamped at its arrival, with ``shadow.kassign`` and ``shadow.comparison`` filled
  (docs/shadow.md).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from google.protobuf import json_format
from google.protobuf.message import Message
from kassign.server.observe.journal_retention import (
    DEFAULT_RETENTION,
    Retention,
    expired,
    facts_of,
)
from kassign.server.observe.journal_stamp import Stamper

__all__ = [
    "CONSUMER_SUBDIR",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "FILE_GLOB",
    "PRUNE_EVERY_MS",
    "Journal",
    "Retention",
    "request_line",
]

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_FILES = 8
FILE_GLOB = "requests-*.jsonl"
CONSUMER_SUBDIR = "consumer"
PRUNE_EVERY_MS = 60_000
_NAME = re.compile(r"^requests-(?P<pid>\d+)-(?P<seq>\d+)\.jsonl$")


def request_line(request: Message, *, now_ms: int = 0, stamp: Message | None = None) -> bytes:
    """One journal line: the request's protobuf JSON on a single line, newline-terminated;
    ``now_ms`` fills a ``now_ms`` field the request has and leaves at 0; ``stamp`` (a
    ``JournalStamp``) is its ``journal``, whatever the request held there."""
    fields = request.DESCRIPTOR.fields_by_name
    given = any(field.name == "now_ms" for field, _ in request.ListFields())
    fill = bool(now_ms) and "now_ms" in fields and not given
    if not fill and stamp is None:
        text: str = json_format.MessageToJson(request, indent=None, sort_keys=True)
        return text.encode("utf-8") + b"\n"
    data = json_format.MessageToDict(request)
    if fill:
        data[fields["now_ms"].json_name] = str(now_ms)  # int64: a string in the JSON mapping
    if stamp is not None and "journal" in fields:
        data[fields["journal"].json_name] = json_format.MessageToDict(stamp)
    return json.dumps(data, sort_keys=True).encode("utf-8") + b"\n"


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Journal:
    """Appends requests to rotating JSON Lines files under ``directory`` (created if missing).

    Usage::

        journal = Journal("/var/lib/kassign/journal", max_file_bytes=16 << 20, max_files=4)
        journal.record(request)   # from any thread
        journal.close()
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        retention: Retention = DEFAULT_RETENTION,
        clock_ms: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        if max_file_bytes <= 0 or max_files <= 0:
            raise ValueError("max_file_bytes and max_files must be positive")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.retention = retention
        self._clock_ms = clock_ms
        self._stamper = Stamper(clock_ms)
        self._pruned_ms: int | None = None
        self._path: Path | None = None
        self._lock = threading.Lock()
        self._pid = -1
        self._file: IO[bytes] | None = None
        self._size = 0
        self._seq = 0

    def stamp(self, group_key: str) -> Message:
        """A ``JournalStamp`` for a call arriving now (``journal_stamp.py``)."""
        return self._stamper.stamp(group_key)

    def record(self, request: Message, stamp: Message | None = None) -> None:
        """Append one request with its ``stamp`` (taken now when not given: a shadow call is
        stamped on arrival and recorded once answered); rotates first when the line would
        overflow the current file."""
        now_ms = self._clock_ms()
        if stamp is None:
            stamp = self.stamp(getattr(request, "group_id", ""))
        line = request_line(request, now_ms=now_ms, stamp=stamp)
        with self._lock:
            if self._pid != os.getpid():  # first use, or we are a freshly forked worker
                self._start_process()
            if self._pruned_ms is not None and now_ms - self._pruned_ms >= PRUNE_EVERY_MS:
                self._keep_within_retention(now_ms)
            handle = self._file
            if handle is None or (self._size > 0 and self._size + len(line) > self.max_file_bytes):
                handle = self._rotate(now_ms)
            handle.write(line)
            handle.flush()
            self._size += len(line)

    def close(self) -> None:
        with self._lock:
            if self._file is not None and self._pid == os.getpid():
                self._file.close()
            self._file = None

    def files(self) -> list[Path]:
        """This process's journal files, oldest first."""
        return [path for _, path in self._own_files()]

    def _start_process(self) -> None:
        # A handle inherited through fork belongs to the parent: drop it without closing it.
        self._file, self._path, self._pruned_ms = None, None, None
        self._pid = os.getpid()
        own = self._own_files()
        self._seq = own[-1][0] if own else 0

    def _rotate(self, now_ms: int) -> IO[bytes]:
        if self._file is not None:
            self._file.close()
        self._seq += 1
        path = self.directory / f"requests-{self._pid}-{self._seq:06d}.jsonl"
        handle = open(path, "ab")  # noqa: SIM115 - kept open across calls, closed in close()
        self._file, self._path = handle, path
        self._size = path.stat().st_size
        self._prune()
        self._keep_within_retention(now_ms)
        return handle

    def _prune(self) -> None:
        own = self._own_files()
        for _, path in own[: max(0, len(own) - self.max_files)]:
            path.unlink(missing_ok=True)

    def _keep_within_retention(self, now_ms: int) -> None:
        """Delete every process's files past the retention; if ours went (another worker's
        size bound), close it so the next line starts a new file."""
        self._pruned_ms = now_ms
        files = facts_of([p for p in self.directory.glob(FILE_GLOB) if _NAME.match(p.name)])
        for path in expired(files, retention=self.retention, now_ms=now_ms, keep=self._path):
            path.unlink(missing_ok=True)
        if self._file is not None and self._path is not None and not self._path.exists():
            self._file.close()
            self._file = None

    def _own_files(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.directory.glob(FILE_GLOB):
            match = _NAME.match(path.name)
            if match and int(match["pid"]) == self._pid:
                found.append((int(match["seq"]), path))
        return sorted(found)
