"""The GPM counter sampler with a stand-in pynvml (no GPU here): the metrics it parses, the
intervals it writes on the timeline's clock, and what it says where GPM cannot run."""

from __future__ import annotations

import time
import types

import pytest

from numba_cuzk.engine import counters
from numba_cuzk.engine.config import EngineConfig, trace_kinds
from numba_cuzk.engine.record import Recorder
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import reader


def fake_gpm(supported: bool = True, metric_error: int = 0) -> types.ModuleType:
    """One GPU whose GPM reads SM activity 80%, integer pipe 70%, FP32 5%; NVLink refused
    (return code ``metric_error`` for it, as on a PCIe card)."""
    nvml = types.ModuleType("pynvml")
    nvml.NVMLError = type("NVMLError", (Exception,), {})
    nvml.NVML_GPM_METRICS_GET_VERSION = 1
    taken = []
    values = {2: 80.0, 3: 40.0, 4: 70.0, 12: 5.0, 10: 1.5, 20: 12.0}

    def metrics_get(request):
        assert request.sample1 != request.sample2  # two distinct buffers, older first
        for slot in range(request.numMetrics):
            m = request.metrics[slot]
            m.value, m.nvmlReturn = values.get(m.metricId, 0.0), 0 if m.metricId in values else metric_error or 3

    class Request:
        def __init__(self):
            self.metrics = [types.SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0) for _ in range(32)]

    nvml.c_nvmlGpmMetricsGet_t = Request
    nvml.nvmlGpmQueryDeviceSupport = lambda h: types.SimpleNamespace(isSupportedDevice=int(supported))
    nvml.nvmlGpmSampleAlloc = lambda: object()
    nvml.nvmlGpmSampleGet = lambda h, sample: taken.append(sample)
    nvml.nvmlGpmSampleFree = lambda sample: None
    nvml.nvmlGpmMetricsGet = metrics_get
    nvml.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)
    nvml.nvmlDeviceGetHandleByUUID = lambda u: ("gpu", u)
    nvml.nvmlShutdown = lambda: None
    nvml.taken = taken
    return nvml


def test_metrics_of_keeps_the_known_answered_ids():
    assert counters.metrics_of({2: (0, 96.04), 4: (0, 94.9), 61: (3, 0.0), 999: (0, 1.0)}) == {
        "sm_active_pct": 96.04, "int_pipe_pct": 94.9}
    assert counters.pipe_util_pct({"int_pipe_pct": 94.9, "fp32_pipe_pct": 3.0}) == 94.9
    assert counters.pipe_util_pct({"sm_active_pct": 50.0}) is None


def test_samples_are_contiguous_intervals_on_the_host_clock(tmp_path):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(TimelineWriter(path))
    before = time.monotonic_ns()
    sampler = counters.CounterSampler.start(recorder, [(0, None)], period_ms=10, load=fake_gpm)
    time.sleep(0.15)
    sampler.stop()
    after = time.monotonic_ns()
    recorder.close()
    timeline = reader.read(path)
    samples = timeline.of("counters")
    assert 5 <= len(samples) == sampler.samples <= 20  # 0.15 s at 10 ms, and one at stop
    t0 = timeline.header["t0_ns"]
    assert (before - t0) / 1e6 <= samples[0]["t_ms"] and samples[-1]["end_ms"] <= (after - t0) / 1e6
    assert all(a["end_ms"] == b["t_ms"] for a, b in zip(samples, samples[1:]))  # each period starts at the last
    assert samples[0]["metrics"] == {"sm_active_pct": 80.0, "sm_occupancy_pct": 40.0, "int_pipe_pct": 70.0,
                                     "fp32_pipe_pct": 5.0, "dram_bw_pct": 1.5, "pcie_tx_mib_s": 12.0}
    assert {s["source"] for s in samples} == {"nvml-gpm"} and all(s["clock_error_us"] >= 0 for s in samples)


@pytest.mark.parametrize("load, why", [
    (lambda: fake_gpm(supported=False), "has no GPM"),
    (lambda: (_ for _ in ()).throw(ImportError("No module named 'pynvml'")), "No module named 'pynvml'"),
])
def test_where_gpm_cannot_run_the_timeline_says_why(tmp_path, load, why):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(TimelineWriter(path))
    with pytest.warns(counters.CounterWarning, match="hardware counters are off"):
        assert counters.CounterSampler.start(recorder, [(0, None)], load=load) is None
    recorder.close()
    (event,) = reader.read(path).of("counters_unavailable")
    assert why in event["error"] and event["source"] == "nvml-gpm"


def test_trace_kinds():
    assert trace_kinds("kernels,counters") == {"kernels", "counters"} and trace_kinds(None) == frozenset()
    with pytest.raises(ValueError, match="not 'kernels,cycles'"):
        EngineConfig(trace="kernels,cycles")
