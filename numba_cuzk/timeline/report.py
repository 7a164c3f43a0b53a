"""An Analysis as rich tables (the terminal), a dict (``--json``), or a few lines (the
end of ``numba-cuzk run``)."""

from __future__ import annotations

import math

from rich.table import Table

from numba_cuzk.timeline.analysis import CAUSES, Analysis

UTILIZATION = (  # (DeviceFigures attribute, column heading)
    ("bracket_pct", "host brackets %"),
    ("lock_held_pct", "lock held %"),
    ("held_idle_pct", "lock held, device idle %"),
    ("busy_pct", "device busy, phases %"),
    ("kernel_busy_pct", "device busy, kernels %"),
    ("phase_gap_pct", "launch gaps inside phases %"),
    ("outside_phases_pct", "kernels outside phases %"),
    ("idle_in_bracket_pct", "idle in brackets %"),
    ("nvml_mean_pct", "NVML mean %"),
    ("nvml_zero_pct", "NVML at 0 %"),
)


def to_dict(a: Analysis) -> dict:
    """Every figure, JSON-ready; ms and % rounded to 1 us and 0.001%."""
    devices = [{"device": d.device, **{name: getattr(d, name) for name, _ in UTILIZATION}} for d in a.devices]
    gaps = a.gaps_ms
    starvation = [b - s for _, s, b in a.balance.starvation]
    return _rounded({
        "window": {"name": a.window, "start_ms": a.start_ms, "end_ms": a.end_ms, "span_ms": a.span_ms},
        "utilization": {"all": {name: a.mean(name) for name, _ in UTILIZATION}, "devices": devices},
        "gaps": {
            "priority": list(CAUSES),
            "total_ms": gaps,
            "pct_of_span": {cause: _share(ms, a) for cause, ms in gaps.items()},
            "per_partition_ms": {cause: _per_partition(ms, a) for cause, ms in gaps.items()},
        },
        "kernels": {"peaks_gps": {"fr_mul": a.peaks.fr_mul_gps, "fq_mul": a.peaks.fq_mul_gps},
                    "phases": [vars(p) for p in a.phases], "records": [vars(k) for k in a.kernels],
                    "launches_per_partition": _launches_per_partition(a), "clock": a.clock},
        "balance": {
            **{k: v for k, v in vars(a.balance).items() if k != "starvation"},
            "starvation": {"episodes": len(starvation), "total_ms": sum(starvation),
                           "longest_ms": max(starvation, default=0.0),
                           "intervals": [list(episode) for episode in a.balance.starvation]},
            "queue_depth": a.queue.tolist(),  # whole run: rows [t_ms, depth from then on]
        },
        "stack": {"window": vars(a.stack) if a.stack else None, "phases": [vars(p) for p in a.phase_stacks],
                  "counters_source": a.counters_source, "counters_unavailable": a.counters_unavailable,
                  "sentences": stack_sentences(a)},
        "partitions": [vars(p) for p in a.partitions],
        "done": a.done,
        "failed": a.failed,
    })


def tables(a: Analysis) -> list[Table]:
    """Utilization, idle time by cause, kernel efficiency, the kernel records (with a
    trace) and balance, for rich to print."""
    return [_utilization(a), _stack(a), _gaps(a), _kernels(a), *([_records(a)] if a.traced else []), _balance(a)]


