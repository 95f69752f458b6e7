"""``kassign_load_source_reads_total{outcome}`` and the partitions missing, on a private registry."""

from __future__ import annotations

from kassign.server.observe.load_source_metrics import LoadSourceMetrics
from prometheus_client import CollectorRegistry


def test_each_outcome_exists_at_zero_and_counts_its_readings() -> None:
    registry = CollectorRegistry()
    metrics = LoadSourceMetrics(registry)

    def reads(outcome: str) -> float | None:
        return registry.get_sample_value("kassign_load_source_reads_total", {"outcome": outcome})

    assert [reads(o) for o in ("ok", "cached", "missing", "failed")] == [0.0] * 4
    metrics.on_read("ok", 0)
    metrics.on_read("missing", 3)
    metrics.on_read("missing", 2)
    metrics.on_read("failed", 0)
    assert [reads(o) for o in ("ok", "cached", "missing", "failed")] == [1.0, 0.0, 2.0, 1.0]
    missing = registry.get_sample_value("kassign_load_source_partitions_missing_total")
    assert missing == 5.0
