"""primary_context: the driver's calls in order, skipped where numba must choose, and on a
GPU the context made before numba is imported (pytest -m gpu)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from numba_cuzk import primary_context
from tests.conftest import SIMULATOR


class _FakeDriver:
    """The three driver calls, recorded; ``init`` is cuInit's result."""

    def __init__(self, init: int = 0) -> None:
        self.init, self.calls = init, []

    def cuInit(self, flags):
        self.calls.append(("cuInit", flags))
        return self.init

    def cuDeviceGet(self, handle, ordinal):
        self.calls.append(("cuDeviceGet", ordinal))
        handle._obj.value = 40 + ordinal
        return 0

    def cuDevicePrimaryCtxRetain(self, context, handle):
        self.calls.append(("cuDevicePrimaryCtxRetain", handle.value))
        return 0


def _retained(monkeypatch, driver, device=0, **env):
    for name in ("NUMBA_ENABLE_CUDASIM", "NUMBA_CUDA_DRIVER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(primary_context, "driver_library", lambda: driver)
    thread = primary_context.retain_in_background(device)
    if thread is not None:
        thread.join(5)
        assert not thread.is_alive() and thread.daemon
    return thread


def test_the_context_of_the_device_asked_for_is_retained_after_init(monkeypatch):
    driver = _FakeDriver()
    assert _retained(monkeypatch, driver, device=1) is not None
    assert driver.calls == [("cuInit", 0), ("cuDeviceGet", 1), ("cuDevicePrimaryCtxRetain", 41)]


def test_a_failed_init_retains_nothing(monkeypatch):
    driver = _FakeDriver(init=100)  # CUDA_ERROR_NO_DEVICE
    _retained(monkeypatch, driver)
    assert driver.calls == [("cuInit", 0)]


@pytest.mark.parametrize("env", [{"NUMBA_ENABLE_CUDASIM": "1"}, {"NUMBA_CUDA_DRIVER": "/opt/my/libcuda.so"},
                                 {}])
def test_no_thread_in_the_simulator_for_a_users_driver_or_without_one(monkeypatch, env):
    driver = _FakeDriver() if env else None  # {}: the driver's library does not load
    assert _retained(monkeypatch, driver, **env) is None
    assert not (driver and driver.calls)


_MADE_BEFORE_NUMBA = """
import ctypes, sys
from numba_cuzk import primary_context
primary_context.retain_in_background().join()
assert "numba" not in sys.modules
lib, flags, active, dev = ctypes.CDLL("libcuda.so.1"), ctypes.c_uint(), ctypes.c_int(), ctypes.c_int()
assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert lib.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active)) == 0
print("active", active.value)
import numpy as np
from numba import cuda
print("sum", int(cuda.to_device(np.arange(5)).copy_to_host().sum()))
"""


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="the driver's primary context: a real GPU")
def test_on_a_gpu_the_context_is_made_before_numba_which_then_uses_it():
    done = subprocess.run([sys.executable, "-c", _MADE_BEFORE_NUMBA], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["active", "1", "sum", "10"]
