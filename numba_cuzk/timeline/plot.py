"""A timeline as a PNG Gantt chart (matplotlib, Agg; imported only when drawing).

Lanes, top to bottom: one per synthesis worker; per GPU, the host view (lock held and
the cuzk-style GPU_START..GPU_END brackets, which run on past the lock while the host
waits for the device, and overlap when partitions are queued), the device view (kernel
phases timed on the device with CUDA events), in a timeline with CUPTI records the kernels
and copies themselves (by stream), and the idle time by cause over the analysed window. Under them:
queue depth, NVML utilization, and in a timeline with hardware counters (``counters``) one
lane per GPU of SM activity, occupancy, the pipes and DRAM bandwidth (each sample a step over
its period). Time is in seconds on the host clock. A window other
than the whole run is drawn alone (with a 5% margin), so that a steady state after a long
warm-up is not a sliver at the edge of the chart.
"""

from __future__ import annotations

import os

from numba_cuzk.fileio import atomic_write
from numba_cuzk.timeline.analysis import CAUSES, Analysis
from numba_cuzk.timeline.reader import Timeline

LANE_IN = 0.4  # figure height per lane, inches
CAUSE_COLORS = {"download": "#1f77b4", "upload": "#17becf", "alloc": "#9467bd", "sync": "#d62728",
                "epilogue": "#8c564b", "lock_wait": "#ff7f0e", "phase_gap": "#f7b6d2", "launch": "#e377c2",
                "staging": "#9edae5", "pickup": "#ffbb78", "dispatch": "#bcbd22", "starvation": "#7f7f7f"}
STREAM_COLORS = ("#08519c", "#6baed6", "#a50f15", "#fc9272")  # CUPTI records, by stream
TRANSFER_COLOR = "#fd8d3c"  # a streamed query's copies (timed by CUDA events on the copy stream)
Bar = tuple[float, float, str, float]  # start_ms, end_ms, color, height (share of a lane)


def gantt(timeline: Timeline, a: Analysis, path: str | os.PathLike) -> None:
    """Draw ``timeline``, with ``a``'s idle attribution, to the PNG at ``path``."""
    from matplotlib.figure import Figure  # a bare Figure renders with Agg, no pyplot state

    lanes, legend = _lanes(timeline, a)
    sampled = sorted({e["device"] for e in timeline.of("counters")})
    fig = Figure(figsize=(14, 2.5 + LANE_IN * len(lanes) + 3 + 1.6 * len(sampled)), layout="constrained")
    ax, queue_ax, nvml_ax, *counter_axes = fig.subplots(
        3 + len(sampled), 1, sharex=True,
        height_ratios=[max(len(lanes), 2) * LANE_IN, 1.2, 1.2, *[1.6] * len(sampled)])
    _draw_lanes(ax, lanes, legend)
    _draw_queue(queue_ax, a)
    _draw_nvml(nvml_ax, timeline)
    for counter_ax, device in zip(counter_axes, sampled):
        _draw_counters(counter_ax, timeline, device)
    for axis in (ax, queue_ax, nvml_ax, *counter_axes):
        axis.axvspan(a.start_ms / 1e3, a.end_ms / 1e3, color="#2ca02c", alpha=0.06, lw=0)
    if a.window != "whole":
        margin = 0.05 * (a.end_ms - a.start_ms)
        ax.set_xlim((a.start_ms - margin) / 1e3, (a.end_ms + margin) / 1e3)
    ax.set_title(f"{timeline.header.get('host', '?')} pid {timeline.header.get('pid', '?')}: "
                 f"{a.window} window shaded; device busy {_pct(a.mean('busy_pct'))} (phases)"
                 + (f", {_pct(a.mean('kernel_busy_pct'))} (kernels)" if a.traced else "")
                 + f", host brackets {_pct(a.mean('bracket_pct'))}")
    (counter_axes or [nvml_ax])[-1].set_xlabel("time (s)")
    with atomic_write(path) as file:
        fig.savefig(file, dpi=110, format="png")


