"""Honest GPU utilization: the eight figures of a timeline, over a window.

Times are ms on the timeline's host clock; shares are % of the window's span.

Windows
-------
``whole``: from the first event to the last event's end (NVML samples and counters aside:
the samplers run before the first partition and after the last).

``steady``: whole partition periods with the pipeline full. On each device, order the
partitions it proved by the start of their first kernel, s_1 < s_2 < ... < s_n. The period
[s_i, s_i+1) holds everything between two partitions' first kernels: the kernels, the
lock hand-over, staging, waits. The first partition is warm-up (JIT compilation, first
allocations) and the last is drain (nothing left to overlap), so the device's steady
state is [s_2, s_n), and the timeline's is the intersection over devices,
[max s_2, min s_n]. It needs at least 3 partitions on every device (ValueError if empty).

Figures (``analyze``), per device, plus "all" = the mean over devices
-------------------------------------------------------------------
1. ``bracket_pct``: union of host ``gpu_bracket`` intervals (cuzk's GPU_START..GPU_END) /
   span. A union, so two GPU workers' overlapping brackets never count twice.
2. ``lock_held_pct``: union of ``lock_held`` intervals / span; ``held_idle_pct``: the
   lock held while the device is idle, / span (the lock's own cost: launching while the
   device still runs the previous partition costs nothing).
3. ``busy_pct``: union of device-timed ``kernel`` phase intervals (CUDA events around a
   group of launches) / span. ``kernel_busy_pct``, in a timeline with CUPTI records
   (``trace="kernels"``): the union of the ``cupti_kernel`` intervals / span, the device's
   own account; ``phase_gap_pct`` = phases minus kernels, the launch gaps inside phases that
   ``busy_pct`` counts as busy; ``outside_phases_pct`` = kernels outside every phase (a
   key's warm-up, or a clock mapping that is off). Where kernel records exist they are
   the device's busy time for everything below ("busy"); otherwise the phases are.
   ``idle_in_bracket_pct`` is brackets minus busy, what figure 1 counts as busy though the
   device was idle.
4. ``nvml_mean_pct``, ``nvml_zero_pct``: mean NVML utilization of the window's samples,
   and the share of those samples at 0%.
5. ``phases``: kernel efficiency per phase, over the phases that start in the window:
   achieved products (G/s) = products / device time, and efficiency % = the time the
   products would take at the peaks, (fr_muls / fr peak + fq_muls / fq peak), over the
   device time: the phases' kernel records' union inside them where the timeline has
   records (``kernel_ms``, ``launches``), else the phase intervals. Phases without
   operation counts have no efficiency. ``kernels`` lists the CUPTI kernels that start in
   the window by name: launches, device ms, mean us.
6. ``gaps_ms``: every idle ms of the window (span minus busy) assigned to exactly one
   cause, the first in CAUSES whose condition holds (below); ``Analysis.gaps_ms`` totals
   them over devices, and ``per_partition`` divides by the partitions in the window.
7. ``balance``: per-partition synthesis vs GPU (kernel device) time, queue depth over
   time, starvation episodes, and the synthesis workers that would keep the GPUs fed.
8. ``stack``, ``phase_stacks``: the utilization stack (numba_cuzk.timeline.stack): host
   brackets, kernel time, SM active, the busiest pipe, useful work at the measured peaks,
   each a % of the window (of a phase's own time, per phase); levels 3-4 from the
   ``counters`` events (``counters_source`` names their source; ``counters_unavailable``
   says why a traced run has none).

Partitions in the window: those whose first kernel starts in [start, end).

Gap causes, in priority order (the device is idle, and ...)
-----------------------------------------------------------
==========  ==============================================================================
download    results of a partition on this device are being copied to the host
upload      a partition is in flight here while a ``staging`` upload to this device runs:
            its kernels wait for the upload (staging while nothing is in flight, e.g.
            during an epilogue outside the lock, is off the device's critical path)
alloc       an allocation for this device runs (a key made resident: buffers, kernels compiled)
sync        the host is in a synchronize on this device
epilogue    an epilogue runs inside this device's lock
lock_wait   a GPU worker of this device waits for its lock while nobody holds it
phase_gap   inside a kernel phase (kernel records only): the host had not launched the
            phase's next kernel yet, a launch gap that the phase figure counts as busy
launch      a partition is in flight here (picked up, its device work not yet seen done):
            host work before or between kernel launches that no event above explains
staging     nothing in flight here while a partition for it is being staged (its witness
            copied into a pinned slot and uploaded): the device waits for the stager
pickup      nothing in flight here, a partition is staged for it, and no GPU worker has
            taken it yet: the workers are busy elsewhere, or cannot run (another thread
            holds the GIL: an epilogue's pairing check, say)
dispatch    nothing in flight here, yet a partition is queued and not staged: every slot
            holds a proof in flight, or the stager is behind
starvation  nothing in flight here and the queue is empty: synthesis is behind
==========  ==============================================================================

Recorded activities come first, the most specific (a transfer) before the general (a
synchronize); then the lock's own cost; then unexplained time with work in hand; then
no work. Waiting for a lock that another worker holds is not a cause: the holder's time
is, and it is attributed by the rules above; ``lock_wait_ms`` per partition reports the
wait itself.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from numba_cuzk.timeline import intervals as iv
from numba_cuzk.timeline import peaks
from numba_cuzk.timeline import stack as st
from numba_cuzk.timeline.reader import Timeline

WINDOWS = ("whole", "steady")
CAUSES = ("download", "upload", "alloc", "sync", "epilogue", "lock_wait", "phase_gap", "launch", "staging",
          "pickup", "dispatch", "starvation")

Key = tuple[str, int]  # (job, partition)


@dataclass(frozen=True)
class Peaks:
    """Peak field-product rates (G/s) that kernel efficiency and useful work are measured
    against. The defaults are the H200's latest measured fr_mul and fq_mul
    (numba_cuzk.timeline.peaks, written from bench/results by bench/peaks.py)."""

    fr_mul_gps: float = peaks.FR_MUL_GPS
    fq_mul_gps: float = peaks.FQ_MUL_GPS


@dataclass
class DeviceFigures:
    """Figures 1-4 and 6 for one device; ``gaps`` are the idle runs (start_ms, end_ms,
    cause) behind ``gaps_ms``, for drawing."""

    device: int
    bracket_pct: float
    lock_held_pct: float
    held_idle_pct: float
    busy_pct: float
    kernel_busy_pct: float | None
    phase_gap_pct: float | None
    outside_phases_pct: float | None
    idle_in_bracket_pct: float
    nvml_mean_pct: float | None
    nvml_zero_pct: float | None
    gaps_ms: dict[str, float]
    gaps: list[tuple[float, float, str]] = field(repr=False)


@dataclass
class PhaseFigures:
    """Figure 5 for one kernel phase: ``kernels`` phase intervals, ``device_ms`` their time,
    ``kernel_ms`` and ``launches`` the kernel records inside them (None without records),
    achieved Fr / Fq products (G/s) and efficiency (% of peak; None without counts) over
    kernel_ms where known, else device_ms."""

    phase: str
    kernels: int
    device_ms: float
    kernel_ms: float | None
    launches: int | None
    fr_gmul_s: float
    fq_gmul_s: float
    efficiency_pct: float | None


@dataclass
class KernelFigures:
    """CUPTI kernels of one name that start in the window: ``launches``, ``device_ms``
    (their summed durations), ``mean_us``."""

    name: str
    launches: int
    device_ms: float
    mean_us: float


@dataclass
class PartitionFigures:
    """One partition's times (ms): synthesis, queued -> picked up, lock wait, lock held
    (its launches) and kernel device time (its kernel records inside its phases where the
    timeline has records, else its phases); None where the timeline has no such event."""

    job: str
    partition: int
    device: int
    synthesis_ms: float | None
    queued_ms: float | None
    lock_wait_ms: float | None
    lock_held_ms: float | None
    kernel_ms: float


@dataclass
class Balance:
    """Figure 7. ``synthesis_ms`` and ``kernel_ms`` (kernel device time) are means over the
    window's partitions;
    ``workers`` the synthesis workers seen; ``workers_needed`` = ceil(devices *
    synthesis_ms / kernel_ms), the workers whose output matches what the GPUs consume,
    assuming synthesis keeps its speed as workers are added (enough cores). Queue depth
    is time-weighted over the window; ``starvation`` holds (device, start_ms, end_ms)."""

    synthesis_ms: float | None
    kernel_ms: float | None
    workers: int
    workers_needed: int | None
    queue_mean: float
    queue_max: int
    starvation: list[tuple[int, float, float]]


@dataclass
class Analysis:
    """Everything ``analyze`` finds. ``queue`` is the whole run's queue depth as a step
    function: rows (t_ms, depth from t_ms on); ``done`` and ``failed`` count those events
    over the whole run."""

    window: str
    start_ms: float
    end_ms: float
    devices: list[DeviceFigures]
    phases: list[PhaseFigures]
    kernels: list[KernelFigures]
    partitions: list[PartitionFigures]
    balance: Balance
    queue: np.ndarray = field(repr=False)
    peaks: Peaks
    done: int
    failed: int
    clock: dict | None = None  # the cupti_clock event: how the kernel records were mapped
    stack: st.Stack | None = None  # the utilization stack over the window (mean over devices)
    phase_stacks: list[st.Stack] = field(default_factory=list)  # levels 2-5 per phase
    counters_source: str | None = None  # where levels 3-4 come from ("nvml-gpm"); None: no counters
    counters_unavailable: str | None = None  # why there are none, where the timeline says

    @property
    def traced(self) -> bool:
        """Whether the figures rest on kernel records (CUPTI)."""
        return any(d.kernel_busy_pct is not None for d in self.devices)

    @property
    def span_ms(self) -> float:
        return self.end_ms - self.start_ms

    @property
    def gaps_ms(self) -> dict[str, float]:
        """Idle ms per cause, summed over devices."""
        return {cause: sum(d.gaps_ms[cause] for d in self.devices) for cause in CAUSES}

    def mean(self, name: str) -> float | None:
        """Device figure ``name`` averaged over the devices that have it (the "all" row)."""
        values = [getattr(d, name) for d in self.devices if getattr(d, name) is not None]
        return sum(values) / len(values) if values else None


def analyze(timeline: Timeline, window: str = "whole", peaks: Peaks = Peaks()) -> Analysis:
    """The eight figures of ``timeline`` over ``window`` ("whole" or "steady")."""
    events = _by_name(timeline)
    start_ms, end_ms = _window(events, window)
    first_kernel = _first_kernel_starts(events["kernel"])
    keys = {key for key, (_, t) in first_kernel.items() if start_ms <= t < end_ms}
    queue = _queue_depth(events)
    records = _records(events["cupti_kernel"])
    devices = [_device_figures(events, d, start_ms, end_ms, queue, records.get(d))
               for d in sorted({device for device, _ in first_kernel.values()})]
    by_partition = _by_partition(timeline)
    partitions = [_partition_figures(by_partition[key], key, first_kernel[key][0], records)
                  for key in sorted(keys)]
    clock = events["cupti_clock"]
    stacks = _stacks(events, devices, start_ms, end_ms, records, peaks, window)
    return Analysis(
        window=window, start_ms=start_ms, end_ms=end_ms, devices=devices,
        phases=_phases(events, start_ms, end_ms, peaks, records),
        kernels=_kernels(events["cupti_kernel"], start_ms, end_ms), partitions=partitions,
        balance=_balance(events, devices, partitions, queue, start_ms, end_ms),
        queue=queue, peaks=peaks, done=len(events["done"]), failed=len(events["failed"]),
        clock={k: v for k, v in clock[-1].items() if k not in ("event", "t_ms")} if clock else None,
        **stacks,
    )


def _stacks(events: dict[str, list[dict]], devices: list[DeviceFigures], start_ms: float, end_ms: float,
            records: dict[int, np.ndarray], peaks: Peaks, window: str) -> dict:
    """The utilization stack of the window and of each phase (numba_cuzk.timeline.stack),
    and where its counters come from."""
    samples = {d.device: st.samples_of(events["counters"], d.device) for d in devices
               if any(e["device"] == d.device for e in events["counters"])}
    in_window = [e for e in events["kernel"] if start_ms <= e["t_ms"] < end_ms]
    levels = {d.device: (d.bracket_pct, d.busy_pct if d.kernel_busy_pct is None else d.kernel_busy_pct)
              for d in devices}
    rates = (peaks.fr_mul_gps, peaks.fq_mul_gps)
    unavailable = events["counters_unavailable"]
    return {
        "stack": st.window_stack(window, (start_ms, end_ms), levels, "cupti" if records else "phases", samples,
                                 in_window, rates) if devices else None,
        "phase_stacks": st.phase_stacks((start_ms, end_ms), in_window, records, samples, rates),
        "counters_source": next((e["source"] for e in events["counters"]), None),
        "counters_unavailable": unavailable[-1]["error"] if unavailable else None,
    }


def _records(kernels: list[dict]) -> dict[int, np.ndarray]:
    """Per device, the union of its CUPTI kernel records (the whole run)."""
    return {d: iv.union(_spans(kernels, device=d)) for d in sorted({int(e["device"]) for e in kernels})}


def _window(events: dict[str, list[dict]], window: str) -> tuple[float, float]:
    """[start_ms, end_ms] of ``window`` (the module docstring defines them); ValueError
    if it is empty."""
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {', '.join(WINDOWS)}, not {window!r}")
    if window == "whole":
        timed = [e for name, group in events.items() if name not in ("nvml", "counters") for e in group]
        if not timed:
            raise ValueError("the timeline has no events")
        start_ms, end_ms = min(e["t_ms"] for e in timed), max(e.get("end_ms", e["t_ms"]) for e in timed)
        if end_ms <= start_ms:
            raise ValueError("the timeline spans no time")
        return start_ms, end_ms
    starts = defaultdict(list)
    for device, t_ms in _first_kernel_starts(events["kernel"]).values():
        starts[device].append(t_ms)
    short = {d: len(s) for d, s in starts.items() if len(s) < 3}
    if not starts or short:  # s_2 < s_n needs n >= 3
        raise ValueError(f"no steady state: it needs 3 partitions with kernels per device ({short or 'none'})")
    start_ms = max(sorted(s)[1] for s in starts.values())
    end_ms = min(max(s) for s in starts.values())
    if end_ms <= start_ms:
        raise ValueError("no steady state: the devices' steady periods do not overlap")
    return start_ms, end_ms


def _by_name(timeline: Timeline) -> dict[str, list[dict]]:
    groups = defaultdict(list)
    for event in timeline.events:
        groups[event["event"]].append(event)
    return groups


def _by_partition(timeline: Timeline) -> dict[Key, dict[str, list[dict]]]:
    groups: dict[Key, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for event in timeline.events:
        if "partition" in event:
            groups[_key(event)][event["event"]].append(event)
    return groups


def _key(event: dict) -> Key:
    return str(event["job"]), int(event["partition"])


def _spans(events: list[dict], **match: object) -> np.ndarray:
    """[t_ms, end_ms] rows of the ``events`` whose fields equal ``match``."""
    chosen = [e for e in events if all(e.get(k) == v for k, v in match.items())]
    return iv.as_array([(e["t_ms"], e["end_ms"]) for e in chosen])


def _first_kernel_starts(kernels: list[dict]) -> dict[Key, tuple[int, float]]:
    """(device, t_ms of its first kernel) per partition."""
    first: dict[Key, tuple[int, float]] = {}
    for e in kernels:
        key = _key(e)
        if key not in first or e["t_ms"] < first[key][1]:
            first[key] = (int(e["device"]), e["t_ms"])
    return first


def _queue_depth(events: dict[str, list[dict]]) -> np.ndarray:
    """Rows (t_ms, depth): +1 at each ``queued``, -1 at each ``picked_up``."""
    steps = [(e["t_ms"], 1) for e in events["queued"]] + [(e["t_ms"], -1) for e in events["picked_up"]]
    if not steps:
        return iv.as_array([])
    steps.sort(key=lambda step: (step[0], -step[1]))  # at a tie, queue before picking up
    times, deltas = np.array(steps).T
    last = np.concatenate([times[1:] != times[:-1], [True]])  # one row per distinct time
    return np.column_stack([times, np.cumsum(deltas)])[last]


def _depth_at(queue: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Queue depth at each of ``points`` (ms); 0 before the first step."""
    if not len(queue):
        return np.zeros(len(points))
    row = np.searchsorted(queue[:, 0], points, side="right") - 1
    return np.where(row >= 0, queue[np.maximum(row, 0), 1], 0)


