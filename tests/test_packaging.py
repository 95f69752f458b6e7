"""pyproject.toml ships every package the code imports: a wheel must not drop a subpackage."""

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
