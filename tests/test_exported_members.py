"""Every public module lists what it exports, sorted as ruff sorts it, and only what exists."""

import importlib
import pkgutil

import kassign.assignor
import kassign.kafka
import pytest

MODULES = sorted(
    [package.__name__ for package in (kassign.assignor, kassign.kafka)]
    + [
        m.name
        for package in (kassign.assignor, kassign.kafka)
        for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    ]
)


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, name)


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []
