"""What both rooms' load-source tests share: the source they name and the readings that leave
a call balancing by count, each with the note it must carry."""

from __future__ import annotations

from kassign.server.loads.prometheus import LoadReading

SOURCE = "prometheus://prom:9090"


def counts_stand_in(no_source: str) -> list[tuple[LoadReading | None, str]]:
    """No source configured (the room's ``no_source`` note), and a source that timed out."""
    return [
        (None, no_source),
        (
            LoadReading({}, "timed out after 0.5 s"),
            f"load source {SOURCE}: timed out after 0.5 s; balanced by count",
        ),
    ]
