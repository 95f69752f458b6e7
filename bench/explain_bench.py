"""Time the default call with the explanation code and without it, and with ``explain`` on.

    .venv/bin/python bench/explain_bench.py [--ref main] [--repeat N] [--rounds R]

"The explanation adds no cost when not asked for" (issue 17), measured: the servicer's whole
call (``assign_request``: decode, assign, distribute, encode) on the requests in
``bench/ghz/data`` (12, 200 and 2,000 clients), three ways in the same run:

- ``before``: the tree at ``--ref`` (default ``main``, the code before explanations), extracted
  with ``git archive`` into a temporary folder; its generated messages are this tree's (a
  superset: the new fields are unset);
- ``off``: this tree, ``explain`` unset (the default call);
- ``on``: this tree, ``explain`` set.

Each way runs in its own child process, in alternating rounds, so machine load falls on all
three alike; a figure is the median CPU time of a call over every round (CPU time is steadier
than wall time on a shared machine), and the ratios are given by median and by minimum (the
least disturbed call: on a loaded machine the steadier of the two). ``off/before`` near 1.00 is
the claim; ``on/off`` is what asking costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "ghz" / "data"
FOLDERS = ("assignor", "server", "kafka")
"""The folders of the ``kassign`` namespace a call imports (``kassign.v1`` comes from ``gen``)."""

_CHILD = """
import json, statistics, sys, time
from google.protobuf import json_format
import kassign.assignor
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
path, explain, repeat = sys.argv[1], sys.argv[2] == "on", int(sys.argv[3])
request = json_format.Parse(open(path, encoding="utf-8").read(), pb.AssignRequest())
request.now_ms = request.now_ms or 1_000
if explain:
    request.explain = True
assign_request(request)  # warm: imports, caches
times = []
for _ in range(repeat):
    start = time.process_time()
    assign_request(request)
    times.append(time.process_time() - start)
print(json.dumps({"cpu": times, "from": kassign.assignor.__file__}))
"""


def _tree_at(ref: str, into: Path) -> Path:
    """``ref``'s folders of the namespace under ``into/kassign``, with this tree's ``v1``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, *FOLDERS],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into / "src", filter="data")
    package = into / "kassign"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for folder in FOLDERS:
        (package / folder).symlink_to(into / "src" / folder)
    (package / "v1").symlink_to(ROOT / "gen" / "kassign" / "v1")
    return into


def _times(path_root: Path, request: Path, mode: str, repeat: int) -> tuple[list[float], str]:
    env = dict(os.environ, PYTHONPATH=str(path_root))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(request.resolve()), mode, str(repeat)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=path_root,
    ).stdout
    answer = json.loads(out)
    return answer["cpu"], answer["from"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ref", default="main", help="the tree without the code (git ref)")
    parser.add_argument("--repeat", type=int, default=5, help="calls per round and way")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; before = {args.ref}, this tree = off / on")
    print(
        f"{'request':<16} {'before ms':>10} {'off ms':>8} {'on ms':>8} "
        f"{'off/before':>10} {'(min)':>6} {'on/off':>7} {'(min)':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ways = {"before": (_tree_at(args.ref, Path(tmp)), "off"), "off": (ROOT / "gen", "off")}
        ways["on"] = (ROOT / "gen", "on")
        for request in sorted(DATA.glob("group_*.json"), key=lambda p: p.stat().st_size):
            cpu: dict[str, list[float]] = {way: [] for way in ways}
            for _ in range(args.rounds):
                for way, (path_root, mode) in ways.items():
                    times, origin = _times(path_root, request, mode, args.repeat)
                    if not origin.startswith(str(path_root)):
                        raise SystemExit(f"{way}: imported {origin}, not from {path_root}")
                    cpu[way] += times
            ms = {way: statistics.median(t) * 1000 for way, t in cpu.items()}
            least = {way: min(t) for way, t in cpu.items()}
            print(
                f"{request.stem:<16} {ms['before']:>10.2f} {ms['off']:>8.2f} {ms['on']:>8.2f} "
                f"{ms['off'] / ms['before']:>10.2f} {least['off'] / least['before']:>6.2f} "
                f"{ms['on'] / ms['off']:>7.2f} {least['on'] / least['off']:>6.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
