"""pyproject.toml ships every package the code imports: a wheel must not drop a subpackage."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("assignor", "server", "pipeline")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    mapped = {name for name in config["package-dir"] if name}
    assert {"kassign", "kassign_client"} <= mapped <= listed
