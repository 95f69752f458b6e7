"""The documented ghz command lines, run by the real ghz (``make ghz``) against a real server.

Every ``ghz`` line of the ``sh`` blocks of README.md and bench/ghz/README.md runs as written,
with the changes README.md's "Load testing with ghz" states: the test's server address in place
of ``127.0.0.1:50051`` (appended where the line takes its host from the config file), every
``--total`` lowered to at most ``TOTAL_CAP`` (``--total TOTAL_CAP`` added where the line has
none) and ``-O json``. ghz's report must show every call OK; the server's call log (one line per
assignment) shows what it answered, which ghz does not print.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ops.serving import DATA, ROOT, Served, kassign_serve, load_script

GHZ = ROOT / ".venv" / "bin" / "ghz"
CONFIG = "bench/ghz/ghz.json"
DOCUMENTED_HOST = "127.0.0.1:50051"
TOTAL_CAP = 6
DOCS = ("README.md", "bench/ghz/README.md")
GROUPS = {f"bench-{g.name}": g for g in load_script("bench/ghz/make_data.py").GROUPS}

needs_ghz = pytest.mark.skipif(not GHZ.exists(), reason="make ghz installs .venv/bin/ghz")


def ghz_commands(markdown: str) -> list[list[str]]:
    """The ghz commands of a Markdown text's ``sh`` blocks, continuation lines joined."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            argv = shlex.split(line, comments=True)
            if argv and Path(argv[0]).name == "ghz":
                commands.append(argv)
    return commands


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def as_tested(argv: list[str], target: str) -> list[str]:
    """A documented command as this test runs it (the rules in the module docstring)."""
    args = [target if a == DOCUMENTED_HOST else a for a in argv[1:]]
    total = _flag(args, "--total")
    if total is None:
        args += ["--total", str(TOTAL_CAP)]
    else:
        args[args.index("--total") + 1] = str(min(int(total), TOTAL_CAP))
    if "-O" in args:
        args[args.index("-O") + 1] = "json"
    else:
        args += ["-O", "json"]
    if target not in args:
        args.append(target)
    return [str(GHZ), *args]


def _setting(argv: list[str], flag: str, key: str) -> str | None:
    """A flag's value, else the config file's (flags after ``--config`` override it)."""
    value = _flag(argv, flag)
    if value is None and "--config" in argv:
        value = json.loads((ROOT / argv[argv.index("--config") + 1]).read_text()).get(key)
    return value


COMMANDS: dict[tuple[str, ...], str] = {}  # ghz's arguments -> where they are first documented
for doc in DOCS:
    for number, command in enumerate(ghz_commands((ROOT / doc).read_text()), 1):
        COMMANDS.setdefault(tuple(command[1:]), f"{doc}#{number}")


@pytest.mark.parametrize("doc", DOCS)
def test_the_documented_lines_cover_every_request_file_and_the_config(doc: str) -> None:
    commands = ghz_commands((ROOT / doc).read_text())
    assert all(DOCUMENTED_HOST in c or "--config" in c for c in commands)
    assert "--config" in {a for c in commands for a in c}
    data_files = {_setting(c, "-D", "data-file") for c in commands}
    assert {f"bench/ghz/data/{p.name}" for p in DATA.glob("*.json")} <= data_files
    calls = {_setting(c, "--call", "call") for c in commands}
    assert calls == {"grpc.health.v1.Health.Check", "kassign.v1.TaskAssignmentService.Assign"}
    assert json.loads((ROOT / CONFIG).read_text())["host"] == DOCUMENTED_HOST


def test_the_rules_applied_to_a_config_line() -> None:
    argv = ["ghz", "--config", CONFIG, "-O", "summary"]
    assert as_tested(argv, "127.0.0.1:1")[1:] == [
        *["--config", CONFIG, "-O", "json", "--total", str(TOTAL_CAP), "127.0.0.1:1"]
    ]
    argv = ["ghz", "--total", "5000", DOCUMENTED_HOST]
    assert as_tested(argv, "h:2")[1:] == ["--total", str(TOTAL_CAP), "h:2", "-O", "json"]


@needs_ghz
def test_make_installed_the_pinned_version_the_readme_names() -> None:
    pinned = re.search(r"^GHZ_VERSION\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert pinned is not None
    version = subprocess.run(
        [str(GHZ), "--version"], capture_output=True, text=True, check=True, timeout=30
    )
    assert (version.stdout + version.stderr).strip() == pinned.group(1)
    assert f"[ghz](https://ghz.sh) {pinned.group(1)}" in (ROOT / "README.md").read_text()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with kassign_serve(tmp_path_factory.mktemp("ghz"), workers=2) as server:
        yield server


def _call_lines(served: Served) -> list[str]:
    return re.findall(r"kassign\.calls: (assigned group .*)", served.log.read_text())


@needs_ghz
@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS.values()))
def test_a_documented_ghz_line_gets_ok_answers(served: Served, command: tuple[str, ...]) -> None:
    argv = as_tested(["ghz", *command], served.target)
    before = len(_call_lines(served))
    result = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{shlex.join(argv)}\n{result.stderr}"
    report: dict[str, Any] = json.loads(result.stdout)
    count = min(int(_setting(list(command), "--total", "total") or TOTAL_CAP), TOTAL_CAP)
    assert report["options"]["host"] == served.target
    assert report["count"] == count
    assert report["statusCodeDistribution"] == {"OK": count}
    assert report["errorDistribution"] == {}
    assert [d["status"] for d in report["details"]] == ["OK"] * count
    latencies = [d["latency"] for d in report["latencyDistribution"]]
    assert 0 < report["fastest"] <= latencies[0] and latencies == sorted(latencies)
    assert latencies[-1] <= report["slowest"] and report["rps"] > 0

    data_file = _setting(list(command), "-D", "data-file")
    if data_file is None:  # the health check: kassign assigns nothing
        assert report["options"]["call"] == "grpc.health.v1.Health.Check"
        assert len(_call_lines(served)) == before
        return
    group_id = json.loads((ROOT / data_file).read_text())["group_id"]
    group = GROUPS[group_id]
    size = (
        f"assigned group '{group_id}' (high_availability): {group.tasks} tasks, "
        f"{group.clients} clients, {group.clients * group.threads} members;"
    )
    deadline = time.monotonic() + 10  # a worker logs its line as it answers
    while len(new := _call_lines(served)[before:]) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(new) == count and all(line.startswith(size) for line in new), new
    assert not any("invalid assignment" in line for line in new), new