def _lanes(timeline: Timeline, a: Analysis) -> tuple[list[tuple[str, list[Bar]]], dict[str, str]]:
    """The lanes, each (label, bars), and the legend, label -> color."""
    synthesis = timeline.of("synthesis")
    lanes = []
    for w in sorted({e["worker"] for e in synthesis}):
        mine = [e for e in synthesis if e["worker"] == w]  # two shades tell neighbours apart
        lanes.append((f"synthesis w{w}", [(e["t_ms"], e["end_ms"], ("#6baed6", "#aec7e8")[i % 2], 0.8)
                                          for i, e in enumerate(mine)]))
    phases = sorted({e["phase"] for e in timeline.of("kernel")})
    palette = ("#2ca02c", "#98df8a", "#1f9e89", "#6a3d9a", "#b15928", "#ffd92f", "#fb9a99", "#a6cee3")
    phase_color = {p: palette[i % len(palette)] for i, p in enumerate(phases)}
    legend: dict[str, str] = {}
    for d in a.devices:
        mine = [e for e in timeline.events if e.get("device") == d.device]
        host = [(e["t_ms"], e["end_ms"], "#d9d9d9", 0.8) for e in mine if e["event"] == "lock_held"]
        host += [(e["t_ms"], e["end_ms"], "#525252", 0.4) for e in mine if e["event"] == "gpu_bracket"]
        lanes.append((f"gpu{d.device} host", host))
        lanes.append((f"gpu{d.device} phases",
                      [(e["t_ms"], e["end_ms"], phase_color[e["phase"]], 0.8)
                       for e in mine if e["event"] == "kernel"]))
        transfers = [(e["t_ms"], e["end_ms"], TRANSFER_COLOR, 0.8) for e in mine if e["event"] == "transfer"]
        if transfers:  # a streamed query's chunks on the copy stream, under the kernels they feed
            lanes.append((f"gpu{d.device} transfers", transfers))
            legend["streamed key copies"] = TRANSFER_COLOR
        records = [e for e in mine if e["event"] in ("cupti_kernel", "cupti_memcpy")]
        if records:
            streams = sorted({(e["event"], e["stream"]) for e in records})
            color = {s: STREAM_COLORS[i % len(STREAM_COLORS)] for i, s in enumerate(streams)}
            lanes.append((f"gpu{d.device} kernels, copies",
                          [(e["t_ms"], e["end_ms"], color[(e["event"], e["stream"])], 0.8) for e in records]))
            legend.update({f"{'kernels' if kind == 'cupti_kernel' else 'copies'} stream {stream}": c
                           for (kind, stream), c in color.items()})
        lanes.append((f"gpu{d.device} idle", [(s, e, CAUSE_COLORS[c], 0.8) for s, e, c in d.gaps]))
    causes = {c for d in a.devices for _, _, c in d.gaps}
    legend = {"lock held": "#d9d9d9", "host bracket": "#525252", **phase_color, **legend,
              **{f"idle: {c}": color for c, color in CAUSE_COLORS.items() if c in causes}}
    return lanes, legend


def _draw_lanes(ax, lanes: list[tuple[str, list[Bar]]], legend: dict[str, str]) -> None:
    from matplotlib.patches import Patch

    for row, (_, bars) in enumerate(reversed(lanes)):
        for color, height in dict.fromkeys((c, h) for _, _, c, h in bars):  # in drawing order
            ranges = [(s / 1e3, (e - s) / 1e3) for s, e, c, h in bars if (c, h) == (color, height)]
            ax.broken_barh(ranges, (row - height / 2, height), facecolors=color, edgecolors="white", lw=0.3)
    ax.set_yticks(range(len(lanes)), [label for label, _ in reversed(lanes)])
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    handles = [Patch(facecolor=color, label=label) for label, color in legend.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")


def _draw_queue(ax, a: Analysis) -> None:
    if len(a.queue):
        ax.step(a.queue[:, 0] / 1e3, a.queue[:, 1], where="post", color="#1f77b4")
    ax.set_ylabel("queue depth")


def _draw_nvml(ax, timeline: Timeline) -> None:
    samples = timeline.of("nvml")
    for device in sorted({e["device"] for e in samples}):
        mine = [e for e in samples if e["device"] == device]
        ax.plot([e["t_ms"] / 1e3 for e in mine], [e["util_pct"] for e in mine], label=f"gpu{device}")
    if samples:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.set_ylim(-5, 105)
    ax.set_ylabel("NVML util %")


COUNTER_LINES = (("sm_active_pct", "SM active", "#d62728"), ("sm_occupancy_pct", "occupancy", "#ff9896"),
                 ("int_pipe_pct", "integer pipe", "#1f77b4"), ("fp32_pipe_pct", "FP32 pipe", "#aec7e8"),
                 ("dram_bw_pct", "DRAM bandwidth", "#2ca02c"))


def _draw_counters(ax, timeline: Timeline, device: int) -> None:
    """One GPU's counters, each sample a step over its period."""
    samples = sorted((e for e in timeline.of("counters") if e["device"] == device), key=lambda e: e["t_ms"])
    for metric, label, color in COUNTER_LINES:
        mine = [e for e in samples if metric in e["metrics"]]
        if mine:
            times = [e["t_ms"] / 1e3 for e in mine] + [mine[-1]["end_ms"] / 1e3]
            values = [e["metrics"][metric] for e in mine]
            ax.stairs(values, times, label=label, color=color, baseline=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.set_ylim(-5, 105)
    ax.set_ylabel(f"gpu{device} counters %\n({samples[0]['source']})")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"
