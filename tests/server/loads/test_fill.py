"""A reading's partition loads as a request's loads: the mean of the known partitions for the
missing ones, counts when the reading has none or only zeros, each told in a note; and the
outcome a source tells its observer."""

from __future__ import annotations

import numpy as np
import pytest
from kassign.server.loads.fill import TopicIndex, task_loads, topic_loads
from kassign.server.loads.prometheus import LoadReading
from kassign.server.loads.source import LoadSource, LoadSourceConfig

SOURCE = "prometheus://prom:9090"
READING = {("a", 0): 30.0, ("a", 1): 10.0, ("b", 0): 2.0, ("other", 0): 99.0}


def test_every_partition_known_gives_its_load_and_no_note() -> None:
    filled = topic_loads(SOURCE, {"a": 2, "b": 1}, TopicIndex.of(READING))
    assert filled.loads == {"a": [30.0, 10.0], "b": [2.0]}
    assert (filled.missing, filled.note) == (0, "")


def test_missing_partitions_get_the_mean_of_the_known_ones() -> None:
    filled = topic_loads(SOURCE, {"a": 3, "b": 2}, TopicIndex.of(READING))
    assert filled.loads == {"a": [30.0, 10.0, 14.0], "b": [2.0, 14.0]}
    assert filled.missing == 2
    assert filled.note == (
        "load source prometheus://prom:9090: 2 of 5 partitions missing from its answer, each"
        " given the mean of the others (14)"
    )


@pytest.mark.parametrize(
    ("reading", "why"),
    [
        ({("other", 0): 1.0}, "none of the group's 3 partitions in its answer"),
        ({("a", 0): 0.0, ("a", 1): 0.0}, "every partition of the group it knows has load 0"),
    ],
)
def test_counts_stand_in_when_the_reading_weighs_nothing(
    reading: dict[tuple[str, int], float], why: str
) -> None:
    filled = topic_loads(SOURCE, {"a": 3}, TopicIndex.of(reading))
    assert filled.loads is None
    assert filled.note == f"load source prometheus://prom:9090: {why}; balanced by count"


def test_a_task_weighs_the_sum_of_its_source_partitions() -> None:
    tasks = {"0_0": [("a", 0), ("b", 0)], "0_1": [("a", 1), ("a", 1)], "1_0": [("c", 0)]}
    filled = task_loads(SOURCE, tasks, READING)
    # c-0 is missing: the mean of a-0, a-1 and b-0 (14); a-1 listed twice counts once
    assert filled.loads == {"0_0": 32.0, "0_1": 10.0, "1_0": 14.0}
    assert filled.missing == 1 and "1 of 4 partitions missing" in filled.note


class Fixed:
    """A reader answering one reading, recording the timeouts it was given."""

    def __init__(self, reading: LoadReading) -> None:
        self.reading = reading
        self.timeouts: list[float | None] = []

    def fetch(self, timeout_s: float | None = None) -> LoadReading:
        self.timeouts.append(timeout_s)
        return self.reading


class Heard:
    def __init__(self) -> None:
        self.reads: list[tuple[str, int]] = []

    def on_read(self, outcome: str, missing: int) -> None:
        self.reads.append((outcome, missing))


@pytest.mark.parametrize(
    ("reading", "topics", "outcome"),
    [
        (LoadReading(READING), {"a": 2}, ("ok", 0)),
        (LoadReading(READING, cached=True), {"a": 2}, ("cached", 0)),
        (LoadReading(READING, cached=True), {"a": 4}, ("missing", 2)),
        (LoadReading({}, "timed out after 0.5 s"), {"a": 2}, ("failed", 0)),
    ],
)
def test_the_source_tells_each_readings_outcome(
    reading: LoadReading, topics: dict[str, int], outcome: tuple[str, int]
) -> None:
    heard, reader = Heard(), Fixed(reading)
    filled = LoadSource(LoadSourceConfig(source=SOURCE), heard, reader=reader).topic_loads(
        topics, 0.2
    )
    assert heard.reads == [outcome] and reader.timeouts == [0.2]
    if outcome[0] == "failed":
        assert filled.loads is None
        assert filled.note == f"load source {SOURCE}: timed out after 0.5 s; balanced by count"


@pytest.mark.parametrize(
    ("fields", "flag"),
    [
        ({"source": "http://prom:9090"}, "--load-source"),
        ({"query": " "}, "--load-query"),
        ({"timeout_s": 0.0}, "--load-timeout-s"),
        ({"ttl_s": -1.0}, "--load-ttl-s"),
    ],
)
def test_a_bad_setting_names_its_flag(fields: dict[str, object], flag: str) -> None:
    with pytest.raises(ValueError, match=flag):
        LoadSourceConfig(**{"source": SOURCE, **fields})  # type: ignore[arg-type]


def test_the_index_reads_a_topics_partitions_by_number_however_sparse() -> None:
    index = TopicIndex.of({("a", 10**12): 5.0, ("a", 1): 2.0, ("b", 0): 1.0})
    row = index.partitions("a", 3)
    assert row[1] == 2.0 and np.isnan(row[[0, 2]]).all()
    assert np.isnan(index.partitions("c", 2)).all() and len(index.partitions("a", 0)) == 0
