"""A group's column of values, each distinct object once (issue 24).

A fresh group's thousand members mostly hold one object for a field (one topic list tuple, one
empty claims object: the service's decoder shares them), so a check or a union over the field
is done once per distinct object, found with C loops (``map(id, ...)``), not a Python step per
member.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

__all__ = ["distinct_objects"]

T = TypeVar("T")


def distinct_objects(values: Iterable[T]) -> list[T]:
    """Each distinct object of ``values`` (by identity), in first-seen order: one list ``count``
    when every value is the first's object, else one dict of the ids."""
    listed = list(values)
    ids = list(map(id, listed))
    if not ids or ids.count(ids[0]) == len(ids):
        return listed[:1]
    return list(dict(zip(ids, listed)).values())
