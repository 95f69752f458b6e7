"""Which journal files to delete: older than an age, or past a total size, oldest first.

Why: each process bounds its own files (``Journal``'s ``max_files``), but a restarted server's
workers have new pids, so the files of every earlier process stayed forever. Retention is over
the whole folder, every process's files alike, the way Kafka's ``log.retention.hours`` and
``log.retention.bytes`` bound a partition: oldest file first (by its last write, then name).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_RETENTION", "FileFacts", "Retention", "expired", "facts_of"]


@dataclass(frozen=True, slots=True)
class Retention:
    """How long and how much the journal keeps; ``None``: no bound of that kind."""

    max_age_ms: int | None = 168 * 3600 * 1000
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_age_ms", "max_bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"journal retention {name} must be positive or None, not {value}")


DEFAULT_RETENTION = Retention()
"""Seven days, no total size bound (Kafka's ``log.retention.hours=168``, ``bytes=-1``)."""


@dataclass(frozen=True, slots=True)
class FileFacts:
    """One journal file as retention sees it."""

    path: Path
    mtime_ms: int
    size: int


def facts_of(paths: list[Path]) -> list[FileFacts]:
    """Each path's last write and size; one deleted meanwhile (by another worker) is left out."""
    found = []
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        found.append(FileFacts(path, stat.st_mtime_ns // 1_000_000, stat.st_size))
    return found


def expired(
    files: list[FileFacts], *, retention: Retention, now_ms: int, keep: Path | None
) -> list[Path]:
    """The files to delete, oldest first: past ``max_age_ms``, then the oldest left while the
    total passes ``max_bytes``. ``keep`` (the caller's open file) is never chosen, and counts."""
    ordered = sorted(files, key=lambda f: (f.mtime_ms, f.path.name))
    doomed: list[Path] = []
    total = sum(f.size for f in ordered)
    for facts in ordered:
        if facts.path == keep:
            continue
        too_old = (
            retention.max_age_ms is not None and now_ms - facts.mtime_ms > retention.max_age_ms
        )
        too_big = retention.max_bytes is not None and total > retention.max_bytes
        if not (too_old or too_big):
            continue
        doomed.append(facts.path)
        total -= facts.size
    return doomed
