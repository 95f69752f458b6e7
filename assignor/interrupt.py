"""Stopping a computation whose caller is gone, from inside its long loops.

The library knows nothing of calls or deadlines: a caller that may lose interest runs the work
inside ``checked(check)``, and the long loops call ``checkpoint()`` between steps. ``check``
raises (an ``errors.Interrupted``, so ``api.run`` lets it through as it is) when the work should
stop; results never depend on it, it only decides whether there are any.

``checkpoint()`` costs a context-variable read when nobody checks and a clock read otherwise:
``check`` itself runs at most once per ``every`` seconds, so a loop of millions of short steps
can call it on each. The state is context-local, so calls on other threads never see each
other's checks (as ``kassign.assignor.timing``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["CHECK_EVERY_SECONDS", "checked", "checkpoint"]

CHECK_EVERY_SECONDS = 0.02
"""How often ``check`` runs at most: the delay between a caller leaving and the work stopping."""


class _Throttled:
    """``check`` at most once per ``every`` seconds, the first time at the first checkpoint."""

    __slots__ = ("_check", "_every", "_next")

    def __init__(self, check: Callable[[], None], every: float) -> None:
        self._check = check
        self._every = every
        self._next = 0.0

    def __call__(self) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self._every
            self._check()


_current: ContextVar[_Throttled | None] = ContextVar("kassign_interrupt", default=None)


@contextmanager
def checked(check: Callable[[], None], *, every: float = CHECK_EVERY_SECONDS) -> Iterator[None]:
    """Run the block with ``check`` behind every ``checkpoint()`` inside it."""
    token = _current.set(_Throttled(check, every))
    try:
        yield
    finally:
        _current.reset(token)


def checkpoint() -> None:
    """Between two steps of a long loop: raises whatever the caller's check raises."""
    throttled = _current.get()
    if throttled is not None:
        throttled()
