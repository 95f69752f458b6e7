"""``kassign serve``'s per-request limit options reach the server's ``RequestLimits``."""

from __future__ import annotations

from dataclasses import fields

from kassign.cli.main import build_parser
from kassign.cli.serve import serve_config
from kassign.server.limits import DEFAULT_LIMITS, LIMIT_OPTIONS, RequestLimits


def _limits(*argv: str) -> RequestLimits:
    return serve_config(build_parser().parse_args(["serve", "--port", "0", *argv])).limits


def test_defaults_are_the_documented_ones() -> None:
    assert _limits() == DEFAULT_LIMITS


def test_each_option_sets_its_limit() -> None:
    for n, f in enumerate(fields(RequestLimits)):
        if f.name == "answer_bytes":  # the largest message: --max-message-mb
            continue
        limits = _limits(LIMIT_OPTIONS[f.name], str(7 + n))
        assert getattr(limits, f.name) == 7 + n
        assert [getattr(limits, g.name) for g in fields(limits) if g is not f] == [
            getattr(DEFAULT_LIMITS, g.name) for g in fields(limits) if g is not f
        ]


def test_every_limit_is_in_the_operations_guide() -> None:
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    for option in LIMIT_OPTIONS.values():
        assert f"`{option}" in guide
