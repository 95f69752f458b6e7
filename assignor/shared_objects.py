"""A group's column of values, each distinct object once (issue 24).

A fresh group's thousand members mostly hold one object for a field (one topic list tuple, one
empty claims object: the service's decoder shares them), so a check or a union over the field
is done once per distinct object, found with C loops (``map(id, ...)``), not a Python step per
member.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["distinct_objects", "per_object"]

T = TypeVar("T")
U = TypeVar("U")


def distinct_objects(values: Iterable[T]) -> list[T]:
    """Each distinct object of ``values`` (by identity), in first-seen order: one list ``count``
    when every value is the first's object, else one dict of the ids."""
    listed = list(values)
    ids = list(map(id, listed))
    if not ids or ids.count(ids[0]) == len(ids):
        return listed[:1]
    return list(dict(zip(ids, listed)).values())


def per_object(values: Iterable[T], make: Callable[[T], U]) -> list[U]:
    """``make`` of each of ``values``, called once per distinct object (by identity), in
    first-seen order: a group's members mostly share one topic list, made into a set or
    numbered once for the group."""
    listed = list(values)  # holds every value, so no id is reused while read
    made = {id(value): make(value) for value in distinct_objects(listed)}
    return list(map(made.__getitem__, map(id, listed)))
