"""Every snapshotted answer is byte-identical to the recorded one (see ``record.py``)."""

from __future__ import annotations

from tests.snapshots.record import digests, read_digests


def test_answers_match_the_recorded_digests() -> None:
    recorded = read_digests()
    now = digests()
    assert len(recorded) > 200
    changed = sorted(n for n in now.keys() | recorded.keys() if now.get(n) != recorded.get(n))
    assert changed == [], "answers changed; `python -m tests.snapshots.record` lists them"
