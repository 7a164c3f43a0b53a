"""The GPU's primary context, made in a thread while the process imports numba.

A GPU process's first CUDA call initializes the driver and creates the device's primary
context: 0.12 s of a one-shot ``prove`` on an H200 (its profile, 2026-12-04), spent in the
driver with the GIL released. Imports hold the GIL: numba's and numba.cuda's take
~0.75 s of the same process. Retained in a thread started before them, the context is made
while they run, and numba-cuda's own retain (cuda.core's ``Device.set_current``) finds it
made. The reference taken here is never released: for a process that proves and exits
(``numba-cuzk prove``), not for a library, whose user may reset the device.

Nothing here imports numba; errors are left to numba's own first call, which reports them.
"""

from __future__ import annotations

import ctypes
import os
import threading

_DRIVER_NAMES = ("libcuda.so.1", "libcuda.so")  # the names numba-cuda's bindings dlopen


def retain_in_background(device: int = 0) -> threading.Thread | None:
    """Start a daemon thread that retains ``device``'s primary context (cuInit, cuDeviceGet,
    cuDevicePrimaryCtxRetain); None where the driver's library does not load, in the CUDA
    simulator, or where NUMBA_CUDA_DRIVER names a library of the user's (numba's to load)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or os.environ.get("NUMBA_CUDA_DRIVER"):
        return None
    driver = driver_library()
    if driver is None:
        return None
    thread = threading.Thread(target=_retain, args=(driver, device), name="primary-context", daemon=True)
    thread.start()
    return thread


def driver_library() -> ctypes.CDLL | None:
    """The CUDA driver's library (libcuda, installed with the NVIDIA driver), or None where
    it does not load; backend.cuda_available asks this before it loads numba.cuda."""
    for name in _DRIVER_NAMES:
        try:
            return ctypes.CDLL(name)  # a CDLL's calls release the GIL
        except OSError:
            continue
    return None


def _retain(driver: ctypes.CDLL, device: int) -> None:
    handle, context = ctypes.c_int(), ctypes.c_void_p()
    if driver.cuInit(0) == 0 and driver.cuDeviceGet(ctypes.byref(handle), device) == 0:
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), handle)
