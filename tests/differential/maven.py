"""Compile a Maven project of JVM harness code, resolve its classpath (~/.m2 caches), run it.

Standard library only, so that a bench can build and run the same harnesses as the
differential suites without importing the e2e machinery: ``bench/consumer_bench.py`` times
Kafka's consumer assignors with the consumer oracle's project.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ROOT", "maven_classpath", "run_java"]

ROOT = Path(__file__).resolve().parents[2]


def maven_classpath(project: Path, log: Path) -> str:
    """``mvn compile dependency:build-classpath`` on ``project``: its classes, then its deps.

    One build of a project at a time (a lock file in its ``target``): the suite's parallel
    workers (``make pytest``) may both need the same oracle."""
    (project / "target").mkdir(exist_ok=True)
    with (project / "target" / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(project, log)


def _build(project: Path, log: Path) -> str:
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


def run_java(
    classpath: str, main_class: str, stdin: str, *, flags: Sequence[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``java flags -cp classpath main_class`` fed ``stdin``; a failed run raises with the end
    of its stderr."""
    done = subprocess.run(
        ["java", *flags, "-cp", classpath, main_class],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{main_class} exited {done.returncode}\n{done.stderr[-4000:]}")
    return done
