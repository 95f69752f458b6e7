"""A Streams request with balance LOAD and no task loads of its own gets them from the server's
load source (``kassign serve --load-source``, issue 25), between decoding and assigning, as the
consumer room's ``source_loads`` does for partitions.

A task's load is the sum of its source partitions' (``fill.task_loads``; a partition missing
from the answer weighs the mean of the others, and a note says how many). No source, or a
failed reading: every task weighs 1 (the load mode then balances counts per thread), source
empty and a note why. The request's own loads win: the source is not asked.
"""

from __future__ import annotations

from dataclasses import replace

from kassign.assignor.streams.model import Balance, TaskTable
from kassign.server.loads.source import KIND, LoadSource
from kassign.server.streams.decode.request import DecodedRequest

__all__ = ["NO_SOURCE", "wants_source_loads", "with_source_loads"]

NO_SOURCE = (
    "balance LOAD without task loads and no load source (kassign serve --load-source);"
    " balanced by count"
)


def wants_source_loads(decoded: DecodedRequest) -> bool:
    """Balance LOAD, and no task loads in the request."""
    state = decoded.state
    return state.configs.balance is Balance.LOAD and not state.task_loads.loads


def with_source_loads(
    decoded: DecodedRequest, source: LoadSource | None, timeout_s: float | None
) -> DecodedRequest:
    """``decoded`` with the source's task loads, or counts and the note why; ``timeout_s`` is
    the call's time left for it (``None``: no deadline, the source's own timeout)."""
    tasks = decoded.state.tasks
    if not wants_source_loads(decoded) or not isinstance(tasks, TaskTable) or not len(tasks):
        return decoded
    if source is None:
        return replace(decoded, load_notes=(NO_SOURCE,))
    filled = source.task_loads({t: tasks.source_partitions(t) for t in tasks.ids}, timeout_s)
    notes = (filled.note,) if filled.note else ()
    if filled.loads is None:
        return replace(decoded, load_notes=notes)
    given = replace(decoded.state.task_loads, loads=filled.loads)
    state = replace(decoded.state, task_loads=given)
    return replace(decoded, state=state, load_source=KIND, load_notes=notes)
