"""The third-party patches of numba_cuzk/_compat.py."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from numba import cuda

from numba_cuzk._compat import install_unload_once, unload_once
from tests.conftest import SIMULATOR


class Handle:
    """Like a cuda.bindings handle: an object whose int() is the driver's value."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value


def test_each_library_handle_is_unloaded_once():
    unloaded = []
    unload = unload_once(lambda handle: unloaded.append(int(handle)))
    for value in (7, 7, 9, 7, 9, 11):  # two contexts letting go of the same libraries
        unload(Handle(value))
    assert unloaded == [7, 9, 11]


class LazyDriver:
    """numba-cuda's Driver in small: a function is bound on first use and stored as an
    attribute, which replaces whatever the attribute held."""

    def __init__(self) -> None:
        self.unloaded: list[int] = []

    def _cuda_python_wrap_fn(self, name: str):
        def call(handle):
            self.unloaded.append(int(handle))

        setattr(self, name, call)
        return call


def test_the_guard_stays_on_the_driver_after_unloads():
    driver = LazyDriver()
    install_unload_once(driver)
    for value in (3, 3, 4, 3):
        driver.cuLibraryUnload(Handle(value))
    assert driver.unloaded == [3, 4]


@pytest.mark.skipif(not SIMULATOR, reason="the CUDA simulator's shared memory")
def test_a_blocks_threads_share_one_simulated_shared_array():
    """The simulator's cuda.shared.array looks up and stores a line's array unlocked: with
    a thread switch between the two (forced here by a slow lookup), each thread got an
    array of its own and the block computed on private copies. Under _compat's lock every
    thread gets the first one."""
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    class SlowLookup(dict):
        def get(self, key, default=None):
            found = super().get(key, default)
            time.sleep(0.01)  # other threads look up before this one can store
            return found

    shared = FakeCUDAShared(0)
    shared._allocations = SlowLookup()
    got = []
    threads = [threading.Thread(target=lambda: got.append(shared.array((8, 4), np.uint32))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8 and all(a is got[0] for a in got)
    assert got[0].shape == (8, 4) and got[0].dtype == np.uint32


def _reverse_in_shared(values, out):
    """Test kernel: a block reverses ``values`` through shared memory (a barrier between)."""
    staged = cuda.shared.array(64, np.int64)
    i = cuda.threadIdx.x
    staged[i] = values[i]
    cuda.syncthreads()
    out[i] = staged[63 - i]


@pytest.mark.skipif(not SIMULATOR, reason="the CUDA simulator's block runner")
def test_a_simulated_block_yields_the_gil_and_keeps_its_barrier(monkeypatch):
    """The runner's poll of thread 0 yields (_compat item 6) and a block that meets at
    syncthreads still computes the right answer."""
    from numba_cuzk import _compat

    yields = []

    class CountingTime:
        @staticmethod
        def sleep(seconds):
            yields.append(seconds)
            time.sleep(seconds)

    monkeypatch.setattr(_compat, "time", CountingTime)
    values = np.arange(64, dtype=np.int64) * 7
    out = np.full(64, -1, dtype=np.int64)
    cuda.jit(_reverse_in_shared)[1, 64](values, out)
    assert np.array_equal(out, values[::-1])
    assert yields and set(yields) == {0}


LAZY_CUDA = """
import json, sys, types
from numba_cuzk import _compat
ran = []
_compat.after_cuda_loads(lambda: ran.append(sys.modules["numba.cuda"].__name__))
from numba import cuda
before = [_compat.cuda_loaded(), list(ran)]
cuda.jit  # the first read of an attribute
after = [_compat.cuda_loaded(), list(ran), cuda is sys.modules["numba.cuda"], type(cuda) is types.ModuleType]
_compat.after_cuda_loads(lambda: ran.append("late"))
print(json.dumps([before, after, ran]))
"""


def test_numba_cuda_runs_at_its_first_use_then_the_hooks():
    """_compat item 7 in a fresh process: `from numba import cuda` binds the module without
    running it; the first attribute read runs it, in place, then the hooks; a hook added
    later runs at once."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LAZY_CUDA], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before, after, ran = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == [False, []]
    assert after == [True, ["numba.cuda"], True, True]
    assert ran == ["numba.cuda", "late"]


RACING_FIRST_READS = """
import json, threading
from numba_cuzk import _compat
hooks = []
_compat.after_cuda_loads(lambda: hooks.append(1))
from numba import cuda
start = threading.Barrier(8)
errors, seen = [], []

def first_read():
    start.wait()
    try:
        seen.append(cuda.jit is not None and cuda.to_device is not None and callable(cuda.is_available))
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=first_read) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps([errors, seen, len(hooks)]))
"""


def test_threads_that_first_read_numba_cuda_at_once_all_see_it_whole():
    """Eight threads released at once read numba.cuda's attributes for the first time:
    one runs numba-cuda's package while the others wait, then every read succeeds and the
    hooks run once. (Under importlib's LazyLoader on Python 3.11, 7 of the 8 got
    AttributeError: the module was already a plain one, not yet run.)"""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", RACING_FIRST_READS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    errors, seen, hooks = json.loads(done.stdout.strip().splitlines()[-1])
    assert errors == [] and seen == [True] * 8 and hooks == 1