def _in_flight(events: dict[str, list[dict]], device: int, end_ms: float) -> np.ndarray:
    """Per partition picked up on ``device``: [pickup, its device work seen done (the
    bracket's end)]; without a bracket, until its lock release, its done or failed event,
    or ``end_ms`` while it is still running."""
    finished: dict[Key, float] = {}
    for e in events["done"] + events["failed"]:
        if "partition" in e:
            finished.setdefault(_key(e), e["t_ms"])
    for e in events["lock_held"] + events["gpu_bracket"]:
        finished[_key(e)] = e["end_ms"]
    return iv.as_array([(e["t_ms"], finished.get(_key(e), end_ms))
                        for e in events["picked_up"] if e["device"] == device])


def _awaiting_pickup(events: dict[str, list[dict]], device: int) -> np.ndarray:
    """Per partition staged for ``device``: [its staging's end, its pickup], when it was
    picked up later than it was staged."""
    picked = {_key(e): e["t_ms"] for e in events["picked_up"] if e["device"] == device}
    return iv.as_array([(e["end_ms"], picked[_key(e)]) for e in events["staging"]
                        if e.get("device") == device and picked.get(_key(e), -math.inf) > e["end_ms"]])


def _device_figures(events: dict[str, list[dict]], device: int, start_ms: float, end_ms: float,
                    queue: np.ndarray, records: np.ndarray | None) -> DeviceFigures:
    """Figures 1-4 and 6 for ``device`` over [start_ms, end_ms]; ``records``: the union of
    its CUPTI kernels, None without them."""
    span = end_ms - start_ms

    def union(name: str, **match: object) -> np.ndarray:
        return iv.union(iv.clip(_spans(events[name], device=device, **match), start_ms, end_ms))

    phases, brackets, held = union("kernel"), union("gpu_bracket"), union("lock_held")
    busy = phases if records is None else iv.clip(records, start_ms, end_ms)
    both = iv.length(brackets) + iv.length(busy) - iv.length(iv.union(np.vstack([brackets, busy])))
    in_flight = iv.union(iv.clip(_in_flight(events, device, end_ms), start_ms, end_ms))
    conditions = {
        "download": union("download"), "upload": iv.intersect(union("staging"), in_flight),
        "alloc": union("alloc"), "sync": union("sync"), "epilogue": union("epilogue", in_lock=True),
        "lock_wait": union("lock_wait"), "phase_gap": phases, "launch": in_flight, "staging": union("staging"),
        "pickup": iv.union(iv.clip(_awaiting_pickup(events, device), start_ms, end_ms)),
    }
    gaps = _attribute(start_ms, end_ms, busy, held, conditions, queue)
    samples = np.array([e["util_pct"] for e in events["nvml"]
                        if e["device"] == device and start_ms <= e["t_ms"] <= end_ms], dtype=float)
    traced = {"kernel_busy_pct": None, "phase_gap_pct": None, "outside_phases_pct": None}
    if records is not None:
        in_phases = iv.length(iv.intersect(phases, busy))
        traced = {"kernel_busy_pct": 100 * iv.length(busy) / span,
                  "phase_gap_pct": 100 * (iv.length(phases) - in_phases) / span,
                  "outside_phases_pct": 100 * (iv.length(busy) - in_phases) / span}
    return DeviceFigures(
        device=device,
        bracket_pct=100 * iv.length(brackets) / span,
        lock_held_pct=100 * iv.length(held) / span,
        held_idle_pct=100 * (iv.length(held) - iv.length(iv.intersect(held, busy))) / span,
        busy_pct=100 * iv.length(phases) / span,
        **traced,
        idle_in_bracket_pct=100 * (iv.length(brackets) - both) / span,
        nvml_mean_pct=float(samples.mean()) if len(samples) else None,
        nvml_zero_pct=100 * float(np.mean(samples == 0)) if len(samples) else None,
        gaps_ms={cause: sum((b - a for a, b, c in gaps if c == cause), 0.0) for cause in CAUSES},
        gaps=gaps,
    )


