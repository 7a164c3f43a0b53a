"""Hardware counters on the timeline: what the SMs do inside the kernel regions, from NVML's
GPU Performance Monitoring (GPM; Hopper and later, nvidia-ml-py), as ``counters`` events.

    sampler = CounterSampler.start(recorder, devices, period_ms=100)   # counters_unavailable without GPM
    ...                                                                # the engine's work
    sampler.stop()

Every ``period_ms`` the sampler takes one GPM sample per device (``nvmlGpmSampleGet``: the
driver snapshots the device's cumulative counters at the call) and asks NVML for the
metrics between it and the previous one (``nvmlGpmMetricsGet``): one ``counters`` interval
per device and period, from the previous sample's time to this one's, on the timeline's host
clock. A sample's time is the middle of the host readings around its call; half that
bracket is its clock error (``clock_error_us``, the larger of the two ends), a few us.

The metrics (METRICS: GPM id -> event name) are averages over the interval: SM activity
(``sm_active_pct``, the share of SM cycles with a warp resident, averaged over SMs), SM
occupancy (resident warps / the maximum), each pipe's utilization (the share of SM cycles
that pipe issued: integer, FP32, FP64, FP16, tensor), DRAM bandwidth (% of peak) and PCIe /
NVLink rates (MiB/s). On the H200 (driver 580) an integer-multiply kernel read sm_active
96.0, occupancy 55.6, integer 94.9, DRAM 0; idle, all 0.

Where GPM cannot run (no pynvml, no driver, a GPU before Hopper, a virtualized GPU), the
sampler records one ``counters_unavailable`` event saying why, warns once, and the engine
runs on without counters: the report then names no hardware figure. The same event ends a
run in which GPM opened but no period's metrics could be read. A driver that refuses the
whole request for one metric it lacks (NVLink on a PCIe card, say) is asked for each metric
alone once, and the ones it answers are kept. The fallbacks the
project knows are per-phase Nsight Compute ranges (bench/counters.py compares them); CUPTI's
PM sampling is not wired here.
"""

from __future__ import annotations

import threading
import warnings
from typing import Callable, Sequence

from numba_cuzk.engine.record import Recorder, now_ns

SOURCE = "nvml-gpm"
METRICS = {  # GPM metric id (pynvml NVML_GPM_METRIC_*) -> the counters event's metric name
    2: "sm_active_pct",  # SM_UTIL
    3: "sm_occupancy_pct",  # SM_OCCUPANCY
    4: "int_pipe_pct",  # INTEGER_UTIL
    12: "fp32_pipe_pct",  # FP32_UTIL
    11: "fp64_pipe_pct",  # FP64_UTIL
    13: "fp16_pipe_pct",  # FP16_UTIL
    5: "tensor_pipe_pct",  # ANY_TENSOR_UTIL
    10: "dram_bw_pct",  # DRAM_BW_UTIL
    20: "pcie_tx_mib_s",  # PCIE_TX_PER_SEC
    21: "pcie_rx_mib_s",  # PCIE_RX_PER_SEC
    61: "nvlink_tx_mib_s",  # NVLINK_TOTAL_TX_PER_SEC
    60: "nvlink_rx_mib_s",  # NVLINK_TOTAL_RX_PER_SEC
}
PIPES = ("int_pipe_pct", "fp32_pipe_pct", "fp64_pipe_pct", "fp16_pipe_pct", "tensor_pipe_pct")


class CounterWarning(UserWarning):
    """Hardware counters were asked for and cannot be read; the engine runs without them."""


def metrics_of(values: dict[int, tuple[int, float]]) -> dict[str, float]:
    """The event's metrics from nvmlGpmMetricsGet's answers, GPM id -> (nvmlReturn, value):
    the known ids that NVML answered (return 0), rounded to 0.01; an answer it refused
    (a metric the GPU lacks: NVLink on a PCIe card) is left out."""
    return {METRICS[i]: round(float(v), 2) for i, (ret, v) in sorted(values.items()) if i in METRICS and ret == 0}


def pipe_util_pct(metrics: dict[str, float]) -> float | None:
    """The busiest pipe's utilization (%): the issue figure of a sample; None without pipes."""
    pipes = [metrics[p] for p in PIPES if p in metrics]
    return max(pipes) if pipes else None


