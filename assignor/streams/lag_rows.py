"""The lags clients reported, as rows grouped by task: ``lags.CatchUpIndex``'s storage.

Gathered as columns and grouped by one stable sort, so building costs a few C passes over
what was reported, not a dict, a set and a generator per task. ``unbounded``: every client
is caught up (``acceptable_recovery_lag`` at ``Long.MAX_VALUE``); otherwise a row is caught
up when its lag is ``LATEST_OFFSET`` or within ``acceptable_recovery_lag`` (``lags.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import LATEST_OFFSET, TaskId, positions

__all__ = ["NOTHING", "Rows", "reported_rows"]


def _position(tasks: Sequence[TaskId], reported: int) -> Callable[[TaskId], int | None]:
    """Where a reported task sits in ``tasks``: by a dict when the clients reported many
    (a bisection each took about 1 us: 20,000 lags of a 10,000-task group with history
    cost 20 ms), else by ``positions`` (no index for a few)."""
    if reported * 8 >= len(tasks):
        return {task: i for i, task in enumerate(tasks)}.get
    return positions(tasks)


class Rows(NamedTuple):
    """The reported lags as columns, grouped by task (clients ascending within a task)."""

    span: dict[int, tuple[int, int]]
    """Each reported task's rows ``[start, stop)``."""
    clients: list[int]
    lags: list[int]
    caught: list[bool]
    """Whether the row's lag is within ``acceptable_recovery_lag`` (or -2)."""
    row: dict[int, int]
    """The row of ``task * clients + client``."""
    n_caught: dict[int, int]
    """Each reported task's caught-up reporters."""
    min_lag: dict[int, int]
    """Each reported task's least lag (its end-offset sum too when some client did not
    report it)."""


NOTHING = Rows({}, [], [], [], {}, {}, {})


def reported_rows(
    tasks: Sequence[TaskId],
    locals_: Sequence[Mapping[TaskId, int]],
    end: Sequence[int],
    acceptable_recovery_lag: int,
    *,
    unbounded: bool,
) -> Rows:
    """The clients' reported lags gathered as columns and grouped by one stable sort: per
    pair Python (a dict per task, ``is_caught_up`` and a generator per task) took 25 ms of a
    10,000-task next round with 20,000 reported lags (issue 24)."""
    reported = sum(map(len, locals_))
    if not reported:
        return NOTHING
    position = _position(tasks, reported)
    at: list[int | None] = []
    lag_list: list[int] = []
    for client, local in enumerate(locals_):
        if not client % 64:
            checkpoint()
        at += map(position, local)
        lag_list += local.values()
    n_c = len(locals_)
    clients = np.repeat(np.arange(n_c, dtype=np.int64), list(map(len, locals_)))
    lags = _column(lag_list)
    known = [i for i in at if i is not None]
    if len(known) < len(at):  # a task outside ``tasks``: not indexed
        keep = np.array([i is not None for i in at], dtype=bool)
        clients, lags = clients[keep], lags[keep]
        if not known:
            return NOTHING
    task_col = np.array(known, dtype=np.int64)
    order = np.argsort(task_col, kind="stable")  # each task's clients stay ascending
    task_col, clients, lags = task_col[order], clients[order], lags[order]
    starts = np.flatnonzero(np.r_[True, task_col[1:] != task_col[:-1]])
    bounds = np.r_[starts, len(task_col)]
    if unbounded:
        caught = np.ones(len(lags), dtype=bool)
    else:
        caught = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= acceptable_recovery_lag))
    least = np.minimum.reduceat(lags, starts)
    firsts = task_col[starts]
    partial = np.diff(bounds) < n_c  # some client lags by the end-offset sum
    least[partial] = np.minimum(least[partial], _column([end[t] for t in firsts[partial].tolist()]))
    keys, edges = firsts.tolist(), bounds.tolist()
    n_caught = np.add.reduceat(caught.astype(np.int64), starts).tolist()
    return Rows(
        span=dict(zip(keys, pairwise(edges), strict=False)),
        clients=clients.tolist(),
        lags=lags.tolist(),
        caught=caught.tolist(),
        row=dict(zip((task_col * n_c + clients).tolist(), range(len(task_col)), strict=True)),
        n_caught=dict(zip(keys, n_caught, strict=True)),
        min_lag=dict(zip(keys, least.tolist(), strict=True)),
    )


def _column(values: list[int]) -> npt.NDArray[Any]:
    """Lags as int64, or as Python ints when one is past a long (an offset sum below -3
    makes end minus it exceed ``Long.MAX_VALUE``): the same comparisons either way."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)