def _attribute(start_ms: float, end_ms: float, busy: np.ndarray, held: np.ndarray,
               conditions: dict[str, np.ndarray], queue: np.ndarray) -> list[tuple[float, float, str]]:
    """Idle runs (start_ms, end_ms, cause) covering [start_ms, end_ms] minus ``busy``.

    The window is cut at every edge of every interval involved, so on each elementary
    segment each condition is constant; a segment's cause is the first in CAUSES whose
    condition holds at its midpoint.
    """
    unions = [busy, held, *conditions.values()]
    edges = np.concatenate([[start_ms, end_ms], queue[:, 0], *(u.ravel() for u in unions)])
    edges = np.unique(np.clip(edges, start_ms, end_ms))
    starts, ends = edges[:-1], edges[1:]
    mids = (starts + ends) / 2
    holds = {name: iv.covered(u, mids) for name, u in conditions.items()}
    holds["lock_wait"] &= ~iv.covered(held, mids)  # a wait behind a holder is the holder's time
    holds["dispatch"] = _depth_at(queue, mids) > 0
    holds["starvation"] = np.ones(len(mids), dtype=bool)
    cause = np.full(len(mids), -1)
    idle = ~iv.covered(busy, mids)
    for index, name in enumerate(CAUSES):
        cause[idle & (cause < 0) & holds[name]] = index
    return sorted((float(a), float(b), CAUSES[i]) for i in range(len(CAUSES))
                  for a, b in iv.runs(starts, ends, cause == i))


