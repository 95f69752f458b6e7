"""Prometheus metrics of the server's load source (``kassign serve --load-source``, issue 25).

- ``kassign_load_source_reads_total{outcome}``: readings calls asked for, by outcome (``ok``,
  ``cached``, ``missing``: some partitions absent from the answer, ``failed``: none, counts
  stood in; ``kassign.server.loads.source``); every outcome exists at 0 from start-up, so an
  alert on ``failed`` sees the first one;
- ``kassign_load_source_partitions_missing_total``: partitions a call wanted and the answer
  lacked, each given the mean of the others' loads.

Only a server with a load source creates them: without one no series says "never failed".
"""

from __future__ import annotations

from kassign.server.loads.source import OUTCOMES
from kassign.server.observe.metric_parts import add
from prometheus_client import CollectorRegistry, Counter

__all__ = ["LoadSourceMetrics"]


class LoadSourceMetrics:
    """The load source's observer (``kassign.server.loads.source.LoadSourceObserver``)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.reads = Counter(
            "kassign_load_source_reads_total",
            "Load source readings asked for by balance LOAD calls without loads, by outcome.",
            ("outcome",),
            registry=registry,
        )
        self.missing = Counter(
            "kassign_load_source_partitions_missing_total",
            "Partitions a call wanted that the load source's answer lacked.",
            registry=registry,
        )
        self._reads = {outcome: self.reads.labels(outcome) for outcome in OUTCOMES}

    def on_read(self, outcome: str, missing: int) -> None:
        self._reads[outcome].inc()
        add(self.missing, missing)
