"""The serving worker's malloc settings: blocks kept on the heap, the heap trimmed once idle."""

from __future__ import annotations

import platform
import subprocess
import sys
import threading
import time

import pytest
from kassign.server.runtime import malloc
from kassign.server.runtime.admission import Load

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")

_MAPPED_BLOCKS = """
import ctypes, sys
from kassign.server.runtime import malloc

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
if sys.argv[1] == "tuned":
    assert malloc.tune()
if sys.argv[1] == "helper":  # the solver helper's start, as its pool runs it
    import os
    from kassign.server.runtime import solver
    solver._start_helper(os.getppid(), True)
before = libc.mallinfo2().hblks
block = libc.malloc(8 << 20)  # 8 MiB: mapped apart at glibc's default threshold
print(libc.mallinfo2().hblks - before)
"""


def _mapped_blocks(setting: str) -> int:
    """Blocks glibc mapped apart for one 8 MiB allocation in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _MAPPED_BLOCKS, setting], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@glibc
def test_tuned_a_large_block_comes_from_the_heap_not_its_own_mapping_in_the_helper_too() -> None:
    assert _mapped_blocks("default") == 1
    assert _mapped_blocks("tuned") == 0
    assert _mapped_blocks("helper") == 0


class _Counted:
    def __init__(self) -> None:
        self.trims = 0
        self.done = threading.Event()

    def __call__(self) -> None:
        self.trims += 1
        self.done.set()


CALL, IDLE = Load(1, 0, False), Load(0, 0, False)


def test_an_idle_worker_trims_once_per_idle_spell_and_not_before_its_first_call() -> None:
    counted = _Counted()
    idle = malloc.IdleTrim(0.05, counted)
    idle.on_load(IDLE)  # the gate's first report: nothing allocated yet
    time.sleep(0.15)
    assert counted.trims == 0
    for spell in (1, 2):
        counted.done.clear()
        idle.on_load(CALL)
        idle.on_load(IDLE)
        assert counted.done.wait(5)
        time.sleep(0.15)
        assert counted.trims == spell


def test_a_call_that_starts_before_the_idle_time_passes_puts_the_trim_off() -> None:
    counted = _Counted()
    idle = malloc.IdleTrim(0.3, counted)
    idle.on_load(CALL)
    idle.on_load(IDLE)
    time.sleep(0.1)
    idle.on_load(Load(0, 1, False))  # queued counts as busy
    time.sleep(0.4)
    assert counted.trims == 0
    idle.on_load(IDLE)
    assert counted.done.wait(5)
