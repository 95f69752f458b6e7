"""Compile a Maven project of JVM harness code and resolve its classpath (~/.m2 caches).

Standard library only, so that a bench can build the same harnesses as the differential
suites without importing the e2e machinery: ``bench/consumer_bench.py`` times Kafka's consumer
assignors with the consumer oracle's project.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["ROOT", "maven_classpath"]

ROOT = Path(__file__).resolve().parents[2]


def maven_classpath(project: Path, log: Path) -> str:
    """``mvn compile dependency:build-classpath`` on ``project``: its classes, then its deps."""
    with log.open("wb") as sink:
        status = subprocess.run(
            [
                "mvn",
                "-B",
                "-q",
                "-Dstyle.color=never",
                "-f",
                str(project / "pom.xml"),
                "compile",
                "dependency:build-classpath",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            timeout=900,
            check=False,
        ).returncode
    if status != 0:
        last = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
        raise RuntimeError(f"mvn for {project.relative_to(ROOT)} failed; {log} ends:\n{last}")
    deps = (project / "target" / "classpath.txt").read_text().strip()
    return os.pathsep.join([str(project / "target" / "classes"), deps])
