"""Pure per-row work of the jobs: one request -> replay rows, one group id -> simulation rows.

Why apart from Spark: these functions are the jobs' logic, tested without a SparkSession; the
Spark modules only move serialized requests and group ids to them and rows back.

Neither function raises for bad input: a request that cannot be parsed or decoded, or an assignor
that fails, becomes rows whose ``error`` column says why (one per configuration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from google.protobuf import json_format
from kassign.assignor.streams.model import LATEST_OFFSET
from kassign.assignor.streams.result import TaskAssignment
from kassign.pipeline.events import Event, apply_event
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.grid import Configuration, apply
from kassign.pipeline.group import Group, to_state
from kassign.pipeline.measures import MEASURE_COLUMNS, Measures, assign_and_measure, failed
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "REPLAY_COLUMNS",
    "SIMULATE_COLUMNS",
    "after_rebalance",
    "parse_request",
    "replay_rows",
    "simulate_rows",
]

_CONFIG_COLUMNS = (
    "config",
    "config_assignor",
    "config_rack_strategy",
    "config_traffic_cost",
    "config_non_overlap_cost",
    "config_standbys",
)
REPLAY_COLUMNS = ("request_index", "group_id", *_CONFIG_COLUMNS, *MEASURE_COLUMNS, "notes")
SIMULATE_COLUMNS = (
    "group_id",
    "group_index",
    "seed",
    *_CONFIG_COLUMNS,
    "phase",
    "event",
    "round",
    *MEASURE_COLUMNS,
    "rebalances_to_converge",
    "converged",
)


def parse_request(payload: bytes, fmt: str) -> pb.AssignRequest:
    """A request from serialized protobuf (``fmt`` "proto") or one protobuf-JSON line ("json")."""
    request = pb.AssignRequest()
    if fmt == "json":
        json_format.Parse(payload.decode("utf-8"), request)
    else:
        request.ParseFromString(payload)
    return request


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def replay_rows(
    index: int, payload: bytes | None, fmt: str, grid: Sequence[Configuration]
) -> list[dict[str, Any]]:
    """One row per configuration for the request at ``index`` of the input."""
    from kassign.server.streams.decode.request import (
        decode_request,  # late: the decoding helper's module
    )

    group_id, notes = "", ""
    try:
        if payload is None:
            raise ValueError("empty request")
        request = parse_request(payload, fmt)
        group_id = request.group_id
        decoded = decode_request(request, now_ms=request.now_ms)
        notes = "; ".join(decoded.notes)
    except Exception as exc:  # noqa: BLE001 - a bad request is an error row, not a failed job
        bad = failed(_error_text(exc))
        return [_replay_row(index, group_id, c, bad, notes) for c in grid]
    rows = []
    for configuration in grid:
        state = replace(decoded.state, configs=apply(configuration, decoded.state.configs))
        _, measures = assign_and_measure(state)
        rows.append(_replay_row(index, group_id, configuration, measures, notes))
    return rows


def _replay_row(
    index: int, group_id: str, configuration: Configuration, measures: Measures, notes: str
) -> dict[str, Any]:
    return {
        "request_index": index,
        "group_id": group_id,
        **configuration.columns(),
        **measures.row(),
        "notes": notes,
    }


def after_rebalance(group: Group, assignment: TaskAssignment) -> Group:
    """The group at its next rebalance: assigned actives run, assigned standbys have caught up.

    As in a convergence test, every warm-up or standby finishes restoring before the follow-up
    rebalance; stores a client no longer hosts stay on its disk at the offset they reached.
    """
    end = {t.id: t.changelog_end_offset_sum for t in group.tasks if t.stateful}
    placed = assignment.by_process()
    clients = []
    for client in group.clients:
        sums = {
            t: (end[t] if s == LATEST_OFFSET else s)
            for t, s in client.offset_sums.items()
            if t in end
        }
        target = placed.get(client.process_id)
        if target is not None:
            sums.update({t: end[t] for t in target.standby if t in end})
            sums.update({t: LATEST_OFFSET for t in target.active})
        clients.append(replace(client, offset_sums=sums))
    interval = group.configs.probing_rebalance_interval_ms
    return replace(group, clients=tuple(clients), now_ms=group.now_ms + interval)


def _converge(group: Group, rounds: int) -> tuple[Group, list[Measures], bool]:
    """Rebalance until no follow-up is asked for (converged) or ``rounds`` rebalances ran."""
    history: list[Measures] = []
    for _ in range(rounds):
        try:
            state = to_state(group)
        except Exception as exc:  # noqa: BLE001 - a group the model rejects is an error row
            history.append(failed(_error_text(exc)))
            return group, history, False
        assignment, measures = assign_and_measure(state)
        history.append(measures)
        if assignment is None or measures.error:
            return group, history, False
        group = after_rebalance(group, assignment)
        if not measures.followup:
            return group, history, True
    return group, history, False


def simulate_rows(
    *,
    seed: int,
    index: int,
    spec: GroupSpec,
    grid: Sequence[Configuration],
    events: Sequence[Event],
    rounds: int,
) -> list[dict[str, Any]]:
    """Every round of every phase of group ``index``, under each configuration.

    Phase 0 converges the freshly generated group; phase k applies event k to the group as
    phase k-1 left it, then converges again.
    """
    base = random_group(spec, seed=seed, index=index)
    rows = []
    for configuration in grid:
        group = replace(base, configs=apply(configuration, base.configs))
        for phase, event in enumerate((None, *events)):
            if event is not None:
                group = apply_event(group, event, spec=spec, phase=phase)
            group, history, converged = _converge(group, rounds)
            for number, measures in enumerate(history, start=1):
                rows.append(
                    {
                        "group_id": base.group_id,
                        "group_index": index,
                        "seed": seed,
                        **configuration.columns(),
                        "phase": phase,
                        "event": "initial" if event is None else event.label,
                        "round": number,
                        **measures.row(),
                        "rebalances_to_converge": len(history) if converged else -1,
                        "converged": converged,
                    }
                )
    return rows
