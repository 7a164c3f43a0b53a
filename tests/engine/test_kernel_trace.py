"""Kernel tracing without a GPU: a fake CUPTI module whose clock runs ahead of the host's by
a known (drifting) offset, and whose records are known, checks the mapping onto the
timeline's clock, the marker check, the events written and the fallback without CUPTI."""

from __future__ import annotations

import enum
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from numba_cuzk.engine import Engine, EngineConfig
from numba_cuzk.engine import kernel_trace as kt
from numba_cuzk.engine.record import Recorder, now_ns
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import reader

OFFSET_NS = 5_000_000_000  # the fake CUPTI clock minus the host's
NUMBA_NAME = "_ZN6cudapy10numba_cuzk3msm7kernels13accumulate_g1B2v1B96cw51cXTLSUwv1sCUt9Ww1FEOCSCwiVGMAPuTE5ArrayIjLi2E"


class FakeCupti:
    """What KernelTrace uses of cupti-python; ``drift``: offset ns gained per host ns."""

    class ActivityKind(enum.IntEnum):
        MEMCPY = 1
        CONCURRENT_KERNEL = 10

    class ActivityMemcpyKind(enum.IntEnum):
        HTOD = 1
        DTOH = 2

    def __init__(self, drift: float = 0.0, marker_fits: bool = True) -> None:
        self.drift, self.marker_fits = drift, marker_fits
        self.enabled: set[int] = set()
        self.pending: list = []
        self.callbacks = None
        self.t_start = now_ns()

    def offset(self, host_ns: int) -> int:
        return OFFSET_NS + round(self.drift * (host_ns - self.t_start))

    def get_timestamp(self) -> int:
        host = now_ns()
        return host + self.offset(host)

    def activity_register_callbacks(self, requested, completed) -> None:
        assert self.callbacks is None, "registered twice"
        self.callbacks = (requested, completed)

    def activity_enable(self, kind) -> None:
        self.enabled.add(int(kind))

    def activity_disable(self, kind) -> None:
        self.enabled.discard(int(kind))

    def activity_flush_all(self, flag: int) -> None:
        size, _ = self.callbacks[0]()
        assert size >= 1 << 20
        records, self.pending = self.pending, []
        self.callbacks[1](records)

    def kernel(self, host_start: int, host_end: int, device=0, stream=7, name=NUMBA_NAME) -> None:
        self.pending.append(SimpleNamespace(kind=self.ActivityKind.CONCURRENT_KERNEL, device_id=device,
                                            stream_id=stream, name=name, start=host_start + self.offset(host_start),
                                            end=host_end + self.offset(host_end)))

    def copy(self, host_start: int, host_end: int, nbytes: int, device=0, stream=8, kind=1) -> None:
        self.pending.append(SimpleNamespace(kind=self.ActivityKind.MEMCPY, device_id=device, stream_id=stream,
                                            copy_kind=kind, bytes=nbytes, start=host_start + self.offset(host_start),
                                            end=host_end + self.offset(host_end)))

    def marker(self, device: int) -> None:
        """A marker copy inside the caller's bracket (or, not fitting, 1 ms before it)."""
        start = now_ns() + (2_000 if self.marker_fits else -1_000_000)
        self.copy(start, start + 1_000, kt.MARKER_BYTES, device=device)
        while now_ns() < start + 4_000:
            pass


def traced(tmp_path, cupti: FakeCupti, work) -> reader.Timeline:
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as writer:
        trace = kt.KernelTrace.start(Recorder(writer), [0], load=lambda: cupti, marker=cupti.marker)
        assert trace is not None and cupti.enabled == {1, 10}
        work(cupti)
        trace.stop()
        assert cupti.enabled == set()
    return reader.read(path)


def ms(host_ns: int, timeline: reader.Timeline) -> float:
    return (host_ns - timeline.header["t0_ns"]) / 1e6


def tolerance_ms(timeline: reader.Timeline) -> float:
    """The mapping's own error bound: both calibrations' errors, and 1 us of rounding."""
    (clock,) = timeline.of("cupti_clock")
    return (2 * clock["error_ns"] + 1_000) / 1e6


def test_records_land_on_the_host_clock(tmp_path):
    base = now_ns()
    timeline = traced(tmp_path, FakeCupti(), lambda c: (c.kernel(base + 1_000_000, base + 3_000_000),
                                                      c.kernel(base + 2_000_000, base + 4_000_000, stream=9),
                                                      c.copy(base + 5_000_000, base + 6_000_000, 4096, kind=2)))
    kernels = timeline.of("cupti_kernel")
    assert [(k["stream"], k["name"]) for k in kernels] == [(7, "accumulate_g1"), (9, "accumulate_g1")]
    for k, start in zip(kernels, (1_000_000, 2_000_000)):
        assert k["t_ms"] == pytest.approx(ms(base + start, timeline), abs=tolerance_ms(timeline))
        assert k["end_ms"] - k["t_ms"] == pytest.approx(2.0, abs=0.002)
    (copy,) = timeline.of("cupti_memcpy")  # the markers are not written as copies
    assert (copy["copy_kind"], copy["bytes"]) == ("DTOH", 4096)
    (clock,) = timeline.of("cupti_clock")
    assert clock["markers_fit"] is True
    assert abs(clock["offsets_ns"][0] - OFFSET_NS) <= clock["error_ns"] + 1_000
    low, high = clock["bound_ns"]
    assert low <= 0 <= high


