"""Every snapshotted answer is byte-identical to the recorded one (see ``record.py``)."""

from __future__ import annotations

from kassign.v1 import assignment_pb2 as pb

from tests.snapshots.corpus import cases
from tests.snapshots.record import digests, read_digests, respond


def test_answers_match_the_recorded_digests() -> None:
    recorded = read_digests()
    now = digests()
    assert len(recorded) > 200
    changed = sorted(n for n in now.keys() | recorded.keys() if now.get(n) != recorded.get(n))
    assert changed == [], "answers changed; `python -m tests.snapshots.record` lists them"


def test_the_rack_status_value_says_what_the_deprecated_string_says() -> None:
    """``rack_optimisation`` == lower-case ``rack_status`` name, then ": reason" if any."""
    seen: set[int] = set()
    for _, request in cases():
        response = respond(request)
        if isinstance(response, str):
            continue
        report = response.report
        assert report.rack_status != pb.RACK_OPTIMISATION_UNSPECIFIED
        name = pb.RackOptimisation.Name(report.rack_status).removeprefix("RACK_OPTIMISATION_")
        rebuilt = name.lower() + (f": {report.rack_reason}" if report.rack_reason else "")
        assert report.rack_optimisation == rebuilt
        seen.add(report.rack_status)
    assert seen >= {
        pb.RACK_OPTIMISATION_OFF,
        pb.RACK_OPTIMISATION_DISABLED,
        pb.RACK_OPTIMISATION_OPTIMAL,
    }
