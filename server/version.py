"""The installed kassign's version: ``kassign --version`` and ``kassign_build_info`` say it."""

from __future__ import annotations

from importlib import metadata

__all__ = ["version"]


def version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" when run from a tree
    that was never installed."""
    try:
        return metadata.version("kassign")
    except metadata.PackageNotFoundError:
        return "unknown"
