"""What every end-to-end module shares: the Maven build (once a session) and process cleanup."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.harness import PLUGIN_JAR, Processes, build_classpaths


@pytest.fixture(scope="session")
def e2e_classpaths(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(broker classpath, app classpath with a copy of the plug-in jar): built once a session.

    The jar is copied so that a rebuild during the run cannot swap it under a running JVM.
    """
    work = tmp_path_factory.mktemp("e2e-build")
    broker, app = build_classpaths(work)
    assert PLUGIN_JAR.exists(), f"{PLUGIN_JAR} is missing: `make java` builds it"
    plugin = work / PLUGIN_JAR.name
    shutil.copyfile(PLUGIN_JAR, plugin)
    return broker, f"{app}:{plugin}"


@pytest.fixture
def procs() -> Iterator[Processes]:
    """The test's own processes (members, instances, kassign), killed when it ends, pass or fail."""
    procs = Processes()
    try:
        yield procs
    finally:
        procs.kill_all()
