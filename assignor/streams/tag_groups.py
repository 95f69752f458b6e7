"""Clients grouped by their tag values, the numbers standby placement takes (``standby``).

The compiled placement (``kassign_native.standby_placement``) bars a tag value for a task by
barring every client group with that value: clients sharing all their values are one group,
so a bar is decided once per group, not per client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TagGroups"]


@dataclass(frozen=True, slots=True)
class TagGroups:
    """``group[rank]`` is a client's group; ``values[g]`` the value numbers of group ``g`` per
    key (``-1``: unset); ``sizes[g]`` how many clients it has."""

    group: tuple[int, ...]
    values: tuple[tuple[int, ...], ...]
    sizes: tuple[int, ...]

    @staticmethod
    def of(client_values: Sequence[tuple[str | None, ...]], keys: int) -> TagGroups:
        """Groups of clients (by rank) sharing every tag value, labels in sorted order."""
        labels = sorted(set(client_values), key=lambda g: tuple((v is None, v or "") for v in g))
        number = {label: n for n, label in enumerate(labels)}
        group = tuple(number[v] for v in client_values)
        sizes = [0] * len(labels)
        for g in group:
            sizes[g] += 1
        ids: list[dict[str, int]] = [{} for _ in range(keys)]
        values = tuple(
            tuple(-1 if v is None else ids[k].setdefault(v, len(ids[k])) for k, v in enumerate(g))
            for g in labels
        )
        return TagGroups(group, values, tuple(sizes))
