"""Wall-clock time spent in named parts of an assignment, for metrics only.

Results never depend on a clock. This lets the caller that times a whole ``assign`` call (the
server's metrics) learn how much of it one part took, such as the KIP-925 rack optimisation,
without threading timings through every signature or into the deterministic ``TaskAssignment``.
The accumulator is context-local, so concurrent calls on other threads never mix their figures.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

__all__ = ["RACK_OPTIMISATION", "measure", "timed"]

RACK_OPTIMISATION = "rack_optimisation"

_P = ParamSpec("_P")
_T = TypeVar("_T")
_spent: ContextVar[dict[str, float] | None] = ContextVar("kassign_spent", default=None)


@contextmanager
def measure() -> Iterator[dict[str, float]]:
    """Collect, for the code run inside, the seconds each ``timed`` part took (summed per part)."""
    spent: dict[str, float] = {}
    token = _spent.set(spent)
    try:
        yield spent
    finally:
        _spent.reset(token)


def timed(part: str) -> Callable[[Callable[_P, _T]], Callable[_P, _T]]:
    """Decorate a function so its time counts towards ``part`` inside a ``measure()`` block."""

    def decorate(fn: Callable[_P, _T]) -> Callable[_P, _T]:
        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            spent = _spent.get()
            if spent is None:
                return fn(*args, **kwargs)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[part] = spent.get(part, 0.0) + time.perf_counter() - start

        return wrapper

    return decorate