def short(a: Analysis) -> str:
    """Three lines: the utilization levels, where the idle time went, the balance; a fourth,
    the utilization stack, in a timeline with counters (or the reason it has none)."""
    if not a.devices:
        return f"no kernels in the {a.window} window: nothing ran on a GPU"
    causes = sorted(((ms, cause) for cause, ms in a.gaps_ms.items() if ms > 0), reverse=True)
    idle = ", ".join(f"{cause} {_share(ms, a):.1f}%" for ms, cause in causes[:4]) or "none"
    b = a.balance
    nvml = a.mean("nvml_mean_pct")
    busy = a.mean("kernel_busy_pct") if a.traced else a.mean("busy_pct")
    level = (f"device busy {busy:.1f}% (kernel records; phases {a.mean('busy_pct'):.1f}%, launch gaps inside "
             f"phases {a.mean('phase_gap_pct'):.1f}%)" if a.traced else f"device busy {busy:.1f}% (phases)")
    return "\n".join([
        f"GPU over the {a.window} window ({a.span_ms / 1e3:.2f} s): {level}, "
        f"host brackets {a.mean('bracket_pct'):.1f}%, lock held {a.mean('lock_held_pct'):.1f}%"
        + ("" if nvml is None else f", NVML {nvml:.0f}%"),
        f"device idle {100 - busy:.1f}%: {idle}",
        f"per partition: synthesis {_ms(b.synthesis_ms)} vs GPU kernels {_ms(b.kernel_ms)}; synthesis workers "
        f"{b.workers}, to keep the GPU fed {'-' if b.workers_needed is None else b.workers_needed}",
        *_stack_line(a),
    ])


def _stack_line(a: Analysis) -> list[str]:
    s = a.stack
    if s is not None and s.sm_active_pct is not None:
        return [f"stack: host brackets {_pct(s.bracket_pct)}% > kernels {_pct(s.kernel_pct)}% > SM active "
                f"{_pct(s.sm_active_pct)}% > {s.pipe or '-'} pipe {_pct(s.pipe_pct)}% > useful work "
                f"{_pct(s.useful_pct)}% ({a.counters_source})"]
    return [f"hardware counters unavailable: {a.counters_unavailable}"] if a.counters_unavailable else []


GAP_CAUSE = ("a kernel runs but some SMs hold no warp: grids that do not fill the SMs (few blocks, or "
             "blocks too large to sit several per SM), and each launch's tail, where the last blocks run "
             "on a few SMs while the rest wait for the next launch")


def stack_sentences(a: Analysis) -> list[str]:
    """The report's words about each level of the stack, and about the gap between kernel
    time (level 2) and SM activity (level 3): which phases hold it."""
    s = a.stack
    if s is None:
        return []
    kernels = "CUPTI kernel records" if s.kernel_source == "cupti" else "the CUDA-event phases (no kernel records)"
    lines = [
        f"1. Host brackets (cuzk's GPU_START..GPU_END): {_pct(s.bracket_pct)}% of the {a.window} window.",
        f"2. Kernel time, from {kernels}: {_pct(s.kernel_pct)}%; host brackets minus kernels "
        f"{_signed(s.bracket_pct, s.kernel_pct)} points (host waits and launch gaps the brackets count as busy).",
    ]
    if s.sm_active_pct is None:
        why = a.counters_unavailable or "the timeline has no counters (run with --trace counters)"
        return lines + [f"3-4. SM activity and pipe utilization: unavailable: {why}.", _useful(a, s)]
    within = 100 * s.sm_active_pct / s.kernel_pct if s.kernel_pct else None
    lines.append(f"3. SM active ({a.counters_source}): {_pct(s.sm_active_pct)}% of SM cycles had a warp resident; "
                 f"while a kernel ran, {_pct(within)}% of the SMs were active on average (occupancy "
                 f"{_pct(s.occupancy_pct)}% of the warp slots, DRAM bandwidth {_pct(s.dram_bw_pct)}% of peak).")
    share = 100 * s.pipe_pct / s.sm_active_pct if s.pipe_pct is not None and s.sm_active_pct else None
    lines.append(f"4. Busiest pipe, {s.pipe or '-'}: {_pct(s.pipe_pct)}% of SM cycles issued to it "
                 f"({_pct(share)}% of the active SMs' cycles).")
    lines.append(_useful(a, s))
    return lines + [_gap_sentence(a, s)]


