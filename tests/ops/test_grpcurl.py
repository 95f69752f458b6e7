"""README.md's grpcurl lines, run as written by the pinned grpcurl (``make grpcurl``) against a
real server: its address in place of ``127.0.0.1:50051``, the ``< FILE`` redirection as stdin.

Issue 27: the README called a ``grpcurl`` nothing installed. Each answer must be the service's:
JSON with the group's clients or members.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ops.serving import ROOT, Served, kassign_serve

GRPCURL = ROOT / ".venv" / "bin" / "grpcurl"
DOCUMENTED_HOST = "127.0.0.1:50051"


def grpcurl_lines(markdown: str) -> list[list[str]]:
    """The grpcurl commands of a Markdown text's ``sh`` blocks, comments dropped."""
    blocks = re.findall(r"^```sh\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines() if "grpcurl" in line]
    commands = [shlex.split(line, comments=True) for line in lines]
    return [argv for argv in commands if argv and Path(argv[0]).name == "grpcurl"]


COMMANDS = grpcurl_lines((ROOT / "README.md").read_text())


def test_the_readme_runs_the_grpcurl_make_installs() -> None:
    assert len(COMMANDS) == 2
    assert {argv[0] for argv in COMMANDS} == {".venv/bin/grpcurl"}
    pinned = re.search(
        r"^GRPCURL_VERSION\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(), re.MULTILINE
    )
    assert (
        pinned is not None and f"v{pinned.group(1).lstrip('v')}" in (ROOT / "README.md").read_text()
    )
    assert "make grpcurl" in (ROOT / "README.md").read_text()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with kassign_serve(tmp_path_factory.mktemp("grpcurl"), workers=1) as server:
        yield server


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[-3].rsplit(".", 1)[-1] for a in COMMANDS])
def test_a_readme_grpcurl_line_gets_the_services_answer(argv: list[str], served: Served) -> None:
    assert GRPCURL.exists(), "make grpcurl builds .venv/bin/grpcurl"
    redirect = argv.index("<")
    args = [served.target if a == DOCUMENTED_HOST else a for a in argv[1:redirect]]
    with (ROOT / argv[redirect + 1]).open("rb") as stdin:
        done = subprocess.run(
            [str(ROOT / argv[0]), *args],
            check=False,
            stdin=stdin,
            capture_output=True,
            timeout=60,
            cwd=ROOT,
        )
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    assert answer.get("clients") or answer.get("members"), answer
