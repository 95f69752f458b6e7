"""Every userData's offset sums checked as one set of columns (``offset_sums.joined_columns``
and ``checked_groups``, issue 24) against each report checked alone by the walk's rule
(``split_known``): the same kept pairs in task order, counts and named tasks, or a fault."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import TaskId
from kassign.kafka.offset_sum_columns import sum_columns
from kassign.server.streams.decode.offset_sums import checked_groups, joined_columns, split_known
from kassign.server.streams.decode.topology import decode_topology, task_columns

from tests.server.streams.decode.builders import request, task

KNOWN = decode_topology(
    task_columns(
        request(tasks=[task(s, p) for s in range(2) for p in range(6)]).SerializeToString()
    )
)
ROW = st.tuples(st.integers(-1, 3), st.integers(-1, 8), st.sampled_from([-4, -3, -2, 0, 7, 2**40]))


def _raw(rows: list[tuple[int, int, int]]) -> bytes:
    """One report as the compiled read lays it out (``sum_columns``' bytes)."""
    sub, part, sums = (list(c) for c in zip(*rows)) if rows else ([], [], [])
    return (
        np.array(sub, np.int32).tobytes()
        + np.array(part, np.int32).tobytes()
        + np.array(sums, np.int64).tobytes()
    )


def _alone(rows: list[tuple[int, int, int]], known: bool) -> object:
    """The rule, one report: a fault is ``None``; else the pairs sorted and cut."""
    tasks = [(s, p) for s, p, _ in rows]
    faulty = any(s < 0 or p < 0 or v < -3 or v == -1 for s, p, v in rows)
    if faulty or len(set(tasks)) != len(tasks):
        return None
    pairs = sorted((TaskId(s, p), v) for s, p, v in rows)
    kept = split_known(pairs, KNOWN.interned() if known else None)
    return kept.kept, kept.ignored, kept.ignored_first


@settings(max_examples=80)
@given(st.lists(st.lists(ROW, max_size=6), max_size=5), st.booleans())
def test_reports_checked_together_as_each_alone(
    reports: list[list[tuple[int, int, int]]], known: bool
) -> None:
    raws = [_raw(r) for r in reports]
    sub, part, sums, sizes = joined_columns(raws)
    alone = [sum_columns(raw) for raw in raws]
    assert sizes == [len(r) for r in reports]
    assert sums.tolist() == [v for c in alone for v in c.offset_sums]
    assert sub.tolist() == [v for c in alone for v in c.subtopologies]
    assert part.tolist() == [v for c in alone for v in c.partitions]
    checked = checked_groups(sub, part, sums, sizes, KNOWN.interned() if known else None)
    each = [_alone(r, known) for r in reports]
    if checked is None:
        assert None in each
        return
    together = list(zip(checked.kept, checked.ignored, checked.ignored_first, strict=True))
    assert together == each
    assert [p for kept in checked.kept for p in kept] == list(
        zip(checked.tasks, checked.sums.tolist(), strict=True)
    )
    assert checked.stops == np.cumsum([len(k) for k in checked.kept]).tolist()
    if known and checked.rows is not None:
        assert [KNOWN.tasks.ids[r] for r in checked.rows.tolist()] == checked.tasks