def _phases(events: dict[str, list[dict]], start_ms: float, end_ms: float, peaks: Peaks,
            records: dict[int, np.ndarray]) -> list[PhaseFigures]:
    """Figure 5: phase intervals that start in [start_ms, end_ms), grouped by phase."""
    groups = defaultdict(list)
    for e in events["kernel"]:
        if start_ms <= e["t_ms"] < end_ms:
            groups[e["phase"]].append(e)
    starts = {d: np.sort([e["t_ms"] for e in events["cupti_kernel"] if e["device"] == d]) for d in records}
    return [_phase(phase, group, peaks, records, starts) for phase, group in sorted(groups.items())]


def _phase(phase: str, kernels: list[dict], peaks: Peaks, records: dict[int, np.ndarray],
           starts: dict[int, np.ndarray]) -> PhaseFigures:
    device_ms = sum(e["end_ms"] - e["t_ms"] for e in kernels)
    kernel_ms = launches = None
    if records:
        kernel_ms, launches = 0.0, 0
        for d in {int(e["device"]) for e in kernels}:
            inside = iv.union(_spans(kernels, device=d))
            kernel_ms += iv.length(iv.intersect(inside, records.get(d, iv.EMPTY)))
            launches += int(iv.covered(inside, starts.get(d, np.zeros(0))).sum())
    timed_ms = device_ms if kernel_ms is None else kernel_ms
    fr, fq = (sum(e.get(name, 0) for e in kernels) for name in ("fr_muls", "fq_muls"))
    # products per ms / 1e6 = G products per s
    fr_gps, fq_gps = (n / timed_ms / 1e6 if timed_ms > 0 else 0.0 for n in (fr, fq))
    counted = timed_ms > 0 and any("fr_muls" in e or "fq_muls" in e for e in kernels)
    efficiency = 100 * (fr_gps / peaks.fr_mul_gps + fq_gps / peaks.fq_mul_gps) if counted else None
    return PhaseFigures(phase, len(kernels), device_ms, kernel_ms, launches, fr_gps, fq_gps, efficiency)


