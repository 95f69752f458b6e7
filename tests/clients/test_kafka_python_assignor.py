"""kassign_client.kafka_python on kafka-python 3's real types (ClusterMetadata from a real
MetadataResponse, subscriptions encoded and decoded by kafka-python and by kassign.kafka).

It runs in a child interpreter started in a temporary directory: from the repository root,
``import kafka`` would find the ``kafka/`` folder (``kassign.kafka``) before kafka-python.
The group-level behaviour with real brokers is tests/e2e/test_consumer_e2e.py's.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("kafka_python_check.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_racks_subscription_and_fallback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, str(SCRIPT), f"127.0.0.1:{_free_port()}"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("RESULT "))
    got = json.loads(line[len("RESULT ") :])
    # leader first, then the other replicas by broker id; "" for broker 3 (no rack); unknown topic out
    assert got["racks"] == {"t": [["b", "a", ""], ["", "a", "b"]]}
    # KIP-881's v3 subscription: the rack, the generation and what the member owns
    assert got["subscription"] == {
        "version": 3,
        "rack": "a",
        "generation": 7,
        "owned": [["t", [0, 1]]],
    }
    assert got["protocols"] == [1]  # COOPERATIVE only, as built
    # kassign unreachable: kafka-python's CooperativeStickyAssignor decides, counted and logged
    assert got["fallback"] == got["cooperative_sticky"]
    assert got["fallbacks"] == {"unavailable": 1} and got["calls"] == 1
    warn = [ln for ln in run.stdout.splitlines() if ln.startswith("LOG WARNING kassign fallback: ")]
    assert len(warn) == 1 and "UNAVAILABLE" in warn[0], run.stdout
    assert "assigned locally with kafka-python's CooperativeStickyAssignor (group g" in warn[0]
