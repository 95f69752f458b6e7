"""The assign phase's column paths against the steps they replace (issue 24, assign-trim).

Each new path reads a column where the old one asked per item; both must give the same
answer on random input: ``_may_lead`` against ``CatchUpIndex.caught_up_pairs``, ``eligible``
and ``previous_codes`` against their former per-task loops (written out here), and
``tag_classes`` in the layout's own order against the same clients looked up by process id.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.ha_exchange import (
    _FREE_ARCS,
    _WIDE,
    _counts,
    _may_lead,
    eligible,
    previous_codes,
)
from kassign.assignor.streams.ha_layout import Layout
from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.rack.problems import tag_classes
from kassign.assignor.streams.tags import one_tag_layout

from tests.assignor.strategies import app_states


def _index(
    ends: list[int], reported: list[dict[int, int]], clients: int, acceptable: int
) -> CatchUpIndex:
    tasks = [TaskId(0, k) for k in range(len(ends))]
    lags = [{tasks[k]: v for k, v in r.items() if k < len(ends)} for r in reported]
    lags += [{} for _ in range(clients - len(lags))]
    return CatchUpIndex(tasks, ends, client_lags=lags, acceptable_recovery_lag=acceptable)


_LAGS = st.lists(st.dictionaries(st.integers(0, 11), st.integers(-3, 300)), max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([0, 50, 100_000]), min_size=1, max_size=12),
    st.one_of(st.just([]), _LAGS),
    st.integers(4, 8),
    st.integers(0, 200),
    st.data(),
)
def test_may_lead_is_caught_up_pairs(
    ends: list[int],
    reported: list[dict[int, int]],
    clients: int,
    acceptable: int,
    data: st.DataObject,
) -> None:
    # a task none or all clients are caught up on is read from the column, the rest asked
    index = _index(ends, reported, clients, acceptable)
    pairs = data.draw(
        st.lists(st.tuples(st.integers(0, clients - 1), st.integers(0, len(ends) - 1)))
    )
    c = np.array([p[0] for p in pairs], np.int64)
    t = np.array([p[1] for p in pairs], np.int64)
    led = _may_lead(index, _counts(index), c, t, clients)
    assert led.tolist() == index.caught_up_pairs(c.tolist(), t.tolist())


def _eligible_per_task(n_c: int, index: CatchUpIndex) -> tuple[list[int], list[int]]:
    """``eligible`` as it was: a step per task."""
    per_task: dict[int, Sequence[int]] = {}
    free = []
    for i, n in enumerate(index.caught_up_counts()):
        if 0 < n <= _WIDE:
            per_task[i] = index.caught_up(i)
        else:
            free.append(i)
    if len(free) * n_c <= _FREE_ARCS:
        for i in free:
            per_task[i] = index.caught_up(i) or range(n_c)
    ordered = sorted(per_task)
    return [i for i in ordered for _ in per_task[i]], [c for i in ordered for c in per_task[i]]


@settings(max_examples=100, deadline=None)
@given(app_states(max_clients=8), st.sampled_from([1, 3, 1_000]))
def test_eligible_and_previous_codes_match_their_loops(state: ApplicationState, scale: int) -> None:
    layout = Layout.of(state)
    index = CatchUpIndex(
        layout.stateful,
        state.end_offset_sums_of(layout.stateful),
        client_lags=[state.clients[c].task_lags for c in layout.clients],
        acceptable_recovery_lag=state.configs.acceptable_recovery_lag,
    )
    n_c = len(layout.clients) * scale  # many clients: the free tasks stay out
    wide = type("Wide", (), {"clients": range(n_c)})()
    for lay in (layout, wide):
        tasks, clients = eligible(lay, index)  # type: ignore[arg-type]
        assert (tasks.tolist(), clients.tolist()) == _eligible_per_task(len(lay.clients), index)
    position = {t: i for i, t in enumerate(layout.stateful)}
    expected = [
        position[t] * len(state.clients) + c
        for c, client in enumerate(state.clients.values())
        for t in client.previous_active_tasks
        if t in position
    ]
    assert previous_codes(state, layout.stateful).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(app_states(max_clients=8))
def test_tag_classes_in_layout_order_match_the_lookup(state: ApplicationState) -> None:
    pids = list(state.clients)
    with one_tag_layout(state):
        fast = tag_classes(state, pids)
        looked_up = tag_classes(state, [UUID(int=p.int) for p in pids])  # equal, not the same
        backwards = tag_classes(state, pids[::-1])  # the same clients in another order
    assert fast[0].tolist() == looked_up[0].tolist()
    assert fast[1].tolist() == looked_up[1].tolist()
    assert fast[1].shape == looked_up[1].shape
    assert backwards[0].tolist() == fast[0][::-1].tolist()
