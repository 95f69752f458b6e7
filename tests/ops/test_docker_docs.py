"""The Docker lines of README.md, docs/operations.md and the Dockerfile agree with docker-compose.yml.

Issue 27: README built ``kassign`` and ran ``docker compose up``, the compose file named its image
``kassign:local`` and told ``docker-compose up --build``. No engine runs here (docs/operations.md,
*Docker*), so the lines cannot be run: each image they name must be the compose file's, and each
compose command the one the compose file tells.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/operations.md", "Dockerfile")


def docker_commands(lines: list[str]) -> list[list[str]]:
    """Every ``docker`` or ``docker-compose`` command in ``lines``, ``&&`` chains split, comments
    and a parenthesised aside dropped."""
    commands = []
    for line in lines:
        for part in line.split("&&"):
            found = re.search(r"\bdocker(-compose)?\s.*", part)
            if found:
                commands.append(shlex.split(found.group(0).split("  #")[0].split("(")[0]))
    return commands


def command_lines(doc: str) -> list[str]:
    """The lines of a document that hold commands: a Markdown file's ``sh`` blocks; the
    Dockerfile's ``# Build:`` and ``# Run:`` comments."""
    text = (ROOT / doc).read_text()
    if doc.endswith(".md"):
        blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
        return [line for block in blocks for line in block.splitlines()]
    return re.findall(r"^# (?:Build|Run):(.*)$", text, re.MULTILINE)


def _compose() -> tuple[str, list[str]]:
    text = (ROOT / "docker-compose.yml").read_text()
    image = YAML(typ="safe").load(text)["services"]["kassign"]["image"]
    told = re.search(r"Start with: (.+)$", text, re.MULTILINE)
    assert told is not None
    return image, shlex.split(told.group(1))


def _image(argv: list[str]) -> str | None:
    """The image a ``docker build -t`` tags or a ``docker run`` runs."""
    if argv[1] == "build":
        return argv[argv.index("-t") + 1]
    if argv[1] == "run":
        return next(a for a in argv[2:] if not a.startswith("-") and not re.match(r"[\d.:]+$", a))
    return None


def test_the_docs_name_the_compose_files_image_and_command() -> None:
    image, compose = _compose()
    seen = {"image": 0, "compose": 0}
    for doc in DOCS:
        for argv in docker_commands(command_lines(doc)):
            if argv[0] == "docker-compose" or argv[1] == "compose":
                assert argv == compose, f"{doc}: {shlex.join(argv)}"
                seen["compose"] += 1
            elif (named := _image(argv)) is not None:
                assert named == image, f"{doc}: {shlex.join(argv)}"
                seen["image"] += 1
    assert seen["image"] >= 4 and seen["compose"] >= 2, seen


def test_the_commands_are_read_as_written() -> None:
    line = "docker build -t kassign:local . && docker run --rm -p 127.0.0.1:1:1 kassign:local  # x"
    assert [_image(a) for a in docker_commands([line])] == ["kassign:local", "kassign:local"]
    assert docker_commands(["  docker compose up --build   (or ...)"]) == [
        ["docker", "compose", "up", "--build"]
    ]
