"""kassign.server.runtime.supervisor with real forked children, each scenario in a fresh Python process.

The supervisor reaps with ``waitpid(-1)``, which in the pytest process could take the exit
status of another test's subprocess; so every scenario runs in a process of its own and prints
what happened as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PRELUDE = """
import json, os, signal, sys
from kassign.server.runtime import supervisor as sv

forks = []

def child(code, *, wait_for_term=False):
    def fork(index):
        pid = os.fork()
        if pid == 0:
            if wait_for_term:
                # Stop signals are blocked (the supervisor forks with them held) and stay so, and sigwait
                # takes one whether it came before the wait or during it. (A Python handler with
                # signal.pause() loses a SIGTERM that lands between the interpreter's last
                # handler check and the pause: the child then sleeps for ever.)
                signal.pthread_sigmask(signal.SIG_BLOCK, sv.STOP_SIGNALS)
                os.write(ready_w, b"x")
                signal.sigwait(sv.STOP_SIGNALS)
                os._exit(0)
            os._exit(code)
        forks.append(index)
        return pid
    return fork

def stop_after(s, count):
    # The count-th fork asks the supervisor to stop, so a slot that keeps refilling ends.
    real_fork = s.fork
    def fork(index):
        pid = real_fork(index)
        if len(forks) == count:
            s.stopping = True
        return pid
    s.fork = fork

ready_r, ready_w = os.pipe()
"""


def run(scenario: str) -> dict[str, object]:
    script = PRELUDE + textwrap.dedent(scenario)
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_a_slot_that_keeps_failing_at_start_is_given_up_after_three_tries() -> None:
    report = run("""
        s = sv.Supervisor(fork=child(3))
        s.start(2)
        failed = s.wait()
        print(json.dumps({"forks": sorted(forks), "failed": failed, "left": len(s.slots)}))
    """)
    assert report == {"forks": [0, 0, 0, 1, 1, 1], "failed": 6, "left": 0}


def test_a_worker_that_ran_a_while_is_always_replaced() -> None:
    # Each failure comes long after its worker started: none counts towards giving up, so the
    # slot is refilled until something else stops it (here: the sixth fork asks to stop).
    report = run("""
        ticks = iter(range(0, 10_000, 60))
        s = sv.Supervisor(fork=child(3), clock=lambda: float(next(ticks)))
        stop_after(s, 6)
        s.start(1)
        failed = s.wait()
        print(json.dumps({"forks": forks, "failed": failed}))
    """)
    assert report == {"forks": [0] * 6, "failed": 6}


def test_quick_failures_must_be_in_a_row() -> None:
    # quick, slow, quick, quick, quick: the slow one resets the count, so the slot is given up
    # at the third quick failure after it, the fifth in all.
    report = run("""
        # clock() is read once at each spawn and once at each exit: a gap is a worker's lifetime.
        gaps = iter([1, 30, 1, 1, 1])
        now = [0.0]
        phase = ["start"]
        def clock():
            if phase[0] == "exit":
                now[0] += next(gaps)
            phase[0] = "exit" if phase[0] == "start" else "start"
            return now[0]
        s = sv.Supervisor(fork=child(3), clock=clock)
        s.start(1)
        failed = s.wait()
        print(json.dumps({"forks": len(forks), "failed": failed}))
    """)
    assert report == {"forks": 5, "failed": 5}


def test_a_worker_that_exits_cleanly_while_serving_is_replaced_too() -> None:
    report = run("""
        s = sv.Supervisor(fork=child(0))
        stop_after(s, 4)
        s.start(1)
        failed = s.wait()
        print(json.dumps({"forks": len(forks), "failed": failed}))
    """)
    assert report == {"forks": 4, "failed": 0}


def test_sigterm_stops_every_worker_and_nothing_is_forked_after_it() -> None:
    report = run("""
        exits = []
        s = sv.Supervisor(fork=child(0, wait_for_term=True), on_exit=exits.append)
        s.install_signal_handlers()
        s.start(3)
        for _ in range(3):
            os.read(ready_r, 1)  # every child has its handler
        pids = sorted(s.slots)
        os.kill(os.getpid(), signal.SIGTERM)
        failed = s.wait()
        print(json.dumps({"forks": len(forks), "failed": failed, "stopping": s.stopping,
                          "reaped_all": sorted(exits) == pids}))
    """)
    assert report == {"forks": 3, "failed": 0, "stopping": True, "reaped_all": True}


def test_a_repeated_signal_within_a_second_is_one_signal() -> None:
    report = run("""
        import time
        sent = []
        class Counting(sv.Supervisor):
            def stop(self):
                sent.append(time.monotonic())
        s = Counting(fork=child(0))
        s._on_signal(signal.SIGTERM, None)
        s._on_signal(signal.SIGTERM, None)
        time.sleep(sv.DUPLICATE_SIGNAL_SECONDS + 0.1)
        s._on_signal(signal.SIGINT, None)
        print(json.dumps({"stops": len(sent)}))
    """)
    assert report == {"stops": 2}


def test_the_scenarios_run_the_module_in_this_tree() -> None:
    report = run("""
        print(json.dumps({"file": sv.__file__}))
    """)
    assert Path(str(report["file"])).resolve() == ROOT / "server" / "runtime" / "supervisor.py"


def test_restarts_and_lost_slots_are_counted_and_reported() -> None:
    # Slot 0 fails at once, three times: two restarts, then it is given up. Slot 1 serves until
    # the report of the lost slot stops the supervisor.
    report = run("""
        lost = []
        def fork(index):
            return child(3)(index) if index == 0 else child(0, wait_for_term=True)(index)
        def on_lost(index):
            lost.append(index)
            s.stop()
        s = sv.Supervisor(fork=fork, on_lost=on_lost, clock=lambda: 0.0)
        s.start(2)
        live_at_start = s.live()
        failed = s.wait()
        print(json.dumps({"configured": s.configured, "restarts": s.restarts, "lost": s.lost,
                          "reported": lost, "forks": forks, "failed": failed,
                          "live_at_start": sorted(live_at_start), "live_at_end": s.live()}))
    """)
    assert report == {
        "configured": 2,
        "restarts": 2,
        "lost": [0],
        "reported": [0],
        "forks": [0, 1, 0, 0],
        "failed": 3,
        "live_at_start": [0, 1],
        "live_at_end": {},
    }
