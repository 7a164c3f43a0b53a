"""A stand-in libnvidia-ml for the real pynvml (its ctypes structures and wrappers), no GPU
needed: GPM simulated on the host clock. Each sample holds the monotonic time of its
nvmlGpmSampleGet, and the metrics between two samples are the means over that interval of a
GPU busy from ``busy[0]`` to ``busy[1]`` (LEVELS while busy, 0 otherwise)."""

from __future__ import annotations

import ctypes
import time

import pynvml

LEVELS = {2: 100.0, 3: 40.0, 4: 70.0, 12: 5.0, 10: 1.5}  # GPM id -> its value while the GPU is busy
PCIE_TX = 20  # answered always, 12.0 MiB/s
NVLINK = (60, 61)  # refused (a PCIe card)


class FakeGpm:
    """libnvidia-ml's entry points that the sampler uses, as ctypes callbacks: one GPU busy on
    the host's monotonic clock from ``busy[0]`` to ``busy[1]`` (ns); ``refuse_whole``: the
    driver fails a request that names a metric it lacks (else it refuses that metric alone);
    ``broken``: every metrics request fails."""

    def __init__(self, busy: tuple[int, int] = (0, 0), supported: bool = True, refuse_whole: bool = False,
                 broken: bool = False) -> None:
        self.busy, self.supported, self.refuse_whole, self.broken = busy, supported, refuse_whole, broken
        self.taken: dict[int, int] = {}  # sample buffer address -> monotonic ns of its last nvmlGpmSampleGet
        self.buffers, self.requests = [], []
        ok, c = 0, ctypes
        device_p, sample = c.POINTER(pynvml.c_nvmlDevice_t), pynvml.c_nvmlGpmSample_t
        self.nvmlInitWithFlags = c.CFUNCTYPE(c.c_int, c.c_uint)(lambda flags: ok)
        self.nvmlShutdown = c.CFUNCTYPE(c.c_int)(lambda: ok)
        self.nvmlDeviceGetHandleByIndex_v2 = c.CFUNCTYPE(c.c_int, c.c_uint, device_p)(self._handle)
        self.nvmlDeviceGetHandleByUUID = c.CFUNCTYPE(c.c_int, c.c_char_p, device_p)(lambda uuid, out: self._handle(0, out))
        self.nvmlGpmQueryDeviceSupport = c.CFUNCTYPE(c.c_int, pynvml.c_nvmlDevice_t, c.POINTER(
            pynvml.c_nvmlGpmSupport_t))(self._support)
        self.nvmlGpmSampleAlloc = c.CFUNCTYPE(c.c_int, c.POINTER(sample))(self._alloc)
        self.nvmlGpmSampleFree = c.CFUNCTYPE(c.c_int, sample)(lambda s: ok)
        self.nvmlGpmSampleGet = c.CFUNCTYPE(c.c_int, pynvml.c_nvmlDevice_t, sample)(self._take)
        self.nvmlGpmMetricsGet = c.CFUNCTYPE(c.c_int, c.POINTER(pynvml.c_nvmlGpmMetricsGet_t))(self._metrics)

    def _handle(self, index, out) -> int:
        self.buffers.append(ctypes.create_string_buffer(8))
        out[0] = ctypes.cast(self.buffers[-1], pynvml.c_nvmlDevice_t)
        return 0

    def _support(self, device, out) -> int:
        out.contents.isSupportedDevice = int(self.supported)
        return 0

    def _alloc(self, out) -> int:
        self.buffers.append(ctypes.create_string_buffer(64))
        out[0] = ctypes.cast(self.buffers[-1], pynvml.c_nvmlGpmSample_t)
        return 0

    def _take(self, device, sample) -> int:
        self.taken[ctypes.cast(sample, ctypes.c_void_p).value] = time.monotonic_ns()
        return 0

    def busy_share(self, a: int, b: int) -> float:
        """The share of [a, b] (ns) that the GPU was busy."""
        return max(0, min(b, self.busy[1]) - max(a, self.busy[0])) / (b - a)

    def _metrics(self, request_p) -> int:
        request = request_p.contents
        a, b = (self.taken[ctypes.cast(s, ctypes.c_void_p).value] for s in (request.sample1, request.sample2))
        ids = [request.metrics[k].metricId for k in range(request.numMetrics)]
        self.requests.append(ids)
        if self.broken or a >= b or (self.refuse_whole and any(i in NVLINK for i in ids)):
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        for k, metric_id in enumerate(ids):
            m = request.metrics[k]
            known = metric_id in LEVELS or metric_id == PCIE_TX
            m.nvmlReturn = 0 if known else pynvml.NVML_ERROR_NOT_SUPPORTED
            m.value = 12.0 if metric_id == PCIE_TX else LEVELS.get(metric_id, 0.0) * self.busy_share(a, b)
        return 0


def loader(lib: FakeGpm, monkeypatch):
    """A CounterSampler ``load``: pynvml with ``lib`` as its library, initialized."""
    def load():
        monkeypatch.setattr(pynvml, "nvmlLib", lib)
        monkeypatch.setattr(pynvml, "_nvmlGetFunctionPointer_cache", {})
        pynvml.nvmlInit()
        return pynvml
    return load
