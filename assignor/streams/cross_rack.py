"""Partitions read across racks on a final assignment: the one count the pipeline's measures and
shadow mode's figures share (KIP-925's traffic, measured on the answer rather than solved for).
"""

from __future__ import annotations

from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.result import TaskAssignment

__all__ = ["cross_rack_partitions"]


def cross_rack_partitions(
    state: ApplicationState, assignment: TaskAssignment, *, sources_only: bool = False
) -> int:
    """Partitions an active task reads (``sources_only``) or reads and writes, with no replica
    in its client's rack; partitions or clients whose rack is unknown are not counted."""
    count = 0
    for target in assignment.assignments:
        client = state.clients.get(target.process_id)
        rack = client.rack_id if client is not None else None
        if not rack:
            continue
        for task in target.active:
            info = state.tasks.get(task)
            if info is not None:
                count += sum(
                    1
                    for tp in info.topic_partitions
                    if tp.rack_ids
                    and rack not in tp.rack_ids
                    and (tp.is_source or not sources_only)
                )
    return count
