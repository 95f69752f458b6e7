"""pyproject.toml ships every package the code imports, and make installs what each target needs."""

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]  # type: ignore[no-any-return]


def test_every_package_directory_is_listed() -> None:
    config = _config()
    listed = set(config["packages"])  # type: ignore[call-overload]
    mapped: dict[str, str] = config["package-dir"]  # type: ignore[assignment]
    found = {
        ".".join((name, *init.parent.relative_to(ROOT / folder).parts))
        for name, folder in mapped.items()
        if name != "kassign"
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert {"kassign", "kassign.v1", "kassign_client"} <= listed


def test_the_namespace_maps_the_design_folders() -> None:
    """One ``kassign`` namespace; no generic top-level name (server, assignor, ...) is installed."""
    mapped: dict[str, str] = _config()["package-dir"]  # type: ignore[assignment]
    assert mapped == {
        "kassign": "gen/kassign",
        "kassign.kafka": "kafka",
        "kassign.assignor": "assignor",
        "kassign.server": "server",
        "kassign.pipeline": "pipeline",
        "kassign.cli": "cli",
        "kassign_client": "clients/python/kassign_client",
    }
    tops = {name.split(".")[0] for name in _config()["packages"]}  # type: ignore[attr-defined]
    assert tops == {"kassign", "kassign_client"}


def test_the_makefile_links_every_mapped_folder_for_mypy() -> None:
    mapped: dict[str, str] = _config()["package-dir"]  # type: ignore[assignment]
    makefile = (ROOT / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("NAMESPACE :="))
    linked = set(line.split(":=", 1)[1].split())
    assert linked == {n.split(".")[1] for n in mapped if n.startswith("kassign.")}


def _dry_run(target: str) -> str:
    """The commands ``make TARGET`` would run from scratch (``-B``: as on a fresh clone)."""
    return subprocess.run(
        ["make", "--dry-run", "--always-make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_make_run_installs_what_serving_needs_and_no_more() -> None:
    """Issue 27: ``make run`` spent over a minute installing a 1.5 GB venv, PySpark included,
    just to serve. It installs the image's pins; the tests' and pipeline's tools stay out."""
    commands = _dry_run("run")
    assert "-r deploy/requirements-runtime.txt" in commands
    assert "requirements.lock" not in commands
    assert "kassign serve" in commands
    assert "installing what kassign serve needs" in commands  # a long install says what it does


def test_make_java_installs_the_jdk_and_maven_only() -> None:
    """Issue 27: ``make java`` first installed Chromium, Prometheus and docker-compose."""
    apt = [line for line in _dry_run("java").splitlines() if "dpkg -s" in line]
    assert apt and all("openjdk-17-jdk-headless maven;" in line for line in apt)
    assert not any(p in line for line in apt for p in ("chromium", "prometheus", "docker"))
    assert "requirements.lock" not in _dry_run("java")


def test_make_test_still_installs_everything() -> None:
    commands = _dry_run("test")
    assert "-r requirements.lock" in commands
    assert "chromium chromium-driver" in commands
