"""The deployment files: lint checks (as `make lint` runs them), pins, and the Docker build context.

No Docker engine runs here, so the image is never built in tests; these checks catch what can be
caught without one: lint, schema, Prometheus config, dependency pins and the files the build copies.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
DEPLOY_FILES = (
    "Dockerfile",
    "docker-compose.yml",
    "deploy/lint.sh",
    "deploy/prometheus/prometheus.yml",
    "deploy/prometheus/kubernetes-scrape.yml",
    "deploy/prometheus/alerts.yml",
    "deploy/prometheus/alerts.test.yml",
    "deploy/grafana/kassign.json",
    "deploy/k8s/deployment.yaml",
    "deploy/k8s/service.yaml",
    "deploy/k8s/poddisruptionbudget.yaml",
    "deploy/k8s/servicemonitor.yaml",
)


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def _run_lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, VENV_BIN=str(VENV_BIN))
    return subprocess.run(
        ["bash", str(root / "deploy" / "lint.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _copy_deploy_files(target: Path) -> None:
    for name in DEPLOY_FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, target / name)


def test_lint_passes_on_the_committed_files() -> None:
    result = _run_lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all deployment checks passed" in result.stdout


@pytest.mark.parametrize(
    ("name", "old", "new", "culprit"),
    [
        (
            "docker-compose.yml",
            "    stop_signal: SIGTERM\n",
            "    stop_signl: SIGTERM\n",
            "docker-compose config",
        ),
        (
            "deploy/prometheus/prometheus.yml",
            "scrape_interval: 5s",
            "scrape_interval: soon",
            "promtool check config",
        ),
        (
            "Dockerfile",
            "USER 10001:10001\n",
            "USER 10001:10001\nRUN apt-get install curl\n",
            "hadolint",
        ),
    ],
)
def test_lint_fails_loudly_on_a_broken_file(
    tmp_path: Path, name: str, old: str, new: str, culprit: str
) -> None:
    _copy_deploy_files(tmp_path)
    text = (tmp_path / name).read_text()
    assert old in text
    (tmp_path / name).write_text(text.replace(old, new))
    result = _run_lint(tmp_path)
    assert result.returncode != 0
    assert f"FAILED: {culprit}" in result.stderr


BREAKS = [
    (  # valid rules, but the unit tests expect the alert at 5%
        "deploy/prometheus/alerts.yml",
        "            > 0.05\n",
        "            > 0.5\n",
        "promtool test rules",
    ),
    (
        "deploy/grafana/kassign.json",
        '"uid": "kassign",',
        '"uid": "kassign",,',
        "grafana dashboard JSON",
    ),
    (
        "deploy/k8s/deployment.yaml",
        "              service: kassign.workers\n",
        "              name: kassign.workers\n",
        "kubernetes-validate 1.27",
    ),
]
"""Breaks of the operator kit's files, each caught by its own check: one lint run for all (each
check runs whatever failed before it), so each break is shown to be caught by name."""


def test_lint_catches_each_break_of_the_alerts_dashboard_and_manifests(tmp_path: Path) -> None:
    _copy_deploy_files(tmp_path)
    for name, old, new, _culprit in BREAKS:
        text = (tmp_path / name).read_text()
        assert text.count(old) == 1, (name, old)
        (tmp_path / name).write_text(text.replace(old, new))
    result = _run_lint(tmp_path)
    assert result.returncode != 0
    failed = {line.removeprefix("lint: FAILED: ") for line in result.stderr.splitlines()}
    assert {culprit for *_, culprit in BREAKS} <= failed, result.stderr
    assert "lint: FAILED: hadolint Dockerfile" not in result.stderr


def test_compose_ports_are_published_on_loopback_only() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    ports = re.findall(r'^\s+- "([^"]+:\d+:\d+)"$', text, flags=re.MULTILINE)
    assert ports, "no published ports found"
    assert all(p.startswith("127.0.0.1:") for p in ports), ports


@pytest.mark.parametrize("name", ["requirements-runtime.txt", "requirements-build.txt"])
def test_image_requirements_use_the_lock_pins(name: str) -> None:
    lock = _pins(ROOT / "requirements.lock")
    pins = _pins(ROOT / "deploy" / name)
    assert pins
    assert {n: v for n, v in pins.items() if lock.get(n) != v} == {}


def test_runtime_requirements_are_closed_and_leave_out_spark() -> None:
    """Installed with --no-deps, so every dependency of a runtime package must be listed."""
    pins = _pins(ROOT / "deploy" / "requirements-runtime.txt")
    assert "pyspark" not in pins
    missing = set()
    for name in sorted(pins):
        for spec in metadata.requires(name) or ():
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            if canonicalize_name(req.name) not in pins:
                missing.add(f"{name} -> {req.name}")
    assert missing == set()


def test_runtime_requirements_cover_what_the_server_imports() -> None:
    """All but the client package, built from this repository: the image copies its folders
    (kassign_client, kafka, the generated kassign.v1) as it copies the server's."""
    project = metadata.requires("kassign") or ()
    needed = {canonicalize_name(Requirement(s).name) for s in project if "extra" not in s}
    assert "kassign-client" in needed
    assert needed - {"kassign-client"} <= set(_pins(ROOT / "deploy" / "requirements-runtime.txt"))
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("clients/python/kassign_client/", "kafka/", "gen/kassign/v1"):
        assert folder in dockerfile


