"""The lags clients reported, as rows grouped by task: ``lags.CatchUpIndex``'s storage.

Gathered as columns and grouped by one stable sort, so building costs a few C passes over
what was reported, not a dict, a set and a generator per task; kept as numpy columns, so the
index answers a whole group's questions (who may move, how many are caught up) in a few
passes too (issue 24). ``unbounded``: every client is caught up (``acceptable_recovery_lag``
at ``Long.MAX_VALUE``); otherwise a row is caught up when its lag is ``LATEST_OFFSET`` or
within ``acceptable_recovery_lag`` (``lags.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import LATEST_OFFSET, TaskId, positions

__all__ = ["BoolArray", "IntArray", "Rows", "reported_rows", "verdicts"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _positions(tasks: Sequence[TaskId], keys: Iterable[TaskId], reported: int) -> IntArray:
    """Where each reported task sits in ``tasks``, -1 where it is not there: by a dict when
    the clients reported many (a bisection each took about 1 us: 20,000 lags of a
    10,000-task group with history cost 20 ms), else by ``positions`` (no index for a few)."""
    if reported * 8 >= len(tasks):
        index = dict(zip(tasks, range(len(tasks))))
        return np.fromiter(map(index.get, keys, repeat(-1)), np.int64, reported)
    position = positions(tasks)
    return np.fromiter((-1 if (i := position(k)) is None else i for k in keys), np.int64, reported)


class Rows(NamedTuple):
    """The reported lags as columns, grouped by task (clients ascending within a task), and
    per task of the list the columns every query of a whole group reads."""

    code: IntArray
    """Each row's ``task * clients + client``: ascending, so a pair's row is found by
    ``searchsorted``."""
    clients: IntArray
    lags: npt.NDArray[Any]
    """int64, or Python ints when one is past a long (``_column``)."""
    caught: BoolArray
    """Whether the row's lag is within ``acceptable_recovery_lag`` (or -2)."""
    start: IntArray
    """Per task, its first row (its rows are ``[start, stop)``; none when equal)."""
    stop: IntArray
    counts: IntArray
    """Per task, how many clients are caught up on it, reported or not."""
    least: npt.NDArray[Any]
    """Per task, the least lag of any client (its end-offset sum when some client did not
    report it, or nobody did)."""


def reported_rows(
    tasks: Sequence[TaskId],
    locals_: Sequence[Mapping[TaskId, int]],
    end: IntArray,
    default: BoolArray,
    acceptable_recovery_lag: int,
    *,
    unbounded: bool,
) -> Rows:
    """The clients' reported lags gathered as columns and grouped by one stable sort: per
    pair Python (a dict per task, ``is_caught_up`` and a generator per task) took 25 ms of a
    10,000-task next round with 20,000 reported lags (issue 24). ``default``: per task,
    whether a client that did not report it is caught up (its end-offset sum's verdict)."""
    n_c, n_t = len(locals_), len(tasks)
    sizes = list(map(len, locals_))
    reported = sum(sizes)
    checkpoint()
    if reported:
        at = _positions(tasks, chain.from_iterable(locals_), reported)
        lags = _column(lambda: chain.from_iterable(v.values() for v in locals_), reported)
        clients = np.repeat(np.arange(n_c, dtype=np.int64), sizes)
        keep = at >= 0
        if not keep.all():  # a task outside ``tasks``: not indexed
            at, clients, lags = at[keep], clients[keep], lags[keep]
    else:
        at = clients = np.zeros(0, np.int64)
        lags = np.zeros(0, np.int64)
    checkpoint()
    order = np.argsort(at, kind="stable")  # each task's clients stay ascending
    task_col, clients, lags = at[order], clients[order], lags[order]
    caught = verdicts(lags, acceptable_recovery_lag, unbounded=unbounded)
    span = np.arange(n_t, dtype=np.int64)
    start = np.searchsorted(task_col, span, side="left").astype(np.int64)
    stop = np.searchsorted(task_col, span, side="right").astype(np.int64)
    width = stop - start
    counts = np.where(default, n_c - width, 0).astype(np.int64)
    least: npt.NDArray[Any] = end.astype(lags.dtype)
    if task_col.size:
        starts = np.flatnonzero(np.r_[True, task_col[1:] != task_col[:-1]])
        firsts = task_col[starts]
        counts[firsts] += np.add.reduceat(caught.astype(np.int64), starts)
        low = np.minimum.reduceat(lags, starts)
        partial = width[firsts] < n_c  # some client lags by the end-offset sum
        low[partial] = np.minimum(low[partial], end[firsts[partial]])
        least[firsts] = low
    return Rows(task_col * n_c + clients, clients, lags, caught, start, stop, counts, least)


def verdicts(lags: npt.NDArray[Any], acceptable_recovery_lag: int, *, unbounded: bool) -> BoolArray:
    """``lags.is_caught_up`` of each lag: ``LATEST_OFFSET`` or within the acceptable lag, any
    lag when ``unbounded``."""
    if unbounded:
        return np.ones(len(lags), dtype=bool)
    caught = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= acceptable_recovery_lag))
    return np.asarray(caught, dtype=bool)


def _column(values: Callable[[], Iterable[int]], count: int) -> npt.NDArray[Any]:
    """The ``count`` lags ``values()`` gives, as int64, or as Python ints when one is past a
    long (an offset sum below -3 makes end minus it exceed ``Long.MAX_VALUE``; read again):
    the same comparisons either way."""
    try:
        return np.fromiter(values(), np.int64, count)
    except OverflowError:
        return np.array(list(values()), dtype=object)