class _Gpm:
    """One device's GPM: two sample buffers, taken in turn, and the metrics between them."""

    def __init__(self, nvml, handle) -> None:
        support = nvml.nvmlGpmQueryDeviceSupport(handle)
        if not support.isSupportedDevice:
            raise RuntimeError("this GPU has no GPM (GPU Performance Monitoring needs Hopper or later)")
        self._nvml, self._handle = nvml, handle
        self._samples = [nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()]
        self._turn = 0
        self.metric_ids = list(METRICS)  # narrowed once to those the driver answers
        self._narrowed = False

    def sample(self) -> tuple[int, int]:
        """Take a sample into the next buffer: its host bracket (ns)."""
        before = now_ns()
        self._nvml.nvmlGpmSampleGet(self._handle, self._samples[self._turn])
        after = now_ns()
        self._turn ^= 1
        return before, after

    def metrics(self) -> dict[str, float]:
        """The metrics between the older and the newer sample. The first refusal of the whole
        request narrows ``metric_ids`` to the metrics the driver answers one at a time."""
        try:
            return self._get(self.metric_ids)
        except self._nvml.NVMLError:
            if self._narrowed:
                raise
            self._narrowed = True
            self.metric_ids = [i for i in self.metric_ids if self._answers(i)]
            if not self.metric_ids:
                raise
            return self._get(self.metric_ids)

    def _answers(self, metric_id: int) -> bool:
        try:
            self._get([metric_id])
        except self._nvml.NVMLError:
            return False
        return True

    def _get(self, metric_ids: list[int]) -> dict[str, float]:
        nvml = self._nvml
        request = nvml.c_nvmlGpmMetricsGet_t()
        request.version = nvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(metric_ids)
        request.sample1, request.sample2 = self._samples[self._turn], self._samples[self._turn ^ 1]
        for slot, metric_id in enumerate(metric_ids):
            request.metrics[slot].metricId = metric_id
        nvml.nvmlGpmMetricsGet(request)
        return metrics_of({int(request.metrics[slot].metricId): (int(request.metrics[slot].nvmlReturn),
                                                                  request.metrics[slot].value)
                           for slot in range(len(metric_ids))})

    def free(self) -> None:
        for sample in self._samples:
            self._nvml.nvmlGpmSampleFree(sample)


class CounterSampler:
    """GPM counters of ``devices`` ((CUDA ordinal, UUID or None) each) every ``period_ms``,
    written to ``recorder`` as they come, on a thread of its own."""

    def __init__(self, nvml, recorder: Recorder, devices: Sequence[tuple[int, str | None]], period_ms: float) -> None:
        self._nvml, self._recorder, self._period_s = nvml, recorder, period_ms / 1e3
        self._gpms: list[tuple[int, _Gpm]] = []
        for ordinal, uuid in devices:
            handle = (nvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else nvml.nvmlDeviceGetHandleByIndex(ordinal))
            self._gpms.append((ordinal, _Gpm(nvml, handle)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="counters", daemon=True)
        self.samples = 0  # counters events written
        self.last_error: str | None = None  # the last NVML error of a sample or its metrics

    @classmethod
    def start(cls, recorder: Recorder, devices: Sequence[tuple[int, str | None]], period_ms: float = 100.0, *,
              load: Callable[[], object] | None = None) -> CounterSampler | None:
        """A running sampler, or None when GPM cannot run here: then a CounterWarning and a
        ``counters_unavailable`` event say why."""
        try:
            if not devices:
                raise RuntimeError("no GPU to sample (the CPU backend runs no kernels)")
            sampler = cls((load or _load_nvml)(), recorder, devices, period_ms)
        except Exception as exc:  # any failure to load NVML or open GPM: run without counters
            why = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"hardware counters are off: NVML GPM cannot run here ({why})", CounterWarning, stacklevel=2)
            recorder.instant("counters_unavailable", source=SOURCE, error=why)
            return None
        sampler._thread.start()
        return sampler

    def stop(self) -> None:
        """One last sample (the tail of the run), then free the buffers. A run in which no
        period's metrics were read ends with a ``counters_unavailable`` event and a warning."""
        self._stop.set()
        self._thread.join()
        for _, gpm in self._gpms:
            gpm.free()
        self._nvml.nvmlShutdown()
        if not self.samples:
            why = f"GPM opened but no metrics were read ({self.last_error or 'the run ended within one period'})"
            warnings.warn(f"hardware counters are off: {why}", CounterWarning, stacklevel=2)
            self._recorder.instant("counters_unavailable", source=SOURCE, error=why)

    def _run(self) -> None:
        last: dict[int, tuple[int, int]] = {}  # each device's latest sample (its host bracket)
        stopping = False
        while True:
            for ordinal, gpm in self._gpms:
                try:
                    bracket = gpm.sample()
                except self._nvml.NVMLError as exc:
                    self.last_error = f"nvmlGpmSampleGet: {exc}"
                    continue  # a missed sample: the next interval spans both periods
                if ordinal in last:
                    try:
                        self._write(ordinal, last[ordinal], bracket, gpm.metrics())
                    except self._nvml.NVMLError as exc:
                        self.last_error = f"nvmlGpmMetricsGet: {exc}"  # the next period starts at this sample
                last[ordinal] = bracket
            if stopping:
                return
            stopping = self._stop.wait(self._period_s)

    def _write(self, device: int, first: tuple[int, int], second: tuple[int, int], metrics: dict) -> None:
        error_us = max(first[1] - first[0], second[1] - second[0]) / 2e3
        self._recorder.interval("counters", (first[0] + first[1]) // 2, (second[0] + second[1]) // 2,
                                device=device, source=SOURCE, metrics=metrics, clock_error_us=round(error_us, 1))
        self.samples += 1


def _load_nvml():
    """pynvml, initialized (raises ImportError, or pynvml.NVMLError without a driver)."""
    import pynvml

    pynvml.nvmlInit()
    return pynvml
