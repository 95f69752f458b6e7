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


def test_decoding_and_plain_assignment_do_not_load_the_solver() -> None:
    """OR-Tools loads only when a request asks for rack awareness (the assignors import it lazily)."""
    import subprocess
    import sys

    code = (
        "import sys, server.decode, server.servicer, assignor.high_availability, assignor.sticky;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ortools'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