def _useful(a: Analysis, s) -> str:
    return (f"5. Useful work: Fr {s.fr_gps:.2f} G/s and Fq {s.fq_gps:.2f} G/s of field products, "
            f"{_pct(s.useful_pct)}% of the window at the measured peaks (Fr {a.peaks.fr_mul_gps} G/s, "
            f"Fq {a.peaks.fq_mul_gps} G/s).")


def _gap_sentence(a: Analysis, s) -> str:
    idle_ms = s.sm_idle_kernel_ms() or 0.0
    text = (f"Kernel busy {_pct(s.kernel_pct)}% vs SM active {_pct(s.sm_active_pct)}%: "
            f"{_signed(s.kernel_pct, s.sm_active_pct)} points ({idle_ms:.0f} ms) where {GAP_CAUSE}.")
    phases = sorted(((p.sm_idle_kernel_ms(), p) for p in a.phase_stacks if p.sm_idle_kernel_ms() is not None),
                    key=lambda pair: -pair[0])
    if not phases:
        return text + " The samples do not tell the phases apart (too few, or phases always in step)."
    parts = [f"{p.label} {ms:.0f} ms ({100 * ms / idle_ms if idle_ms else 0:.0f}%; SM active "
             f"{_pct(100 * p.sm_active_pct / p.kernel_pct if p.kernel_pct else None)}% of its kernel time)"
             for ms, p in phases[:3]]
    return text + " By phase, the most SM-idle kernel time: " + ", ".join(parts) + "."


def _signed(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a - b:+.1f}"


def _stack(a: Analysis) -> Table:
    source = f"counters: {a.counters_source}" if a.counters_source else "no counters"
    table = Table(title=f"Utilization stack, % of each span ({source}; useful work at Fr {a.peaks.fr_mul_gps}, "
                        f"Fq {a.peaks.fq_mul_gps} G/s)")
    for heading in ("span", "ms", "1 host brackets", "2 kernels", "3 SM active", "4 busiest pipe", "5 useful",
                    "occupancy", "DRAM"):
        table.add_column(heading, justify="left" if heading == "span" else "right")
    for row in ([a.stack] if a.stack else []) + a.phase_stacks:
        pipe = "-" if row.pipe_pct is None else f"{row.pipe} {row.pipe_pct:.1f}"
        table.add_row(row.label, f"{row.span_ms:.1f}", _pct(row.bracket_pct), _pct(row.kernel_pct),
                      _pct(row.sm_active_pct), pipe, _pct(row.useful_pct), _pct(row.occupancy_pct),
                      _pct(row.dram_bw_pct), style="bold" if row is a.stack else None)
    return table


TRACED = {"kernel_busy_pct", "phase_gap_pct", "outside_phases_pct"}  # columns of a timeline with kernel records


def _utilization(a: Analysis) -> Table:
    table = Table(title=f"GPU utilization, {a.window} window ({a.span_ms:.1f} ms)")
    shown = [(name, heading) for name, heading in UTILIZATION if a.traced or name not in TRACED]
    table.add_column("device")
    for _, heading in shown:
        table.add_column(heading, justify="right")
    rows = [(str(d.device), [getattr(d, name) for name, _ in shown]) for d in a.devices]
    if len(a.devices) > 1:
        rows.append(("all", [a.mean(name) for name, _ in shown]))
    for label, values in rows:
        table.add_row(label, *(_pct(v) for v in values))
    return table


def _gaps(a: Analysis) -> Table:
    table = Table(title="Device idle time by cause, in priority order")
    for heading in ("cause", "ms", "% of span", "ms / partition"):
        table.add_column(heading, justify="left" if heading == "cause" else "right")
    gaps = a.gaps_ms
    for cause, ms in gaps.items():
        table.add_row(cause, f"{ms:.1f}", _pct(_share(ms, a)), _ms(_per_partition(ms, a)),
                      style=None if ms > 0 else "dim")
    total = sum(gaps.values())
    table.add_row("idle", f"{total:.1f}", _pct(_share(total, a)), _ms(_per_partition(total, a)), style="bold")
    return table