def test_dockerfile_copies_only_files_that_exist_and_are_not_ignored() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    sources = []
    for line in dockerfile.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            sources.extend(line.split()[1:-1])
    assert sources
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    allowed = [p[1:].rstrip("/") for p in ignore if p.startswith("!")]
    for source in sources:
        assert (ROOT / source).exists(), f"{source} is copied by the Dockerfile but missing"
        assert any(source.rstrip("/") == a or source.startswith(a + "/") for a in allowed), source


def test_dockerfile_generates_code_like_the_makefile() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for flag in ("-Iproto", "--python_out=gen", "--pyi_out=gen", "--grpc_python_out=gen"):
        assert flag in dockerfile and flag in makefile
    assert re.search(r"^USER (?!0|root)", dockerfile, flags=re.MULTILINE)
    assert re.search(r"^EXPOSE 50051 9464$", dockerfile, flags=re.MULTILINE)
    assert "HEALTHCHECK" in dockerfile


def _runtime_copies(dockerfile: str) -> list[tuple[str, str]]:
    """(source, /app destination) of the runtime stage's COPY lines from the build context."""
    runtime = dockerfile.split("AS runtime", 1)[1]
    pairs = []
    for line in runtime.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            source, destination = line.split()[1:3]
            pairs.append((source, destination))
    return pairs


@pytest.mark.slow
def test_the_image_layout_runs_the_cli_without_the_repository(tmp_path: Path) -> None:
    """Lay files out as the runtime stage does (its COPY lines, the protoc step, its PYTHONPATH)
    and run the CLI from there: nothing may come from the checkout, and nothing imports Spark."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    app = tmp_path / "app"
    for source, destination in _runtime_copies(dockerfile):
        assert destination.startswith("/app/"), destination
        shutil.copytree(
            ROOT / source,
            app / destination.removeprefix("/app/"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    gen = app / "gen"
    (gen / "kassign" / "v1").mkdir(parents=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{ROOT / 'proto'}",
            f"--python_out={gen}",
            f"--grpc_python_out={gen}",
            *(str(p) for p in sorted((ROOT / "proto" / "kassign" / "v1").glob("*.proto"))),
        ],
        check=True,
        timeout=120,
    )
    for package in (gen / "kassign", gen / "kassign" / "v1"):
        (package / "__init__.py").touch()
    pythonpath = re.search(r"PYTHONPATH=(\S+)", dockerfile).group(1)  # type: ignore[union-attr]
    env = dict(os.environ, PYTHONPATH=pythonpath.replace("/app", str(app)))
    probe = (
        "import sys\n"
        "from kassign.cli.main import build_parser\n"
        "import kassign.server.runtime.app, kassign.server.observe.prometheus\n"
        "import kassign.server.runtime.workers, kassign.server.runtime.probe\n"
        "import kassign.server.streams.servicer\n"
        "for command in ('serve', 'health', 'assign', 'call'):\n"
        "    build_parser().parse_args([command, '-'] if command in ('assign', 'call') else [command])\n"
        "mine = ('kassign', 'kassign_client')\n"
        "outside = sorted(n for n, m in sys.modules.items() if n.split('.')[0] in mine\n"
        "                 and getattr(m, '__file__', None) and not m.__file__.startswith(sys.argv[1]))\n"
        "print('outside', outside)\n"
        "print('spark', 'pyspark' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(app)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "outside []" in result.stdout
    assert "spark False" in result.stdout
