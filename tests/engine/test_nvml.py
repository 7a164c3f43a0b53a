"""The NVML sampler with a stand-in pynvml (no GPU here), and without pynvml or a driver."""

from __future__ import annotations

import sys
import time
import types

from numba_cuzk.engine.nvml import NvmlSampler
from numba_cuzk.engine.record import Recorder
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import reader


def fake_pynvml(init_fails: bool = False) -> types.ModuleType:
    """Two GPUs: "GPU-a" at 40% using 1 GiB, index 1 at 70% using 2 GiB; any other UUID is unknown."""
    nvml = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def init():
        if init_fails:
            raise NVMLError("driver not loaded")

    def by_uuid(uuid):
        if uuid != "GPU-a":
            raise NVMLError("not found")
        return (40, 1 << 30)

    nvml.NVMLError = NVMLError
    nvml.nvmlInit, nvml.nvmlShutdown = init, lambda: None
    nvml.nvmlDeviceGetHandleByUUID = by_uuid
    nvml.nvmlDeviceGetHandleByIndex = lambda index: (70, 2 << 30)
    nvml.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=h[0])
    nvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=h[1])
    return nvml


def _sample(tmp_path, devices, seconds=0.2):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(TimelineWriter(path))
    sampler = NvmlSampler(recorder, devices, period_ms=20)
    time.sleep(seconds)
    sampler.stop()
    recorder.close()
    return sampler, reader.read(path).of("nvml")


def test_samples_every_period(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    sampler, samples = _sample(tmp_path, [(0, "GPU-a"), (1, None), (2, "GPU-gone")])
    assert sampler.sampling
    by_device = {d: [s for s in samples if s["device"] == d] for d in (0, 1, 2)}
    assert 4 <= len(by_device[0]) <= 15 and 4 <= len(by_device[1]) <= 15  # 0.2 s at 20 ms
    assert not by_device[2]  # a GPU NVML does not know goes unsampled
    assert {(s["util_pct"], s["mem_used_bytes"]) for s in by_device[0]} == {(40, 1 << 30)}
    assert {(s["util_pct"], s["mem_used_bytes"]) for s in by_device[1]} == {(70, 2 << 30)}


def test_no_driver_or_no_pynvml_records_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(init_fails=True))
    sampler, samples = _sample(tmp_path, [(0, "GPU-a")], seconds=0.05)
    assert not sampler.sampling and not samples
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    sampler, samples = _sample(tmp_path, [(0, "GPU-a")], seconds=0.05)
    assert not sampler.sampling and not samples
