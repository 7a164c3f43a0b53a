"""The utilization stack on synthetic counter streams whose figures are known by
construction: parsing, the samples placed on the timeline's clock, the stack's arithmetic
per window and per phase, and the report's sentences about each level."""

from __future__ import annotations

import numpy as np
from pytest import approx

from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import report, stack
from numba_cuzk.timeline.analysis import Peaks, analyze
from numba_cuzk.timeline.reader import read

PERIOD = 37.0  # ms: off the partitions' 100 ms grid, so the samples mix the phases in varying shares
END = 16 * PERIOD  # 592 ms: the samples tile the whole window
PHASES = {"ntt": (0.0, 30.0, 90.0, 80.0), "msm": (30.0, 70.0, 50.0, 20.0)}  # start, end, SM active %, int pipe %
PEAKS = Peaks(fr_mul_gps=10.0, fq_mul_gps=5.0)


def _activity(a: float, b: float, column: int) -> float:
    """The exact mean of a counter over [a, b]: each phase's level over its own intervals, 0 elsewhere."""
    total = 0.0
    for i in range(6):
        for start, end, *levels in PHASES.values():
            total += levels[column - 2] * max(0.0, min(b, 100 * i + end) - max(a, 100 * i + start))
    return total / (b - a)


def write(path, counters: bool = True, unavailable: str | None = None) -> None:
    with TimelineWriter(path) as w:
        for i in range(6):
            t, ids = 100.0 * i, {"job": "j", "partition": i}
            w.interval("gpu_bracket", t, t + 80, **ids, device=0, gpu_worker=0)
            w.kernel("ntt", t, t + 30, **ids, device=0, fr_muls=150_000_000)  # 15 ms at 10 G/s
            w.kernel("msm", t + 30, t + 70, **ids, device=0, fq_muls=50_000_000)  # 10 ms at 5 G/s
            w.device("cupti_kernel", t, t + 28, device=0, stream=7, name="ntt_pass")
            w.device("cupti_kernel", t + 30, t + 70, device=0, stream=7, name="accumulate_g1")
        w.instant("done", at_ms=END, job="j", partition=5)
        if unavailable:
            w.instant("counters_unavailable", at_ms=0.0, source="nvml-gpm", error=unavailable)
        for k in range(16 if counters else 0):
            a, b = k * PERIOD, (k + 1) * PERIOD
            w.interval("counters", a, b, device=0, source="nvml-gpm", clock_error_us=3.0, metrics={
                "sm_active_pct": _activity(a, b, 2), "int_pipe_pct": _activity(a, b, 3),
                "sm_occupancy_pct": 40.0, "dram_bw_pct": 1.0})


def test_samples_are_parsed_in_time_order_with_absent_metrics_as_nan(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path)
    samples = stack.samples_of(read(path).of("counters"), 0)
    assert samples.spans.shape == (16, 2) and samples.spans[-1, 1] == END
    assert np.isnan(samples.values["fp32_pipe_pct"]).all() and samples.values["sm_occupancy_pct"][0] == 40.0


def test_a_sample_counts_by_its_overlap_with_the_span():
    samples = stack.Samples(np.array([[0.0, 10.0], [10.0, 20.0]]), {"sm_active_pct": np.array([100.0, 0.0])})
    assert stack.weighted_mean(samples, "sm_active_pct", np.array([[5.0, 20.0]])) == approx(100 * 5 / 15)
    assert stack.weighted_mean(samples, "sm_active_pct", np.array([[30.0, 40.0]])) is None


def test_the_window_stack_is_the_levels_of_the_whole_run(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path)
    a = analyze(read(path), peaks=PEAKS)
    s = a.stack
    assert (a.start_ms, a.end_ms) == (0.0, END)
    assert s.bracket_pct == approx(100 * 6 * 80 / END) and s.kernel_pct == approx(100 * 6 * 68 / END)
    assert s.sm_active_pct == approx(6 * (90 * 30 + 50 * 40) / END)  # the exact mean over the window
    assert (s.pipe, s.pipe_pct) == ("integer", approx(6 * (80 * 30 + 20 * 40) / END))
    assert s.useful_pct == approx(100 * 6 * (15 + 10) / END)
    assert s.fr_gps == approx(6 * 0.15 / END * 1e3) and a.counters_source == "nvml-gpm"
    assert s.bracket_pct > s.kernel_pct > s.sm_active_pct > s.pipe_pct > s.useful_pct


def test_each_phase_gets_its_own_activity_back_from_the_mixed_samples(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path)
    phases = {p.label: p for p in analyze(read(path), peaks=PEAKS).phase_stacks}
    ntt, msm = phases["ntt"], phases["msm"]
    assert ntt.span_ms == 180 and ntt.kernel_pct == approx(100 * 28 / 30) and msm.kernel_pct == approx(100)
    assert ntt.sm_active_pct == approx(90) and msm.sm_active_pct == approx(50)
    assert ntt.pipe_pct == approx(80) and msm.pipe_pct == approx(20)
    assert ntt.useful_pct == approx(50) and msm.useful_pct == approx(25)
    assert msm.sm_idle_kernel_ms() == approx(6 * 40 * 0.5) and ntt.sm_idle_kernel_ms() == approx(6 * (28 - 27))


def test_too_few_samples_leave_the_phases_unresolved():
    samples = stack.Samples(np.array([[0.0, 10.0]]), {"sm_active_pct": np.array([50.0])})
    phases = {"a": np.array([[0.0, 4.0]]), "b": np.array([[4.0, 10.0]])}
    assert stack.phase_activity(samples, "sm_active_pct", phases, (0.0, 10.0)) == {"a": None, "b": None}


def test_the_report_says_each_level_and_where_the_gap_lies(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path)
    a = analyze(read(path), peaks=PEAKS)
    one, two, three, four, five, gap = report.stack_sentences(a)
    assert one.startswith("1. Host brackets") and f"{100 * 480 / END:.1f}% of the whole window" in one
    assert "CUPTI kernel records" in two and f"{100 * 408 / END:.1f}%" in two
    assert "3. SM active (nvml-gpm)" in three and f"{6 * 4700 / END:.1f}%" in three
    assert "4. Busiest pipe, integer" in four
    assert "Fr 10.0 G/s, Fq 5.0 G/s" in five and f"{100 * 150 / END:.1f}%" in five
    assert gap.index("msm 120 ms") < gap.index("ntt 6 ms")  # the MSM holds most SM-idle kernel time
    assert report.short(a).splitlines()[-1].startswith("stack: host brackets")
    assert report.to_dict(a)["stack"]["window"]["sm_active_pct"] == approx(6 * 4700 / END, abs=1e-3)


def test_without_counters_the_report_says_why(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, counters=False, unavailable="RuntimeError: this GPU has no GPM")
    a = analyze(read(path), peaks=PEAKS)
    assert a.stack.sm_active_pct is None and a.stack.kernel_pct is not None
    assert any("unavailable: RuntimeError: this GPU has no GPM" in line for line in report.stack_sentences(a))
    assert report.short(a).splitlines()[-1] == "hardware counters unavailable: RuntimeError: this GPU has no GPM"


def test_the_png_has_a_counters_lane(tmp_path):
    from numba_cuzk.timeline import plot

    path = tmp_path / "t.jsonl"
    write(path)
    timeline = read(path)
    plot.gantt(timeline, analyze(timeline), tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")