def _kernels(a: Analysis) -> Table:
    table = Table(title=f"Kernel efficiency (peaks: Fr {a.peaks.fr_mul_gps} G/s, Fq {a.peaks.fq_mul_gps} G/s)"
                  + ("; over the kernel records inside each phase" if a.traced else ""))
    headings = ("phase", "phases", "phase ms", *(("kernel ms", "launches") if a.traced else ()),
                "Fr G/s", "Fq G/s", "% of peak")
    for heading in headings:
        table.add_column(heading, justify="left" if heading == "phase" else "right")
    for p in a.phases:
        traced = (_number(p.kernel_ms, ".1f"), _number(p.launches, "d")) if a.traced else ()
        table.add_row(p.phase, str(p.kernels), f"{p.device_ms:.1f}", *traced, f"{p.fr_gmul_s:.2f}",
                      f"{p.fq_gmul_s:.2f}", _pct(p.efficiency_pct))
    return table


def _records(a: Analysis, shown: int = 12) -> Table:
    """The kernel records by name, most device time first; the clock mapping's quality."""
    clock = a.clock or {}
    low, high = clock.get("bound_ns", (None, None))
    fit = {True: "every marker inside its host bracket", False: "a marker OUTSIDE its host bracket"}.get(
        clock.get("markers_fit"), "no markers")
    title = (f"Kernels (CUPTI), {_launches_per_partition(a) or 0:.0f} launches per partition; clock mapping: "
             f"{fit}, error within [{_us(low)}, {_us(high)}] us")
    table = Table(title=title)
    for heading in ("kernel", "launches", "device ms", "mean us"):
        table.add_column(heading, justify="left" if heading == "kernel" else "right")
    for k in a.kernels[:shown]:
        table.add_row(k.name, str(k.launches), f"{k.device_ms:.1f}", f"{k.mean_us:.1f}")
    if len(a.kernels) > shown:
        rest = a.kernels[shown:]
        table.add_row(f"{len(rest)} more", str(sum(k.launches for k in rest)),
                      f"{sum(k.device_ms for k in rest):.1f}", "", style="dim")
    return table


def _launches_per_partition(a: Analysis) -> float | None:
    return sum(k.launches for k in a.kernels) / len(a.partitions) if a.kernels and a.partitions else None


def _number(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _us(ns) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def _balance(a: Analysis) -> Table:
    b = a.balance
    starvation = [end - start for _, start, end in b.starvation]
    table = Table(title="Balance", show_header=False)
    for label, value in (
        ("partitions in the window", str(len(a.partitions))),
        ("synthesis per partition", _ms(b.synthesis_ms)),
        ("GPU (kernels) per partition", _ms(b.kernel_ms)),
        ("synthesis workers: now, to keep the GPU fed", f"{b.workers}, {b.workers_needed or '-'}"),
        ("queue depth: mean, max", f"{b.queue_mean:.2f}, {b.queue_max}"),
        ("starvation: episodes, total, longest",
         f"{len(starvation)}, {sum(starvation):.1f} ms, {max(starvation, default=0.0):.1f} ms"),
        ("partitions done, failed (whole run)", f"{a.done}, {a.failed}"),
    ):
        table.add_row(label, value)
    return table


def _share(ms: float, a: Analysis) -> float:
    """``ms`` of device time as % of the span times the devices."""
    return 100 * ms / (a.span_ms * max(len(a.devices), 1))


def _per_partition(ms: float, a: Analysis) -> float | None:
    return ms / len(a.partitions) if a.partitions else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _rounded(value):
    """``value`` with its floats rounded to 3 decimals (non-finite ones as None)."""
    if isinstance(value, float):
        return round(value, 3) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value
