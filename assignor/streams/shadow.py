"""Shadow mode for a Kafka Streams group (issue 26): an answer's figures, and two compared.

Every figure is measured the same way on Kafka's answer and on kassign's, with the definitions
the report already uses (docs/shadow.md): moves by ``moved.moved_counts``, cross-rack reads by
``cross_rack.cross_rack_partitions`` (source partitions only: what a task reads), the load
peak by ``load_plan.measured_figures``. Pure: no clock, no protobuf.
"""

from __future__ import annotations

from collections.abc import Mapping

from kassign.assignor.shadow import Comparison, Figures, differing, spread
from kassign.assignor.streams.cross_rack import cross_rack_partitions
from kassign.assignor.streams.load_plan import measured_figures
from kassign.assignor.streams.model import ApplicationState, KafkaStreamsState, ProcessId, TaskId
from kassign.assignor.streams.moved import moved_counts
from kassign.assignor.streams.result import TaskAssignment

__all__ = ["compare", "figures", "standbys_sharing"]


def figures(state: ApplicationState, assignment: TaskAssignment) -> Figures:
    """``assignment``'s figures on ``state``'s group (clients it leaves out hold nothing)."""
    active_moved, standby_moved = moved_counts(state, assignment)
    held = _held(state, assignment)
    most, least = spread(len(active) + len(standby) for active, standby in held.values())
    peak = measured_figures(state, assignment).peak if state.task_loads.loads else None
    return Figures(
        cross_rack_partitions=cross_rack_partitions(state, assignment, sources_only=True),
        moved=active_moved,
        standbys_moved=standby_moved,
        max_per_member=most,
        min_per_member=least,
        max_load=peak,
        standbys_sharing_rack_or_tag=standbys_sharing(state, assignment),
    )


def compare(
    state: ApplicationState, kafka: TaskAssignment, kassign: TaskAssignment, kafka_assignor: str
) -> Comparison:
    """Kafka's answer against kassign's: both measured, and the clients whose tasks differ."""
    theirs, ours = _held(state, kafka), _held(state, kassign)
    differ = differing(theirs, ours)
    return Comparison(
        kafka_assignor=kafka_assignor,
        kafka=figures(state, kafka),
        kassign=figures(state, kassign),
        same=differ == 0,
        differing_members=differ,
    )


def standbys_sharing(state: ApplicationState, assignment: TaskAssignment) -> int:
    """Standbys on a client that shares its active's client's rack or, with
    ``rack_aware_assignment_tags``, every one of those tags' values (a standby whose task has
    no active, or a client without the rack or the tag, shares nothing)."""
    keys = state.configs.rack_aware_assignment_tags
    active_on: dict[TaskId, ProcessId] = {}
    for target in assignment.assignments:
        active_on.update(dict.fromkeys(target.active, target.process_id))
    count = 0
    for target in assignment.assignments:
        client = state.clients.get(target.process_id)
        for task in target.standby:
            owner = active_on.get(task)
            other = None if owner is None else state.clients.get(owner)
            if client is not None and other is not None and _shares(client, other, keys):
                count += 1
    return count


def _shares(one: KafkaStreamsState, other: KafkaStreamsState, keys: tuple[str, ...]) -> bool:
    if keys:
        return all(
            (value := one.client_tags.get(key)) is not None and value == other.client_tags.get(key)
            for key in keys
        )
    return bool(one.rack_id) and one.rack_id == other.rack_id


def _held(
    state: ApplicationState, assignment: TaskAssignment
) -> Mapping[ProcessId, tuple[frozenset[TaskId], frozenset[TaskId]]]:
    """Every client of the group (and any other the answer names): its actives and standbys."""
    held = dict.fromkeys(state.clients, (frozenset[TaskId](), frozenset[TaskId]()))
    for target in assignment.assignments:
        held[target.process_id] = (frozenset(target.active), frozenset(target.standby))
    return held
