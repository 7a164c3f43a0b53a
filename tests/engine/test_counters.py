"""The GPM counter sampler through the real pynvml over a stand-in libnvidia-ml that simulates
GPM on the host clock (tests/engine/fake_nvml.py; no GPU here): the parsing, the intervals on
the timeline's clock, and what the sampler says where GPM cannot run."""

from __future__ import annotations

import time

import pytest
from pytest import approx

from numba_cuzk.engine import counters
from numba_cuzk.engine.config import EngineConfig, trace_kinds
from numba_cuzk.engine.record import Recorder
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import reader
from tests.engine.fake_nvml import NVLINK, FakeGpm, loader


@pytest.fixture
def libnvml(monkeypatch):
    """Install a FakeGpm (made by the test's call) as pynvml's library; returns the loader."""
    return lambda lib: loader(lib, monkeypatch)


def _sampled(tmp_path, load, seconds: float, period_ms: float = 10.0):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(TimelineWriter(path))
    sampler = counters.CounterSampler.start(recorder, [(0, "GPU-0")], period_ms=period_ms, load=load)
    time.sleep(seconds)
    sampler.stop()
    recorder.close()
    return sampler, reader.read(path)


def test_metrics_of_keeps_the_known_answered_ids():
    assert counters.metrics_of({2: (0, 96.04), 4: (0, 94.9), 61: (3, 0.0), 999: (0, 1.0)}) == {
        "sm_active_pct": 96.04, "int_pipe_pct": 94.9}
    assert counters.pipe_util_pct({"int_pipe_pct": 94.9, "fp32_pipe_pct": 3.0}) == 94.9
    assert counters.pipe_util_pct({"sm_active_pct": 50.0}) is None


def test_samples_tile_the_host_clock_and_read_the_gpu_over_their_own_interval(tmp_path, libnvml):
    """A GPU busy 60-140 ms into a 0.2 s run: every sample is the simulated GPM over its own
    [t_ms, end_ms], so samples inside the busy span read the busy levels, samples outside
    read 0, and the samples' integral is the busy time."""
    now = time.monotonic_ns()
    lib = FakeGpm(busy=(now + 60_000_000, now + 140_000_000))
    sampler, timeline = _sampled(tmp_path, libnvml(lib), 0.2)
    samples = timeline.of("counters")
    assert 10 <= len(samples) == sampler.samples <= 21  # 0.2 s at 10 ms, and one at stop
    assert all(a["end_ms"] == b["t_ms"] for a, b in zip(samples, samples[1:]))  # each period starts at the last
    t0 = timeline.header["t0_ns"]
    busy = [(lib.busy[0] - t0) / 1e6, (lib.busy[1] - t0) / 1e6]  # the busy span on the timeline's clock
    slack = max(s["clock_error_us"] for s in samples) / 1e3 + 0.01  # ms
    inside = [s for s in samples if busy[0] + slack <= s["t_ms"] and s["end_ms"] <= busy[1] - slack]
    outside = [s for s in samples if s["end_ms"] <= busy[0] - slack or busy[1] + slack <= s["t_ms"]]
    assert len(inside) >= 4 and len(outside) >= 4
    assert all(s["metrics"] == {"sm_active_pct": 100.0, "sm_occupancy_pct": 40.0, "int_pipe_pct": 70.0,
                                "fp32_pipe_pct": 5.0, "dram_bw_pct": 1.5, "pcie_tx_mib_s": 12.0} for s in inside)
    assert all(s["metrics"]["sm_active_pct"] == 0.0 for s in outside)
    integral = sum(s["metrics"]["sm_active_pct"] / 100 * (s["end_ms"] - s["t_ms"]) for s in samples)
    assert integral == approx(80.0, abs=0.1)  # ms busy: the samples lose none and count none twice
    assert {s["source"] for s in samples} == {"nvml-gpm"} and all(s["clock_error_us"] >= 0 for s in samples)


def test_a_driver_that_refuses_the_whole_request_is_asked_metric_by_metric(tmp_path, libnvml):
    lib = FakeGpm(refuse_whole=True)
    sampler, timeline = _sampled(tmp_path, libnvml(lib), 0.06)
    samples = timeline.of("counters")
    assert samples and sampler.samples == len(samples)
    assert set(samples[0]["metrics"]) == {"sm_active_pct", "sm_occupancy_pct", "int_pipe_pct", "fp32_pipe_pct",
                                          "dram_bw_pct", "pcie_tx_mib_s"}
    assert not any(i in NVLINK for i in lib.requests[-1])  # narrowed once, then asked without NVLink
    assert len(lib.requests) <= len(counters.METRICS) + 1 + len(samples)


def test_a_run_without_metrics_ends_with_the_reason(tmp_path, libnvml):
    with pytest.warns(counters.CounterWarning, match="no metrics were read"):
        sampler, timeline = _sampled(tmp_path, libnvml(FakeGpm(broken=True)), 0.05)
    (event,) = timeline.of("counters_unavailable")
    assert sampler.samples == 0 and "nvmlGpmMetricsGet" in event["error"] and not timeline.of("counters")


@pytest.mark.parametrize("load, why", [
    ("no GPM", "has no GPM"),
    (lambda: (_ for _ in ()).throw(ImportError("No module named 'pynvml'")), "No module named 'pynvml'"),
])
def test_where_gpm_cannot_run_the_timeline_says_why(tmp_path, libnvml, load, why):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(TimelineWriter(path))
    load = libnvml(FakeGpm(supported=False)) if load == "no GPM" else load
    with pytest.warns(counters.CounterWarning, match="hardware counters are off"):
        assert counters.CounterSampler.start(recorder, [(0, None)], load=load) is None
    recorder.close()
    (event,) = reader.read(path).of("counters_unavailable")
    assert why in event["error"] and event["source"] == "nvml-gpm"


def test_trace_kinds():
    assert trace_kinds("kernels,counters") == {"kernels", "counters"} and trace_kinds(None) == frozenset()
    with pytest.raises(ValueError, match="not 'kernels,cycles'"):
        EngineConfig(trace="kernels,cycles")
