"""What every test shares: no hypothesis example has a deadline.

Hypothesis times each example against 200 ms of wall clock by default. On CI's two shared cores
a first example that pays a lazy import or a cold cache fails a correct test that way
(``tests/kafka/test_consumer_user_data.py::test_round_trip``: 792 ms once, 0.1 ms on the retry).
Speed is the benches' to measure (``bench/``) and a hang pytest-timeout's to stop (pyproject's
``timeout``), so the deadline is off everywhere, not test by test.
"""

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("kassign", deadline=None)
settings.load_profile("kassign")


# The suite's two runs (Makefile ``pytest``): ``--phase parallel`` on both cores with
# pytest-xdist, then ``--phase serial`` one test at a time. Parallel: pure computation (Kafka's
# oracles are JVMs fed on stdin) and servers on port 0 with nothing timed. Serial: brokers,
# Spark, browsers, clocks, and what is timed or needs the machine quiet (deadlines, workers,
# saturation, connection ages, a port let go). Without ``--phase`` every test is collected.
PARALLEL = (
    "tests/assignor",
    "tests/differential",
    "tests/kafka",
    "tests/snapshots",
    "tests/server/streams",
    "tests/server/consumer",
    "tests/cli",
    "tests/test_layering.py",
    "tests/test_exported_members.py",
    "tests/test_examples.py",
)
SERIAL_INSIDE = (
    "tests/cli/test_serve_options.py",  # a connection's age, in seconds
    "tests/cli/test_explain_page.py",  # a browser
    "tests/cli/test_shadow_page.py",  # a browser
    "tests/cli/test_main.py",  # calls a port it has just let go
    "tests/cli/test_call_failures.py",  # connection failures and TLS handshakes, timed out
)
"""Files of a ``PARALLEL`` folder that run in the serial phase."""
_ROOT = Path(__file__).resolve().parents[1]


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def in_parallel_phase(path: str) -> bool | None:
    """Whether the test file or folder ``path`` (relative, '/'-separated) runs in the parallel
    phase; ``None`` for a folder holding both kinds (``tests``, ``tests/server``,
    ``tests/cli``), which neither phase may skip whole."""
    if _under(path, SERIAL_INSIDE):
        return False
    if any(s.startswith(path + "/") for s in SERIAL_INSIDE):
        return None
    if _under(path, PARALLEL):
        return True
    if any(p.startswith(path + "/") for p in PARALLEL):
        return None
    return False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--phase",
        choices=("parallel", "serial"),
        help="collect only this phase's tests (tests/conftest.py, PARALLEL)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    phase = config.getoption("phase")
    if phase is None:
        return None
    try:
        relative = collection_path.resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        return None
    parallel = in_parallel_phase(relative)
    if parallel is None:
        return None
    return parallel != (phase == "parallel") or None
