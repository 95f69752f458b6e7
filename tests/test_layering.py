"""The package-level import graph: data flows one way, and no two packages import each other.

A package is the first two components of a module under the ``kassign`` namespace
(``kassign.server.streams.encode`` belongs to ``kassign.server``); ``kassign_client`` is one
package. Every import counts, lazy ones inside functions included. What each may import:

=====================  ===================================================================
package                may import (besides the standard library and third-party code)
=====================  ===================================================================
``kassign.v1``         nothing of ours (generated from proto/)
``kassign.kafka``      nothing of ours; no protobuf, no grpc (Kafka's bytes only)
``kassign.assignor``   ``kassign.kafka`` (its protocol constants); no grpc, prometheus, protobuf
``kassign_client``     ``kassign.v1``, ``kassign.kafka``
``kassign.server``     ``kassign.v1``, ``kassign.kafka``, ``kassign.assignor``
``kassign.pipeline``   the above but the client: ``v1``, ``kafka``, ``assignor``, ``server``
``kassign.cli``        every package (it is the top: nothing imports it)
=====================  ===================================================================

docs/architecture.md draws the same table.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FOLDERS = {
    "kassign.kafka": ROOT / "kafka",
    "kassign.assignor": ROOT / "assignor",
    "kassign.server": ROOT / "server",
    "kassign.pipeline": ROOT / "pipeline",
    "kassign.cli": ROOT / "cli",
    "kassign_client": ROOT / "clients" / "python" / "kassign_client",
}
ALLOWED: dict[str, frozenset[str]] = {
    "kassign.v1": frozenset(),
    "kassign.kafka": frozenset(),
    "kassign.assignor": frozenset({"kassign.kafka"}),
    "kassign_client": frozenset({"kassign.v1", "kassign.kafka"}),
    "kassign.server": frozenset({"kassign.v1", "kassign.kafka", "kassign.assignor"}),
    "kassign.pipeline": frozenset(
        {"kassign.v1", "kassign.kafka", "kassign.assignor", "kassign.server"}
    ),
    "kassign.cli": frozenset(
        {
            "kassign.v1",
            "kassign.kafka",
            "kassign.assignor",
            "kassign.server",
            "kassign.pipeline",
            "kassign_client",
        }
    ),
}
FOREIGN_FORBIDDEN = {
    "kassign.kafka": ("grpc", "google.protobuf", "prometheus_client", "numpy", "ortools"),
    "kassign.assignor": ("grpc", "google.protobuf", "prometheus_client", "pyspark"),
}
OLD_TOP_LEVEL = ("server", "assignor", "pipeline", "cli", "kafka")
"""Folder names that must never be imported as top-level names (they are ``kassign.*``)."""
OUR_KAFKA_MODULES = frozenset(p.stem for p in (ROOT / "kafka").glob("*.py"))
"""``kafka.X`` with X not one of these is kafka-python's (``kassign_client.kafka_python``)."""


def _old_top_level(name: str) -> bool:
    parts = name.split(".")
    if parts[0] == "kafka" and len(parts) > 1 and parts[1] not in OUR_KAFKA_MODULES:
        return False
    return parts[0] in OLD_TOP_LEVEL


def package_of(module: str) -> str | None:
    """``kassign.server.streams.encode`` -> ``kassign.server``; None for foreign modules."""
    parts = module.split(".")
    if parts[0] == "kassign_client":
        return "kassign_client"
    if parts[0] == "kassign" and len(parts) >= 2:
        return ".".join(parts[:2])
    return None


def _module_name(package: str, folder: Path, path: Path) -> str:
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imports_of(path: Path, module: str) -> Iterator[str]:
    """Every module ``path`` imports, absolute, at any depth (lazy imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                yield ".".join([*base, *([node.module] if node.module else [])])
            elif node.module:
                yield node.module
                yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _files() -> Iterator[tuple[str, str, Path]]:
    for package, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            yield package, _module_name(package, folder, path), path


def package_graph(files: Iterator[tuple[str, str, Path]] | None = None) -> dict[str, set[str]]:
    """Package -> the other packages it imports."""
    graph: dict[str, set[str]] = {p: set() for p in ALLOWED}
    for package, module, path in files if files is not None else _files():
        for imported in imports_of(path, module):
            target = package_of(imported)
            if target is not None and target != package and target in ALLOWED:
                graph[package].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_every_folder_is_a_package_of_the_table() -> None:
    assert set(FOLDERS) | {"kassign.v1"} == set(ALLOWED)
    for folder in FOLDERS.values():
        assert (folder / "__init__.py").is_file(), folder


def test_no_cycle_between_packages() -> None:
    assert find_cycle(package_graph()) is None


def test_each_package_imports_only_what_the_table_allows() -> None:
    graph = package_graph()
    extra = {
        p: sorted(targets - ALLOWED[p]) for p, targets in graph.items() if targets - ALLOWED[p]
    }
    assert extra == {}


@pytest.mark.parametrize("package", sorted(FOREIGN_FORBIDDEN))
def test_lower_layers_import_no_service_library(package: str) -> None:
    """The byte codecs never see the contract; the assignor never sees grpc, metrics or protobuf."""
    forbidden = FOREIGN_FORBIDDEN[package]
    offenders = {
        module: sorted(
            name
            for name in imports_of(path, module)
            if any(name == f or name.startswith(f + ".") for f in forbidden)
            or name.endswith("_pb2")
        )
        for p, module, path in _files()
        if p == package
    }
    assert {m: names for m, names in offenders.items() if names} == {}


def test_nothing_imports_the_old_top_level_names() -> None:
    """``server``, ``assignor``, ... are folders; their import names are ``kassign.*``."""
    roots = [*FOLDERS.values(), ROOT / "tests", ROOT / "bench", ROOT / "examples"]
    offenders = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for root in roots
        for path in root.rglob("*.py")
        for name in imports_of(path, "tests.x")
        if _old_top_level(name)
    )
    assert offenders == []


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("kassign_client", "kassign.server"),  # old cycle 1: client <-> server (its CLI)
        ("kassign.server", "kassign_client"),  # old cycle 1, the other way round
        ("kassign.pipeline", "kassign.cli"),  # old cycle 2: pipeline <-> the CLI
        ("kassign.server", "kassign.pipeline"),  # old cycle 2: the server loading the pipeline
        ("kassign.assignor", "kassign.server"),  # the library reaching up into the service
        ("kassign.kafka", "kassign.v1"),  # the byte codecs depending on the contract
        ("kassign.kafka", "kassign.assignor"),  # the lowest layer depending on anything
    ],
)
def test_a_re_added_edge_fails_the_checks(source: str, target: str) -> None:
    """Each old cycle, and each forbidden edge, is refused by the table or as a cycle."""
    graph = {p: set(t) for p, t in package_graph().items()}
    graph[source].add(target)
    assert target not in ALLOWED[source] or find_cycle(graph) is not None


def test_decoding_and_plain_assignment_do_not_load_the_solver() -> None:
    """OR-Tools loads only when a request asks for rack awareness (the assignors import it lazily)."""
    code = (
        "import sys, kassign.server.streams.decode, kassign.server.streams.servicer,"
        " kassign.assignor.streams.high_availability, kassign.assignor.streams.sticky;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ortools'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
