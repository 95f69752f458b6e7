"""What the cluster benchmark leaves behind: the versions it ran, its results (results.json,
table.md, plot.png under ``--results``, rewritten after every run) and ``--retable``, the same
results recomputed from a finished run's logs under ``--work``."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from cluster_groups import MEMBER_RACKS
from cluster_results import ProcessRun, plot, row, table

from tests.e2e.harness import ROOT

STREAMS_LABELS = {"kafka": "kafka HA", "kassign": "kassign HA min_traffic"}


def run_name(variant: str, scenario: str, assignor: str) -> str:
    """A run's application id / group id, topics' prefix and folder under ``--work``."""
    return re.sub(r"[^a-z0-9]+", "-", f"bench-{variant}-{scenario}-{assignor}")


def logged_runs(home: Path, variant: str) -> list[ProcessRun]:
    """A finished run's processes, from the logs it left (``iN/app-K.log`` or ``consumer-K.log``)."""
    pattern = "app-*.log" if variant == "streams" else "consumer-*.log"
    return [
        ProcessRun(MEMBER_RACKS[log.parent.name], log.read_text(errors="replace"))
        for log in sorted(home.glob(f"i*/{pattern}"))
    ]


def retable(work: Path, results: Path) -> list[dict[str, object]]:
    """results.json's rows with their traffic figures computed again from the run's logs under
    ``work`` (after a fix to cluster_results); times, rebalances and checks are kept."""
    document = json.loads((results / "results.json").read_text())
    rows = []
    labels = {v: k for k, v in STREAMS_LABELS.items()}
    for old in document["rows"]:
        variant, scenario = str(old["scenario"]).split(" ", 1)
        label = str(old["assignor"])
        runs = logged_runs(work / run_name(variant, scenario, labels.get(label, label)), variant)
        times = [float(t) for t in old["settle_each_s"]]
        new = row(
            old["scenario"],
            label,
            runs,
            times,
            old["rebalances"],
            old["check"],
            variant == "streams",
        )
        rows.append(new)
    document["rows"] = rows
    document["retabled"] = "traffic recomputed from the logs by --retable"
    (results / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    (results / "table.md").write_text(table(rows))
    plot(rows, results / "plot.png")
    return rows


def versions(broker_cp: str, app_cp: str) -> dict[str, str]:
    def jar(cp: str, name: str) -> str:
        m = re.search(rf"/{name}-([0-9][^/]*)\.jar", cp)
        return m[1] if m else "?"

    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False).stderr
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    return {
        "kafka broker (kafka_2.13)": jar(broker_cp, "kafka_2.13"),
        "kafka-streams": jar(app_cp, "kafka-streams"),
        "kafka-clients (apps)": jar(app_cp, "kafka-clients"),
        "jdk": java.splitlines()[0] if java else "?",
        "python": platform.python_version(),
        "kassign commit": commit.stdout.strip(),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, load average at start {os.getloadavg()}",
    }


def write(
    results: Path,
    rows: list[dict[str, object]],
    info: dict[str, str],
    settings: dict[str, Any],
    began: float,
) -> None:
    """results.json, table.md and plot.png, rewritten after every run (a failure keeps the rest)."""
    results.mkdir(parents=True, exist_ok=True)
    document = {
        "versions": info,
        "options": {k: str(v) for k, v in settings.items() if k not in ("work", "results")},
        "load_average_now": os.getloadavg(),
        "seconds": round(time.monotonic() - began),
        "rows": rows,
    }
    (results / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    (results / "table.md").write_text(table(rows))
    plot(rows, results / "plot.png")
