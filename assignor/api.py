"""KIP-924's public face: the ``TaskAssignor`` protocol and a registry of assignors by name.

Users add assignors without touching kassign through the entry-point group
``kassign.assignors`` (``name = "package.module:ClassName"``); the two built-ins are registered
under ``high_availability`` and ``sticky``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from assignor.errors import InvalidRequest
from assignor.model import ApplicationState
from assignor.result import TaskAssignment

__all__ = ["ENTRY_POINT_GROUP", "TaskAssignor", "assign", "get_assignor", "register", "registered_names"]

ENTRY_POINT_GROUP = "kassign.assignors"


@runtime_checkable
class TaskAssignor(Protocol):
    """Computes a group's assignment from its read-only state (KIP-924 ``TaskAssignor``).

    An assignor may also define ``on_assignment_computed(application_state, assignment, error)``,
    called after validation with the KIP-924 ``AssignmentError`` of its result.
    """

    def assign(self, application_state: ApplicationState) -> TaskAssignment: ...


_BUILT_INS: dict[str, str] = {
    "high_availability": "assignor.high_availability:HighAvailabilityTaskAssignor",
    "sticky": "assignor.sticky:StickyTaskAssignor",
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
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def registered_names() -> tuple[str, ...]:
    """Every assignor name a request may choose, sorted."""
    return tuple(sorted(set(_BUILT_INS) | set(_entry_point_specs()) | set(_registered)))


def get_assignor(name: str) -> TaskAssignor:
    """A fresh instance of the named assignor; an unknown name is the caller's error."""
    if name in _registered:
        return _registered[name]()
    spec = _BUILT_INS.get(name) or _entry_point_specs().get(name)
    if spec is None:
        known = ", ".join(registered_names())
        raise InvalidRequest(f"unknown assignor {name!r} (known: {known})", field="configs.assignor")
    return _load(spec)()


def assign(application_state: ApplicationState) -> TaskAssignment:
    """Run the assignor the configs name on ``application_state``."""
    return get_assignor(application_state.configs.assignor).assign(application_state)
