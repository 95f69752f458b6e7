"""A time window over the journal: ``--since`` and ``--until`` as UTC times or as ages.

Why: an operator asks about "the rebalance around 14:05" or "the last hour", not about line 17
of a file; the window narrows the journal's calls (by their recorded time) before ``#N`` picks.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["Window", "add_window_options", "parse_time", "window_of", "window_text"]

_AGE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h|d)$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass(frozen=True, slots=True)
class Window:
    """Calls recorded at ``since_ms`` or later and before ``until_ms`` (epoch ms; None: open)."""

    since_ms: int | None = None
    until_ms: int | None = None

    def __bool__(self) -> bool:
        return self.since_ms is not None or self.until_ms is not None

    def holds(self, time_ms: int) -> bool:
        """Whether a call at ``time_ms`` is inside; one with no recorded time (0) never is."""
        return (
            time_ms > 0
            and (self.since_ms is None or time_ms >= self.since_ms)
            and (self.until_ms is None or time_ms < self.until_ms)
        )


def parse_time(text: str, *, now_ms: int) -> int:
    """Epoch ms of an ISO 8601 time (no offset: UTC) or of an age before ``now_ms`` (``90m``,
    ``2h``, ``1d``; units ms, s, m, h, d)."""
    age = _AGE.match(text.strip())
    if age is not None:
        return now_ms - round(float(age["n"]) * _UNIT_MS[age["unit"]])
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an ISO 8601 time (2026-11-27T14:05:00Z) nor an age (90m, 2h, 1d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return round(when.timestamp() * 1000)


def add_window_options(parser: argparse.ArgumentParser, which: str) -> None:
    """``--since`` and ``--until`` on ``parser``; ``which`` names what they keep, e.g. ``in a
    journal, only calls recorded``."""
    parser.add_argument(
        "--since",
        metavar="TIME",
        help=f"{which} at TIME or later: ISO 8601 (UTC unless it says otherwise) or an age such"
        " as 90m, 2h, 1d",
    )
    parser.add_argument("--until", metavar="TIME", help=f"{which} before TIME")


def window_of(since: str | None, until: str | None) -> Window:
    """The window ``--since`` and ``--until`` name, ages read against now; raises
    ``argparse.ArgumentTypeError`` for a time that is neither form."""
    now_ms = time.time_ns() // 1_000_000
    return Window(
        since_ms=None if since is None else parse_time(since, now_ms=now_ms),
        until_ms=None if until is None else parse_time(until, now_ms=now_ms),
    )


def window_text(window: Window) -> str:
    """The window as a person reads it, UTC."""
    from kassign.cli.table import deadline_text

    since = deadline_text(window.since_ms) if window.since_ms is not None else "the start"
    until = deadline_text(window.until_ms) if window.until_ms is not None else "now"
    return f"[{since}, {until})"
