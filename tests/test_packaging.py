"""pyproject.toml ships every package the code imports, and make installs what each target needs."""

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _config(pyproject: str = "pyproject.toml") -> dict[str, object]:
    return tomllib.loads((ROOT / pyproject).read_text())["tool"]["setuptools"]  # type: ignore[no-any-return]


CLIENT = "clients/python/pyproject.toml"


def test_every_package_directory_is_listed() -> None:
    config = _config()
    listed = set(config["packages"])  # type: ignore[call-overload]
    mapped: dict[str, str] = config["package-dir"]  # type: ignore[assignment]
    found = {
        ".".join((name, *init.parent.relative_to(ROOT / folder).parts))
        for name, folder in mapped.items()
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert {"kassign.server", "kassign.cli"} <= listed


def test_the_contract_and_kafkas_formats_are_shipped_by_the_client_alone() -> None:
    """Issue 27: the server's distribution and the client's both shipped kassign/v1 and
    kassign/kafka (and the server kassign_client too); the server now depends on the client."""
    server = set(_config()["packages"])  # type: ignore[call-overload]
    client = set(_config(CLIENT)["packages"])  # type: ignore[call-overload]
    both = {s for s in server for c in client if s == c or s.startswith(c + ".")}
    assert both == set()
    assert client == {"kassign_client", "kassign.v1", "kassign.kafka"}
    assert "kassign" not in server  # a namespace in both: no kassign/__init__.py shipped twice
    version = tomllib.loads((ROOT / CLIENT).read_text())["project"]["version"]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"kassign-client=={version}" in requires


def test_the_venv_imports_the_contract_from_the_client_package() -> None:
    """``make setup`` installs the client package (editable): kassign.v1 and kassign.kafka are
    found through it, and are the repository's own files, not copies."""
    from importlib import metadata, util

    assert metadata.version("kassign-client") == metadata.version("kassign")
    for name, folder in (("kassign.v1", "gen/kassign/v1"), ("kassign.kafka", "kafka")):
        spec = util.find_spec(name)
        assert spec is not None and spec.origin is not None
        assert Path(spec.origin).resolve() == (ROOT / folder / "__init__.py").resolve()
    files = metadata.files("kassign") or []
    assert not [f for f in files if str(f).startswith(("kassign/v1", "kassign/kafka"))]


def test_the_namespace_maps_the_design_folders() -> None:
    """One ``kassign`` namespace; no generic top-level name (server, assignor, ...) is installed."""
    mapped: dict[str, str] = _config()["package-dir"]  # type: ignore[assignment]
    assert mapped == {
        "kassign.assignor": "assignor",
        "kassign.server": "server",
        "kassign.pipeline": "pipeline",
        "kassign.cli": "cli",
    }
    tops = {name.split(".")[0] for name in _config()["packages"]}  # type: ignore[attr-defined]
    assert tops == {"kassign"}


def test_the_makefile_links_every_mapped_folder_for_mypy() -> None:
    mapped: dict[str, str] = _config()["package-dir"]  # type: ignore[assignment]
    makefile = (ROOT / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("NAMESPACE :="))
    linked = set(line.split(":=", 1)[1].split())
    client = {n.split(".")[1] for n in _config(CLIENT)["packages"] if n.startswith("kassign.")}  # type: ignore[attr-defined]
    assert linked == {n.split(".")[1] for n in mapped if n.startswith("kassign.")} | client - {"v1"}


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
