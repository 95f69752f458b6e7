"""KIP-924 API: named assignors (built-in, registered, entry points) run, validated, never crash."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from kassign.assignor.errors import InvalidAssignment, InvalidRequest
from kassign.assignor.streams import api
from kassign.assignor.streams.model import ApplicationState
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.assignor.streams.sticky import StickyTaskAssignor
from kassign.assignor.streams.validate import AssignmentError

from tests.assignor.builders import client, pid, state, tasks

T00, T01 = tasks("0_0 0_1")

PLUGIN = '''
"""A user's assignors, installed through the kassign.assignors entry-point group."""
from kassign.assignor.streams.result import KafkaStreamsAssignment, task_assignment

CALLS = []


class EverythingOnFirst:
    def assign(self, application_state):
        first, *rest = application_state.clients
        return task_assignment(
            [KafkaStreamsAssignment.of(first, application_state.tasks)]
            + [KafkaStreamsAssignment.of(p) for p in rest]
        )

    def on_assignment_computed(self, application_state, assignment, error):
        CALLS.append((len(application_state.clients), error.name))


class ForgetsClients:
    def assign(self, application_state):
        first = next(iter(application_state.clients))
        return task_assignment([KafkaStreamsAssignment.of(first, application_state.tasks)])

    def on_assignment_computed(self, application_state, assignment, error):
        CALLS.append(("forgets", error.name))


class Raises:
    def assign(self, application_state):
        raise ZeroDivisionError("no clients to divide by")


class ReturnsGarbage:
    def assign(self, application_state):
        return {"not": "an assignment"}


class LoudListener(EverythingOnFirst):
    def on_assignment_computed(self, application_state, assignment, error):
        raise RuntimeError("listener down")
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A real installed distribution: a module and a dist-info with entry_points.txt on sys.path."""
    (tmp_path / "kassign_user_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "kassign_user_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kassign-user-plugin\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[kassign.assignors]\n"
        "everything_on_first = kassign_user_plugin:EverythingOnFirst\n"
        "forgets_clients = kassign_user_plugin:ForgetsClients\n"
        "raises = kassign_user_plugin:Raises\n"
        "returns_garbage = kassign_user_plugin:ReturnsGarbage\n"
        "loud_listener = kassign_user_plugin:LoudListener\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield __import__("kassign_user_plugin")
    sys.modules.pop("kassign_user_plugin", None)


def _app(name: str) -> ApplicationState:
    return state([client(1), client(2)], [T00, T01], assignor=name)


def test_built_ins_are_listed_without_plugins() -> None:
    assert {"high_availability", "sticky"} <= set(api.registered_names())
    assert isinstance(api.get_assignor("sticky"), StickyTaskAssignor)


def test_entry_points_extend_the_registry(plugin) -> None:  # type: ignore[no-untyped-def]
    names = api.registered_names()
    assert list(names) == sorted(names)
    assert {"everything_on_first", "raises", "sticky"} <= set(names)
    assert type(api.get_assignor("everything_on_first")).__name__ == "EverythingOnFirst"


def test_unknown_name_is_the_request_s_fault() -> None:
    with pytest.raises(InvalidRequest) as info:
        api.run(_app("no_such_assignor"))
    assert info.value.field == "configs.assignor"
    assert "sticky" in str(info.value)


def test_built_in_runs_and_validates() -> None:
    result, error = api.run(_app("sticky"))
    assert error is AssignmentError.NONE
    assert result == StickyTaskAssignor().assign(_app("sticky"))


def test_custom_assignor_runs_and_hears_the_verdict(plugin) -> None:  # type: ignore[no-untyped-def]
    result, error = api.run(_app("everything_on_first"))
    assert error is AssignmentError.NONE
    assert result.by_process()[pid(1)].active == (T00, T01)
    assert plugin.CALLS[-1] == (2, "NONE")


def test_invalid_result_comes_back_with_its_code(plugin) -> None:  # type: ignore[no-untyped-def]
    result, error = api.run(_app("forgets_clients"))
    assert error is AssignmentError.MISSING_PROCESS_ID
    assert any(str(pid(2)) in note for note in result.diagnostics.notes)
    assert plugin.CALLS[-1] == ("forgets", "MISSING_PROCESS_ID")


def test_an_assignor_that_raises_is_reported_not_crashed(plugin) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidAssignment) as info:
        api.run(_app("raises"))
    assert "ZeroDivisionError" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_garbage_is_reported(plugin) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidAssignment, match="not a TaskAssignment"):
        api.run(_app("returns_garbage"))


def test_a_failing_listener_keeps_the_assignment(plugin) -> None:  # type: ignore[no-untyped-def]
    result, error = api.run(_app("loud_listener"))
    assert error is AssignmentError.NONE
    assert result.by_process()[pid(1)].active == (T00, T01)
    assert any("listener down" in note for note in result.diagnostics.notes)


def test_register_overrides_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    class Idle:
        def assign(self, application_state: ApplicationState) -> TaskAssignment:
            return task_assignment(KafkaStreamsAssignment.of(p) for p in application_state.clients)

    monkeypatch.setattr(api, "_registered", {})
    api.register("sticky", Idle)
    result, error = api.run(_app("sticky"))
    assert error is AssignmentError.ACTIVE_TASK_UNASSIGNED
    assert all(not a.active for a in result.assignments)
