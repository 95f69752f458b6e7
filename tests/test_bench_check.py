"""bench/check.py: a line more than 1.5x worse than its record fails, one within passes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    """bench/ is a folder of scripts, not a package: load check.py by path."""
    spec = importlib.util.spec_from_file_location("bench_check", ROOT / "bench" / "check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_check"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


check = _load()


@pytest.mark.parametrize(("factor", "ok"), [(1.4, True), (1.5, True), (1.6, False), (0.5, True)])
def test_a_line_fails_only_beyond_the_tolerance(factor: float, ok: bool) -> None:
    (verdict,) = check.compare(
        [check.Line("10000x1000 min_traffic", 4.0 * factor)], {"10000x1000 min_traffic": 4.0}
    )
    assert verdict.ok is ok
    assert verdict.worse == pytest.approx(factor)


def test_a_line_without_a_record_fails_and_a_record_without_a_line_is_not_judged() -> None:
    verdicts = check.compare([check.Line("new", 1.0)], {"skipped size": 2.0})
    assert [(v.name, v.ok, v.recorded) for v in verdicts] == [("new", False, None)]


def test_records_round_trip_and_the_check_exits_by_its_verdicts(tmp_path: Path) -> None:
    lines = [check.Line("a", 2.0, "reference"), check.Line("b", 3.0, "its solve")]
    assert check.run_check("demo", lambda: lines, record=True, folder=tmp_path) == 0
    assert check.load_records("demo", tmp_path) == {"a": 2.0, "b": 3.0}
    within = [check.Line("a", 2.8), check.Line("b", 3.1)]
    assert check.run_check("demo", lambda: within, record=False, folder=tmp_path) == 0
    beyond = [check.Line("a", 3.2), check.Line("b", 3.1)]
    assert check.run_check("demo", lambda: beyond, record=False, folder=tmp_path) == 1


def test_a_line_slow_once_is_measured_again_and_passes_on_its_best(tmp_path: Path) -> None:
    check.write_records("demo", [check.Line("a", 2.0)], tmp_path)
    runs = iter([[check.Line("a", 3.4)], [check.Line("a", 2.2)]])
    assert check.run_check("demo", lambda: next(runs), record=False, folder=tmp_path) == 0
    assert check.best_of([[check.Line("a", 3.0)], [check.Line("a", 2.0)]]) == [check.Line("a", 2.0)]


def test_lines_are_divided_by_the_lower_of_the_reference_before_and_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    references = iter([0.5, 0.25])
    monkeypatch.setattr(check, "best_cpu", lambda run, repeats: next(references))
    monkeypatch.setattr(check.gc, "freeze", lambda: None)  # the test process keeps its collector
    monkeypatch.setattr(check.gc, "set_threshold", lambda *limits: None)
    lines = check.per_reference(lambda: [check.Line("b", 1.0), check.Line("a", 0.5)])
    assert lines == [
        check.Line("b", 4.0, "reference workload"),
        check.Line("a", 2.0, "reference workload"),
    ]
