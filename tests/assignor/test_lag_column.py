"""The group's lags as one column (``lags.lag_column``, ``client_state.read_reports``, issue
24) against the rules they replace a Python step per task of: ``lag_for`` per task, the
reported and ``LATEST_OFFSET`` tasks as sets, lags only of stateful tasks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.client_state import NO_SUMS, read_reports, report_columns
from kassign.assignor.streams.lags import lag_column, lag_for
from kassign.assignor.streams.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId

LONG = 2**63 - 1
checked_sums = st.one_of(
    st.integers(0, LONG), st.sampled_from([0, 1, LONG, LATEST_OFFSET, UNKNOWN_OFFSET_SUM])
)
ends = st.one_of(st.integers(0, LONG), st.sampled_from([0, 1, LONG]))


@settings(max_examples=40)
@given(st.lists(st.tuples(checked_sums, ends), max_size=30))
def test_the_int64_column_is_lag_for_of_each_row(rows: list[tuple[int, int]]) -> None:
    """The decoder's checked sums (-2, -3 or not negative) against any end: no row wraps."""
    sums = np.array([s for s, _ in rows], dtype=np.int64)
    end = np.array([e for _, e in rows], dtype=np.int64)
    assert lag_column(sums, end).tolist() == [lag_for(s, e) for s, e in rows]


@settings(max_examples=30)
@given(st.lists(st.tuples(st.integers(-(2**70), 2**70), ends), max_size=30))
def test_python_ints_are_lag_for_of_each_row(rows: list[tuple[int, int]]) -> None:
    """A library caller's sums past a long or below -3 take the same steps on Python ints."""
    sums = np.array([s for s, _ in rows], dtype=object)
    end = np.array([e for _, e in rows], dtype=object)
    assert list(lag_column(sums, end)) == [lag_for(s, e) for s, e in rows]


report = st.dictionaries(
    st.integers(0, 12).map(lambda p: TaskId(0, p)),
    st.one_of(st.integers(-(2**64), 2**64), checked_sums),
    max_size=8,
)


@settings(max_examples=60)
@given(
    st.lists(report, max_size=6),
    st.dictionaries(
        st.integers(0, 15).map(lambda p: TaskId(0, p)),
        st.one_of(ends, st.integers(0, 2**66)),
        max_size=12,
    ),
)
def test_each_read_is_its_reports_sets_and_lags(
    reports: list[dict[TaskId, int]], end_sums: dict[TaskId, int]
) -> None:
    """Reports read together, each as read alone by the rule; tasks without an end-offset
    sum (stateless, or not the topology's) are reported but have no lag."""
    pairs = [tuple(r.items()) for r in reports]
    reads = read_reports(report_columns(pairs, end_sums))
    assert len(reads) == len(reports)
    for sums, read in zip(reports, reads, strict=True):
        if not sums:
            assert read is NO_SUMS
            continue
        assert dict(read.sums) == sums
        assert read.reported == set(sums)
        assert read.latest == {t for t, s in sums.items() if s == LATEST_OFFSET}
        local = {t: lag_for(s, end_sums[t]) for t, s in sums.items() if t in end_sums}
        assert read.local == local


def test_an_end_past_a_long_reads_as_python_ints() -> None:
    task, other = TaskId(0, 1), TaskId(0, 2)
    reads = read_reports(report_columns([((task, 5), (other, -2))], {task: 2**64, other: 9}))
    assert reads[0].local == {task: 2**64 - 5, other: LATEST_OFFSET}