def _kernels(records: list[dict], start_ms: float, end_ms: float) -> list[KernelFigures]:
    """The CUPTI kernels that start in [start_ms, end_ms) by name, most device time first."""
    groups = defaultdict(list)
    for e in records:
        if start_ms <= e["t_ms"] < end_ms:
            groups[e["name"]].append(e["end_ms"] - e["t_ms"])
    figures = [KernelFigures(name, len(ms), sum(ms), 1e3 * sum(ms) / len(ms)) for name, ms in groups.items()]
    return sorted(figures, key=lambda k: -k.device_ms)


def _partition_figures(mine: dict[str, list[dict]], key: Key, device: int,
                       records: dict[int, np.ndarray]) -> PartitionFigures:
    """Figures of partition ``key`` from ``mine``, its events by name."""
    def total(name: str) -> float | None:
        return sum(e["end_ms"] - e["t_ms"] for e in mine[name]) if mine[name] else None

    kernel_ms = total("kernel") or 0.0
    if device in records:
        kernel_ms = iv.length(iv.intersect(iv.union(_spans(mine["kernel"])), records[device]))
    queued, picked = mine["queued"], mine["picked_up"]
    return PartitionFigures(
        job=key[0], partition=key[1], device=device, synthesis_ms=total("synthesis"),
        queued_ms=picked[0]["t_ms"] - queued[0]["t_ms"] if queued and picked else None,
        lock_wait_ms=total("lock_wait"), lock_held_ms=total("lock_held"), kernel_ms=kernel_ms,
    )


