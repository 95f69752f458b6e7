"""Data flows one way: the assignor library never reaches up into the service."""

import ast
from pathlib import Path

FORBIDDEN = ("grpc", "prometheus_client", "kassign", "server", "pipeline", "kassign_client")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_assignor_imports_no_service_code() -> None:
    root = Path(__file__).resolve().parents[1] / "assignor"
    files = sorted(root.rglob("*.py"))
    assert files, "assignor/ has no modules"
    offenders = {
        str(f.relative_to(root)): sorted(_imports(f) & set(FORBIDDEN))
        for f in files
        if _imports(f) & set(FORBIDDEN) or any(n.endswith("_pb2") for n in _imports(f))
    }
    assert offenders == {}
