"""KIP-924's public face: the ``TaskAssignor`` protocol and a registry of assignors by name.

Users add assignors without touching kassign through the entry-point group
``kassign.assignors`` (``name = "package.module:ClassName"``); the two built-ins are registered
under ``high_availability`` and ``sticky``.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from dataclasses import replace
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from kassign.assignor.errors import InvalidAssignment, InvalidRequest, KassignError, unknown_name
from kassign.assignor.streams.explain import Explanation, explain
from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.result import Diagnostics, MemberAssignment, TaskAssignment
from kassign.assignor.streams.threads import distribute_tasks
from kassign.assignor.streams.trace import Trace
from kassign.assignor.streams.validate import AssignmentError, validate_with_reason

__all__ = [
    "ENTRY_POINT_GROUP",
    "TaskAssignor",
    "assign",
    "distribute_if_valid",
    "get_assignor",
    "register",
    "registered_names",
    "run",
    "run_explained",
]

ENTRY_POINT_GROUP = "kassign.assignors"


@runtime_checkable
class TaskAssignor(Protocol):
    """Computes a group's assignment from its read-only state (KIP-924 ``TaskAssignor``).

    An assignor may also define ``on_assignment_computed(application_state, assignment, error)``,
    called after validation with the KIP-924 ``AssignmentError`` of its result.
    """

    def assign(self, application_state: ApplicationState) -> TaskAssignment: ...


_BUILT_INS: dict[str, str] = {
    "high_availability": "kassign.assignor.streams.high_availability:HighAvailabilityTaskAssignor",
    "sticky": "kassign.assignor.streams.sticky:StickyTaskAssignor",
}
_registered: dict[str, Callable[[], TaskAssignor]] = {}


def register(name: str, factory: Callable[[], TaskAssignor]) -> None:
    """Register an assignor factory under ``name`` (overrides an entry point of the same name)."""
    _registered[name] = factory


def _load(spec: str) -> Callable[[], TaskAssignor]:
    module_name, _, attr = spec.partition(":")
    factory: Callable[[], TaskAssignor] = getattr(importlib.import_module(module_name), attr)
    return factory


def _entry_point_specs() -> dict[str, str]:
    return dict(_entry_point_specs_on(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _entry_point_specs_on(path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Entry points, looked up once per ``sys.path``: the scan reads every installed
    distribution's metadata (milliseconds), and requests check assignor names on every call."""
    return tuple(sorted((ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP)))


def registered_names() -> tuple[str, ...]:
    """Every assignor name a request may choose, sorted."""
    return tuple(sorted(set(_BUILT_INS) | set(_entry_point_specs()) | set(_registered)))


def get_assignor(name: str) -> TaskAssignor:
    """A fresh instance of the named assignor; an unknown name is the caller's error."""
    if name in _registered:
        return _registered[name]()
    spec = _BUILT_INS.get(name) or _entry_point_specs().get(name)
    if spec is None:
        raise InvalidRequest(
            unknown_name("assignor", name, registered_names()), field="configs.assignor"
        )
    return _load(spec)()


def assign(application_state: ApplicationState) -> TaskAssignment:
    """Run the assignor the configs name on ``application_state``."""
    return get_assignor(application_state.configs.assignor).assign(application_state)


def run_explained(
    application_state: ApplicationState,
) -> tuple[TaskAssignment, AssignmentError, Explanation]:
    """``run``, and why each replica went where it went (``explain.py``).

    The built-in assignors record the rule of each phase as it runs (``assign_explained``); a
    plug-in without that method gets an explanation whose rules are ``UNSPECIFIED``.
    """
    assignor = get_assignor(application_state.configs.assignor)
    traced = getattr(assignor, "assign_explained", None)
    trace = Trace()

    def assign(state: ApplicationState) -> TaskAssignment:
        nonlocal trace
        if traced is None:
            return assignor.assign(state)
        result, trace = traced(state)
        return result  # type: ignore[no-any-return]

    assignment, error = _run(application_state, assignor, assign)
    return assignment, error, explain(application_state, assignment, trace)


def run(application_state: ApplicationState) -> tuple[TaskAssignment, AssignmentError]:
    """Assign with the configured assignor, validate, tell the assignor; never crash on its faults.

    - an unknown assignor name is the request's fault: ``InvalidRequest``;
    - an assignor that raises (anything but a ``KassignError``, which passes as is) or returns
      something other than a ``TaskAssignment`` broke KIP-924: ``InvalidAssignment``, chained;
    - a ``TaskAssignment`` that fails validation comes back with its ``AssignmentError`` (the
      service reports the code; Kafka would reject the assignment);
    - ``on_assignment_computed(application_state, assignment, error)`` is called when defined;
      if it raises, the assignment stands and a note in its diagnostics says so.
    """
    assignor = get_assignor(application_state.configs.assignor)
    return _run(application_state, assignor, assignor.assign)


def _run(
    application_state: ApplicationState,
    assignor: TaskAssignor,
    assign: Callable[[ApplicationState], TaskAssignment],
) -> tuple[TaskAssignment, AssignmentError]:
    name = application_state.configs.assignor
    try:
        result = assign(application_state)
    except KassignError:
        raise
    except Exception as exc:  # a plug-in's fault becomes a typed error
        raise InvalidAssignment(
            None, f"assignor {name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(result, TaskAssignment):
        raise InvalidAssignment(
            None, f"assignor {name!r} returned {type(result).__name__}, not a TaskAssignment"
        )
    error, why = validate_with_reason(application_state, result)
    if error is not AssignmentError.NONE:
        result = replace(result, diagnostics=result.diagnostics.merged(Diagnostics(notes=(why,))))
    return _notify(assignor, application_state, result, error), error


def distribute_if_valid(
    application_state: ApplicationState, assignment: TaskAssignment, error: AssignmentError
) -> tuple[MemberAssignment, ...]:
    """Every consumer's tasks after ``run``; none when validation rejected the assignment.

    The one rule for "assign, then distribute", shared by the servicer and the pipeline: an
    assignment Kafka would reject has nothing valid to hand out to stream threads.
    """
    if error is not AssignmentError.NONE:
        return ()
    return distribute_tasks(application_state, assignment)


def _notify(
    assignor: TaskAssignor, state: ApplicationState, result: TaskAssignment, error: AssignmentError
) -> TaskAssignment:
    callback = getattr(assignor, "on_assignment_computed", None)
    if callback is None:
        return result
    try:
        callback(state, result, error)
    except Exception as exc:  # noqa: BLE001 - a listener's fault must not lose the assignment
        note = f"on_assignment_computed raised {type(exc).__name__}: {exc}"
        return replace(result, diagnostics=result.diagnostics.merged(Diagnostics(notes=(note,))))
    return result
