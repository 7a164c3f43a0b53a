"""The NVML sampler: GPU utilization and used memory of the engine's GPUs, every
``period_ms``, as timeline ``nvml`` events, on a thread of its own.

NVML's utilization is the share of its last sample period (1/6 s to 1 s, by GPU) in which
any kernel ran: coarse, and blind to how busy each kernel keeps the chip, which is why the
timeline times kernels with CUDA events as well. nvidia-ml-py (``pynvml``) is optional:
without it, without a driver, or without GPUs, the sampler records nothing and raises
nothing. GPUs are matched to NVML handles by UUID (CUDA and NVML number devices
differently under CUDA_VISIBLE_DEVICES), else by ordinal.
"""

from __future__ import annotations

import threading
from typing import Sequence

from numba_cuzk.engine.record import Recorder


class NvmlSampler:
    """``devices``: (CUDA ordinal, UUID or None) of each GPU to sample."""

    def __init__(self, recorder: Recorder, devices: Sequence[tuple[int, str | None]], period_ms: float) -> None:
        self._recorder, self._period_s = recorder, period_ms / 1e3
        self._stop = threading.Event()
        self._nvml = _load_nvml() if devices else None
        self._handles = self._open(devices) if self._nvml else []
        self._thread = threading.Thread(target=self._run, name="nvml", daemon=True)
        if self._handles:
            self._thread.start()

    @property
    def sampling(self) -> bool:
        return bool(self._handles)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._nvml:
            self._nvml.nvmlShutdown()

    def _open(self, devices: Sequence[tuple[int, str | None]]) -> list:
        handles = []
        for ordinal, uuid in devices:
            try:
                handle = (self._nvml.nvmlDeviceGetHandleByUUID(uuid) if uuid
                          else self._nvml.nvmlDeviceGetHandleByIndex(ordinal))
            except self._nvml.NVMLError:
                continue  # this GPU goes unsampled; the others are still sampled
            handles.append((ordinal, handle))
        return handles

    def _run(self) -> None:
        while not self._stop.is_set():
            for ordinal, handle in self._handles:
                try:
                    util = self._nvml.nvmlDeviceGetUtilizationRates(handle).gpu
                    used = self._nvml.nvmlDeviceGetMemoryInfo(handle).used
                except self._nvml.NVMLError:
                    continue  # a missed sample, not a failed run
                self._recorder.instant("nvml", device=ordinal, util_pct=int(util), mem_used_bytes=int(used))
            self._stop.wait(self._period_s)


def _load_nvml():
    """pynvml, initialized; None without it or without a driver."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    return pynvml
