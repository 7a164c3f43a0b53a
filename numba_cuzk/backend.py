"""Which backend the kernels run on: a real GPU, the CUDA simulator, or the CPU.

Nothing here raises: a missing driver, a missing toolkit or a simulated GPU all read as
"no GPU", so callers can branch on ``cuda_available()`` without a try block.
"""

from __future__ import annotations

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda


def simulator_enabled() -> bool:
    """True when NUMBA_ENABLE_CUDASIM=1: kernels run as Python threads on the CPU."""
    return bool(config.ENABLE_CUDASIM)


def cuda_available() -> bool:
    """True if Numba sees a real GPU (driver and NVVM load); False in the simulator, and
    where the driver's library does not load at all, without loading numba.cuda (whose
    import, ~0.4 s, a machine without a GPU need not pay: _compat item 7)."""
    if simulator_enabled() or not _driver_loads():
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver or toolkit install means "no GPU" here
        return False


def _driver_loads() -> bool:
    """Whether the CUDA driver's library (libcuda, installed with the NVIDIA driver) loads
    (primary_context.driver_library); NUMBA_CUDA_DRIVER (a path of the user's) is numba's
    to try."""
    import os
    import sys

    from numba_cuzk.primary_context import driver_library

    if os.environ.get("NUMBA_CUDA_DRIVER") or not sys.platform.startswith("linux"):
        return True
    return driver_library() is not None


def backend_name() -> str:
    """'cuda', 'cuda-simulator' or 'cpu': where device-array kernels will run."""
    if simulator_enabled():
        return "cuda-simulator"
    return "cuda" if cuda_available() else "cpu"


def describe_devices() -> list[dict]:
    """One dict per real GPU: id, name, compute_capability "M.m", total_memory_bytes.

    Reads device attributes through the driver only; no CUDA context is created.
    """
    if not cuda_available():
        return []
    from numba.cuda.cudadrv.driver import driver

    devices = []
    try:
        for dev_id in range(driver.get_device_count()):
            dev = driver.get_device(dev_id)
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            major, minor = dev.compute_capability
            devices.append({
                "id": dev_id,
                "name": name,
                "compute_capability": f"{major}.{minor}",
                "total_memory_bytes": _total_memory_bytes(driver, dev_id),
            })
    except Exception:
        return devices
    return devices


def _total_memory_bytes(driver, dev_id: int) -> int | None:
    try:
        value = driver.cuDeviceTotalMem(dev_id)
    except Exception:
        return None
    value = value[-1] if isinstance(value, tuple) else value  # raw bindings: (err, bytes)
    return int(value)


def describe_toolchain() -> dict:
    """CUDA versions Numba will use, each "M.m" or 'n/a' where it cannot be read.

    ``runtime`` and ``nvvm`` load the toolkit's libraries (no GPU needed; the simulator
    has neither); ``driver`` needs a driver; ``toolkit_wheel`` is the installed
    cuda-toolkit distribution, the pin that decides which PTX ISA NVVM emits.
    """
    from importlib import metadata

    def dotted(read) -> str:
        try:
            version = tuple(read())
        except Exception:
            return "n/a"
        return ".".join(map(str, version)) if version and min(version) >= 0 else "n/a"

    def wheel(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "n/a"

    info = {"runtime": "n/a", "nvvm": "n/a", "driver": "n/a", "toolkit_wheel": wheel("cuda-toolkit")}
    if simulator_enabled():
        return info
    from numba.cuda.cudadrv import nvvm, runtime

    info["runtime"] = dotted(runtime.runtime.get_version)
    info["nvvm"] = dotted(lambda: nvvm.NVVM().get_version())
    if cuda_available():
        from numba.cuda.cudadrv.driver import driver

        info["driver"] = dotted(driver.get_version)
    return info