def _balance(events: dict[str, list[dict]], devices: list[DeviceFigures], partitions: list[PartitionFigures],
             queue: np.ndarray, start_ms: float, end_ms: float) -> Balance:
    """Figure 7 over [start_ms, end_ms]."""
    synthesis_ms = _mean(p.synthesis_ms for p in partitions)
    kernel_ms = _mean(p.kernel_ms for p in partitions)
    needed = None
    if synthesis_ms is not None and kernel_ms:
        needed = max(1, math.ceil(len(devices) * synthesis_ms / kernel_ms - 1e-9))  # 1e-9: float noise
    edges = np.unique(np.concatenate([[start_ms, end_ms], queue[:, 0]]))
    edges = edges[(edges >= start_ms) & (edges <= end_ms)]
    depth = _depth_at(queue, edges[:-1])
    return Balance(
        synthesis_ms=synthesis_ms, kernel_ms=kernel_ms,
        workers=len({e["worker"] for e in events["synthesis"]}), workers_needed=needed,
        queue_mean=float(np.sum(depth * np.diff(edges)) / (end_ms - start_ms)),
        queue_max=int(depth.max()) if len(depth) else 0,
        starvation=[(d.device, a, b) for d in devices for a, b, cause in d.gaps if cause == "starvation"],
    )


def _mean(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None
