"""``kassign serve``'s per-request limit options reach the server's ``RequestLimits``; ``kassign
assign`` takes them too, and its refusals name them."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from kassign.cli.limit_options import local_limits
from kassign.cli.main import build_parser, main
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


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_local_refusal_names_what_assign_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: ``kassign assign`` refused past a limit naming ``kassign serve``'s option."""
    for argv, option in (
        (["small-three-clients.json", "--max-members", "1"], "--max-members"),
        (["consumer/rack-aware-range.json", "--kind", "consumer", "--max-string-bytes", "2"], None),
    ):
        code = main(["assign", str(EXAMPLES / argv[0]), *argv[1:]])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "over kassign assign's limit (" in err and " N raises it)" in err, err
        assert option is None or f"({option} N raises it)" in err
        assert "server" not in err


def test_assign_takes_the_limit_options_but_not_the_message_size() -> None:
    args = build_parser().parse_args(["assign", "-", "--max-tasks", "5"])
    limits = local_limits(args)
    assert limits.tasks == 5 and limits.members == DEFAULT_LIMITS.members
    assert limits.answer_bytes > 2**40  # nothing is sent
