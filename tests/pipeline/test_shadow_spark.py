"""``kassign shadow-report --spark`` gives the local command's numbers on the same journals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kassign.cli.main import main

from tests.cli.shadow_journal import T0, write_journal

pytestmark = pytest.mark.slow


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["shadow-report", "--json", *argv]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_spark_summaries_equal_the_local_commands(spark, tmp_path: Path, capsys) -> None:
    """One folder (both rooms) and one file of a second journal, a group and a window: the
    filters run on the workers as they do locally."""
    first = write_journal(tmp_path / "first")
    second = write_journal(tmp_path / "second") / "requests-200-000001.jsonl"
    argv = [str(first), str(second), "--group", "orders", "--group", "payments"]
    window = ["--since", _iso(T0 + 1500)]
    local = _report(capsys, *argv, *window)
    on_spark = _report(capsys, *argv, *window, "--spark", "--master", "local[2]")
    assert on_spark == local
    orders = local["groups"][0]  # type: ignore[index]
    assert (orders["group"], orders["rebalances"], orders["compared"]) == ("orders", 6, 4)
    assert spark.sparkContext._jsc is not None  # the shared session is still up


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()
