"""The utilization stack: five levels of "how busy was the GPU", each a % of the same span,
from the host's view down to useful arithmetic (docs/utilization.md says what each means).

1. ``bracket_pct``: host brackets, cuzk's GPU_START..GPU_END (a window only: a phase lies
   inside its partition's bracket).
2. ``kernel_pct``: a kernel ran (CUPTI records; the CUDA-event phases without them).
3. ``sm_active_pct``: SM cycles with a warp resident, averaged over the SMs (GPM counters).
4. ``pipe_pct``: the busiest pipe's share of SM cycles (``pipe`` names it: integer for the
   Montgomery products).
5. ``useful_pct``: the time the span's field products would take at the measured peaks
   (numba_cuzk.timeline.peaks), over the span: 100% = every moment at bench.field's rate.

Counters are averages over sampling periods (100 ms), longer than most phases. Over a window
a level is the overlap-weighted mean of the samples (sum v_i |s_i ∩ W| / sum |s_i ∩ W|).
Per phase, each sample is a mixture: v_i = sum_p a_p |s_i ∩ P_p| / |s_i| (time outside every
phase counts as idle: GPM reads 0 there), and the phase's own activity a_p is the least
squares solution over the window's samples (clipped to [0, 100]), which partitions that fall
differently across the sampling grid make determinate; with fewer samples than phases, or
phases that never separate (always in the same proportion), the per-phase figure is None.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numba_cuzk.timeline import intervals as iv

PIPES = {"int_pipe_pct": "integer", "fp32_pipe_pct": "FP32", "fp64_pipe_pct": "FP64", "fp16_pipe_pct": "FP16",
         "tensor_pipe_pct": "tensor"}
SAMPLED = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", *PIPES)


@dataclass
class Stack:
    """The five levels over one span (``label``: the window's name, or a phase's), each % of
    ``span_ms`` (device ms: summed over devices); ``kernel_source`` "cupti" or "phases";
    ``pipe`` the busiest pipe's name; ``fr_gps`` / ``fq_gps`` the products per second of the
    span; ``occupancy_pct``, ``dram_bw_pct`` beside level 3. A level the timeline cannot give
    is None."""

    label: str
    span_ms: float
    bracket_pct: float | None
    kernel_pct: float | None
    kernel_source: str
    sm_active_pct: float | None
    pipe_pct: float | None
    pipe: str | None
    useful_pct: float | None
    fr_gps: float
    fq_gps: float
    occupancy_pct: float | None = None
    dram_bw_pct: float | None = None
    kernel_ms: float | None = None

    def sm_idle_kernel_ms(self) -> float | None:
        """Kernel time with the SMs idle (level 2 minus level 3, in device ms)."""
        if self.kernel_pct is None or self.sm_active_pct is None:
            return None
        return max(0.0, (self.kernel_pct - self.sm_active_pct) * self.span_ms / 100)


@dataclass
class Samples:
    """One device's counters: rows [t_ms, end_ms] and each metric's values (NaN: absent)."""

    spans: np.ndarray
    values: dict[str, np.ndarray]


def samples_of(counters: list[dict], device: int) -> Samples:
    """The ``counters`` events of ``device`` as arrays, in time order."""
    mine = sorted((e for e in counters if e["device"] == device), key=lambda e: e["t_ms"])
    spans = iv.as_array([(e["t_ms"], e["end_ms"]) for e in mine])
    values = {m: np.array([float(e["metrics"].get(m, np.nan)) for e in mine]) for m in SAMPLED}
    return Samples(spans, values)


def overlap(samples: Samples, union: np.ndarray) -> np.ndarray:
    """ms of each sample inside ``union`` (a union of intervals)."""
    out = np.zeros(len(samples.spans))
    for i, (a, b) in enumerate(samples.spans):
        out[i] = iv.length(iv.intersect(iv.as_array([(a, b)]), union))
    return out


def weighted_mean(samples: Samples, metric: str, union: np.ndarray) -> float | None:
    """The overlap-weighted mean of ``metric`` over ``union``; None where no sample with the
    metric overlaps it."""
    weights, values = overlap(samples, union), samples.values[metric]
    known = ~np.isnan(values) & (weights > 0)
    return float(np.sum(values[known] * weights[known]) / np.sum(weights[known])) if known.any() else None


def phase_activity(samples: Samples, metric: str, phases: dict[str, np.ndarray],
                   window: tuple[float, float]) -> dict[str, float | None]:
    """Each phase's own ``metric`` while it runs: the least-squares unmixing of the samples
    inside ``window`` (module docstring); ``phases``: name -> union of its intervals."""
    names = sorted(phases)
    inside = (samples.spans[:, 0] >= window[0]) & (samples.spans[:, 1] <= window[1]) if len(samples.spans) else []
    values = samples.values[metric][inside] if len(samples.spans) else np.zeros(0)
    spans = samples.spans[inside] if len(samples.spans) else iv.EMPTY
    known = ~np.isnan(values)
    spans, values = spans[known], values[known]
    if not names or len(values) < len(names) + 1:
        return {name: None for name in names}
    lengths = spans[:, 1] - spans[:, 0]
    mix = np.column_stack([overlap(Samples(spans, {}), phases[n]) / lengths for n in names])
    if np.linalg.matrix_rank(mix, tol=1e-6) < len(names):
        return {name: None for name in names}
    solution, *_ = np.linalg.lstsq(mix, values, rcond=None)
    return {name: float(np.clip(a, 0.0, 100.0)) for name, a in zip(names, solution)}


def busiest_pipe(means: dict[str, float | None]) -> tuple[str | None, float | None]:
    """(name, %) of the pipe with the highest mean; (None, None) without pipe figures."""
    known = {m: v for m, v in means.items() if m in PIPES and v is not None}
    if not known:
        return None, None
    metric = max(known, key=known.get)
    return PIPES[metric], known[metric]


def useful(fr_muls: float, fq_muls: float, span_ms: float, fr_peak_gps: float,
           fq_peak_gps: float) -> tuple[float | None, float, float]:
    """(useful %, Fr G/s, Fq G/s) of the products over ``span_ms``: the ms they take at the
    peaks (products / (G/s * 1e6)), over the span."""
    if span_ms <= 0:
        return None, 0.0, 0.0
    at_peak_ms = fr_muls / (fr_peak_gps * 1e6) + fq_muls / (fq_peak_gps * 1e6)
    return 100 * at_peak_ms / span_ms, fr_muls / span_ms / 1e6, fq_muls / span_ms / 1e6


def window_stack(label: str, window: tuple[float, float], device_levels: dict[int, tuple[float, float]],
                 kernel_source: str, samples: dict[int, Samples], phase_events: list[dict],
                 peaks: tuple[float, float]) -> Stack:
    """The stack over ``window`` (start_ms, end_ms), the mean over devices:
    ``device_levels`` device -> (bracket %, kernel %); ``phase_events`` the ``kernel`` phases
    that start in the window (their product counts); ``peaks`` (Fr, Fq) G/s."""
    span_ms = (window[1] - window[0]) * max(len(device_levels), 1)
    whole = iv.as_array([window])
    means = {m: _mean([weighted_mean(samples[d], m, whole) for d in device_levels if d in samples]) for m in SAMPLED}
    pipe, pipe_pct = busiest_pipe(means)
    fr, fq = (sum(e.get(n, 0) for e in phase_events) for n in ("fr_muls", "fq_muls"))
    useful_pct, fr_gps, fq_gps = useful(fr, fq, span_ms, *peaks)
    kernel_pct = _mean([k for _, k in device_levels.values()])
    return Stack(label, span_ms, _mean([b for b, _ in device_levels.values()]), kernel_pct, kernel_source,
                 means["sm_active_pct"], pipe_pct, pipe, useful_pct, fr_gps, fq_gps, means["sm_occupancy_pct"],
                 means["dram_bw_pct"], None if kernel_pct is None else kernel_pct * span_ms / 100)


def phase_stacks(window: tuple[float, float], phase_events: list[dict], records: dict[int, np.ndarray],
                 samples: dict[int, Samples], peaks: tuple[float, float]) -> list[Stack]:
    """Levels 2-5 of each phase over its own intervals (those that start in the window):
    kernel records inside them, the phase's own counters (``phase_activity``), its products."""
    devices = sorted({int(e["device"]) for e in phase_events})
    unions = {d: {} for d in devices}
    for d in devices:
        for name in sorted({e["phase"] for e in phase_events if e["device"] == d}):
            unions[d][name] = iv.union(iv.as_array([(e["t_ms"], e["end_ms"]) for e in phase_events
                                                    if e["device"] == d and e["phase"] == name]))
    activity = {d: {m: phase_activity(samples[d], m, unions[d], window) for m in SAMPLED}
                for d in devices if d in samples}
    stacks = []
    for name in sorted({e["phase"] for e in phase_events}):
        mine = [d for d in devices if name in unions[d]]
        spans = {d: iv.length(unions[d][name]) for d in mine}
        span_ms = sum(spans.values())
        kernel_ms = sum(iv.length(iv.intersect(unions[d][name], records[d])) for d in mine if d in records) \
            if records else span_ms

        def level(metric: str) -> float | None:
            known = [(activity[d][metric][name], spans[d]) for d in mine if d in activity
                     and activity[d][metric][name] is not None]
            weight = sum(w for _, w in known)
            return sum(v * w for v, w in known) / weight if known and weight > 0 else None

        means = {m: level(m) for m in SAMPLED}
        pipe, pipe_pct = busiest_pipe(means)
        group = [e for e in phase_events if e["phase"] == name]
        fr, fq = (sum(e.get(n, 0) for e in group) for n in ("fr_muls", "fq_muls"))
        counted = any("fr_muls" in e or "fq_muls" in e for e in group)
        useful_pct, fr_gps, fq_gps = useful(fr, fq, span_ms, *peaks)
        stacks.append(Stack(name, span_ms, None, 100 * kernel_ms / span_ms if span_ms > 0 else None,
                            "cupti" if records else "phases", means["sm_active_pct"], pipe_pct, pipe,
                            useful_pct if counted else None, fr_gps, fq_gps, means["sm_occupancy_pct"],
                            means["dram_bw_pct"], kernel_ms))
    return stacks


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None