def test_a_drifting_clock_is_followed(tmp_path):
    cupti = FakeCupti(drift=1e-3)  # 1 ms per s: far beyond NTP's slew, to be seen
    base = now_ns()

    def work(c):
        while now_ns() < base + 20_000_000:  # 20 ms: 20 us of drift
            pass
        c.kernel(base + 10_000_000, base + 11_000_000)

    timeline = traced(tmp_path, cupti, work)
    (kernel,) = timeline.of("cupti_kernel")
    assert kernel["t_ms"] == pytest.approx(ms(base + 10_000_000, timeline), abs=tolerance_ms(timeline))
    (clock,) = timeline.of("cupti_clock")
    assert clock["offsets_ns"][1] - clock["offsets_ns"][0] > 10_000


def test_a_marker_outside_its_bracket_is_reported(tmp_path):
    (clock,) = traced(tmp_path, FakeCupti(marker_fits=False), lambda c: None).of("cupti_clock")
    assert clock["markers_fit"] is False
    assert clock["bound_ns"][0] < -900_000  # the mapped marker ends ~1 ms before its bracket


def test_a_held_up_marker_does_not_widen_the_bound(tmp_path):
    """The host stalls 5 ms inside one marker's bracket (a loaded machine): that bracket's
    bound is 5 ms wide, its check's others are a few us, and the check's narrowest counts."""
    cupti, calls = FakeCupti(), []

    def marker(device):
        cupti.marker(device)
        calls.append(device)
        if len(calls) == 2:
            stall = now_ns() + 5_000_000
            while now_ns() < stall:
                pass

    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as writer:
        trace = kt.KernelTrace.start(Recorder(writer), [0], load=lambda: cupti, marker=marker)
        trace.stop()
    (clock,) = reader.read(path).of("cupti_clock")
    assert len(calls) == 2 * kt.MARKS_PER_CHECK and clock["markers_fit"] is True
    low, high = clock["bound_ns"]
    assert low <= 0 <= high and high - low < 1_000_000, clock


def test_interpolation_between_calibrations():
    first, last = kt.Calibration(1_000, 100, 5), kt.Calibration(3_000, 300, 5)
    stamps = np.array([600, 1_100, 2_200, 3_400, 9_300])  # host 500, 1000, 2000 (offset 200), 3100, 9000
    assert kt.to_host_ns(stamps, first, last).tolist() == [500, 1_000, 2_000, 3_100, 9_000]


def test_calibration_takes_the_narrowest_bracket():
    host = iter([0, 50, 100, 110, 200, 400])  # brackets of 50, 10 and 200 ns
    stamps = iter([1_025, 1_105, 1_300])
    cal = kt.calibrate(lambda: next(stamps), lambda: next(host), reads=3)
    assert (cal.at_ns, cal.offset_ns, cal.error_ns) == (105, 1_000, 5)


@pytest.mark.parametrize("name, short", [(NUMBA_NAME, "accumulate_g1"), ("vector_add", "vector_add"),
                                         ("_ZN2ab", "ab"), ("_ZNfoo", "_ZNfoo")])
def test_short_names(name, short):
    assert kt.short_name(name) == short


def test_without_cupti_the_engine_says_so_once_and_runs(tmp_path):
    path = tmp_path / "t.jsonl"
    with pytest.warns(kt.KernelTraceWarning, match="kernel tracing is off"):
        with Engine(EngineConfig(synthesis="thread", synthesis_workers=1, trace="kernels", timeline_path=path)) as e:
            assert e.trace is None
    (event,) = reader.read(path).of("cupti_unavailable")
    assert "CPU backend" in event["error"]
    with pytest.raises(ValueError, match="trace names kinds out of kernels, counters"):
        EngineConfig(trace="everything")


def test_a_library_that_cannot_load_and_a_second_trace(tmp_path):
    def missing():
        raise ImportError("No module named 'cupti'")

    recorder = Recorder(None)
    with pytest.warns(kt.KernelTraceWarning, match="No module named 'cupti'"):
        assert kt.KernelTrace.start(recorder, [0], load=missing) is None
    cupti = FakeCupti()
    first = kt.KernelTrace.start(recorder, [0], load=lambda: cupti, marker=cupti.marker)
    with pytest.warns(kt.KernelTraceWarning, match="another kernel trace"):
        assert kt.KernelTrace.start(recorder, [0], load=lambda: cupti, marker=cupti.marker) is None
    first.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = kt.KernelTrace.start(recorder, [0], load=lambda: cupti, marker=cupti.marker)  # the same registration
    again.stop()
