"""Kernel-level ground truth: every kernel and memcpy the devices ran, from NVIDIA's CUPTI
Activity API (``cupti-python``, 13.0.x for CUDA 13 drivers), on the timeline's clock.

    trace = KernelTrace.start(recorder, devices)   # None (said once, and in the timeline) without CUPTI
    ...                                            # the engine's work
    trace.stop()                                   # flush; cupti_kernel / cupti_memcpy / cupti_clock events

CUPTI records CONCURRENT_KERNEL (kernels not serialized) and MEMCPY activities with start
and end on its own clock (ns; CUPTI maps the GPU's timer onto it). ``cupti.get_timestamp()``
reads that clock, so the offset to the timeline's ``time.monotonic_ns()`` is measured by
reading it between two host readings, best (narrowest) of CALIBRATION_READS; its error is
half that bracket (a few hundred ns from Python). It is measured at start and at stop and
interpolated between them, so a drift of the two clocks (CUPTI's may be CLOCK_REALTIME,
which NTP slews) is followed; ``cupti_clock`` records both offsets.

The mapping is checked end to end by a marker on each device, at start and stop while the
device is idle: a synchronous copy of MARKER_BYTES (no other copy has that size), between
host readings t0 and t1, MARKS_PER_CHECK times in a row. Each record, mapped, must lie
inside its [t0, t1]: with lead = start - t0 and lag = t1 - end, the mapping error lies in
[-lag, lead]. Of each check's markers the narrowest bound counts (a bracket widens when
the host is held up between its readings: 23 ms under a loaded test run on the H200);
``cupti_clock`` records the widest such bound over the checks (``bound_ns``) and whether
every marker fit.

Records are buffered in memory (BUFFER_BYTES per CUPTI buffer, so the Python callback runs
rarely, off the launch path) and written at ``stop``. CUPTI is one per process: one trace at
a time, its callbacks registered once (``_SESSIONS``).
"""

from __future__ import annotations

import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from numba_cuzk.engine.record import Recorder, now_ns

BUFFER_BYTES = 32 << 20  # ~100k kernel records: a buffer fills rarely, so the callback runs at flush
CALIBRATION_READS = 200
MARKS_PER_CHECK = 5  # markers per device at start and at stop; the narrowest bracket of each counts
MARKER_BYTES = 24  # 3 uint64: no copy of the prover has this size
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: incomplete buffers too


class KernelTraceWarning(UserWarning):
    """Kernel tracing was asked for and cannot run; the engine runs without it."""


@dataclass(frozen=True)
class Calibration:
    """CUPTI clock minus host monotonic clock (ns) at host time ``at_ns``, +- ``error_ns``."""

    at_ns: int
    offset_ns: int
    error_ns: int


def calibrate(cupti_now: Callable[[], int], host_now: Callable[[], int] = now_ns,
              reads: int = CALIBRATION_READS) -> Calibration:
    """The offset from the narrowest of ``reads`` host brackets around one CUPTI reading."""
    best = None
    for _ in range(reads):
        before = host_now()
        stamp = cupti_now()
        after = host_now()
        if best is None or after - before < best[1] - best[0]:
            best = (before, after, stamp)
    before, after, stamp = best
    middle = (before + after) // 2
    return Calibration(middle, stamp - middle, (after - before + 1) // 2)


def to_host_ns(stamps: np.ndarray, first: Calibration, last: Calibration) -> np.ndarray:
    """CUPTI stamps (ns) as host monotonic ns h, with the offset linear in host time between
    the two calibrations (constant outside them): h = s - (o1 + k (h - a1)), solved for h."""
    stamps = np.asarray(stamps, dtype=np.int64)
    before, after = stamps - first.offset_ns, stamps - last.offset_ns
    if last.at_ns == first.at_ns:
        return before
    k = (last.offset_ns - first.offset_ns) / (last.at_ns - first.at_ns)
    between = first.at_ns + np.round((before - first.at_ns) / (1 + k)).astype(np.int64)  # small floats: ns kept
    return np.where(before <= first.at_ns, before, np.where(after >= last.at_ns, after, between))


_MANGLED = re.compile(r"(\d+)")


def short_name(name: str) -> str:
    """A kernel's readable name: the innermost identifier of an Itanium-mangled name
    (Numba's ``_ZN6cudapy...10accumulate_g1B...``: "accumulate_g1"), the name itself when
    it is not mangled."""
    if not name.startswith("_ZN"):
        return name
    parts, i = [], 3
    while i < len(name) and name[i].isdigit():
        digits = _MANGLED.match(name, i).group(1)
        i += len(digits)
        parts.append(name[i:i + int(digits)])
        i += int(digits)
    return parts[-1] if parts else name


@dataclass
class _Session:
    """The process's one CUPTI registration and the trace it delivers to."""

    cupti: object
    lock: threading.Lock = field(default_factory=threading.Lock)
    sink: KernelTrace | None = None

    def requested(self):
        return BUFFER_BYTES, 0  # 0: as many records as fit

    def completed(self, activities: list) -> None:
        with self.lock:
            sink = self.sink
        if sink is not None:
            sink.take(activities)


_SESSIONS: dict[int, _Session] = {}  # id(cupti module) -> its registration (one in real use)
_SESSIONS_LOCK = threading.Lock()


def load_cupti():
    """The ``cupti`` module of cupti-python; raises (ImportError, OSError, RuntimeError...)
    when it or its library cannot load."""
    from cupti import cupti

    cupti.get_timestamp()  # loads libcupti: a missing or mismatched library fails here
    return cupti


def _session(cupti) -> _Session:
    with _SESSIONS_LOCK:
        if id(cupti) not in _SESSIONS:
            session = _Session(cupti)
            cupti.activity_register_callbacks(session.requested, session.completed)
            _SESSIONS[id(cupti)] = session
        return _SESSIONS[id(cupti)]


def copy_marker(device: int) -> None:
    """The clock marker on CUDA device ``device``: a synchronous MARKER_BYTES host-to-device
    copy (pageable memory: the call returns once the copy is done)."""
    from numba import cuda

    with cuda.gpus[device]:
        cuda.to_device(np.zeros(MARKER_BYTES // 8, dtype=np.uint64))
        cuda.synchronize()


class KernelTrace:
    """CUPTI kernel and memcpy records of this process, written to ``recorder`` at ``stop``.
    ``devices``: CUDA ordinals to put clock markers on; ``marker(device)`` makes one."""

    def __init__(self, cupti, recorder: Recorder, devices: Sequence[int],
                 marker: Callable[[int], None] = copy_marker) -> None:
        self._cupti, self._recorder, self._devices, self._marker = cupti, recorder, tuple(devices), marker
        self._lock = threading.Lock()
        self._kernels: list[tuple] = []  # (start, end, device, stream, raw name), CUPTI ns
        self._copies: list[tuple] = []  # (start, end, device, stream, copy kind, bytes), CUPTI ns
        self._markers: list[tuple[int, int, int, int]] = []  # (device, check, t0, t1), host ns
        self._first: Calibration | None = None
        self._kinds = (cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY)
        self._copy_kinds = {int(k): k.name for k in cupti.ActivityMemcpyKind}

    @classmethod
    def start(cls, recorder: Recorder, devices: Sequence[int], *, load: Callable[[], object] = load_cupti,
              marker: Callable[[int], None] = copy_marker) -> KernelTrace | None:
        """A running trace, or None when CUPTI cannot run here: then a KernelTraceWarning
        (Python shows it once) and a ``cupti_unavailable`` event say why."""
        try:
            if not devices:
                raise RuntimeError("no GPU to trace (the CPU backend runs no kernels)")
            trace = cls(load(), recorder, devices, marker)
            trace._begin()
            return trace
        except Exception as exc:  # any failure to load or enable CUPTI: run untraced
            why = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"kernel tracing is off: CUPTI cannot run here ({why})", KernelTraceWarning, stacklevel=2)
            recorder.instant("cupti_unavailable", error=why)
            return None

    def _begin(self) -> None:
        session = _session(self._cupti)
        with session.lock:
            if session.sink is not None:
                raise RuntimeError("another kernel trace is running in this process (CUPTI is one per process)")
            session.sink = self
        try:
            for kind in self._kinds:
                self._cupti.activity_enable(kind)
        except BaseException:
            self._detach()
            raise
        self._first = calibrate(self._cupti.get_timestamp)
        self._mark()

    def _mark(self) -> None:
        check = len({m[1] for m in self._markers})
        for device in self._devices:
            for _ in range(MARKS_PER_CHECK):
                t0 = now_ns()
                self._marker(device)
                self._markers.append((device, check, t0, now_ns()))

    def take(self, activities: list) -> None:
        """CUPTI's buffer callback: keep the kernel and memcpy records (other kinds ignored)."""
        kernel, memcpy = self._kinds
        kernels, copies = [], []
        for a in activities:
            if a.kind == kernel:
                kernels.append((a.start, a.end, a.device_id, a.stream_id, a.name))
            elif a.kind == memcpy:
                copies.append((a.start, a.end, a.device_id, a.stream_id, int(a.copy_kind), a.bytes))
        with self._lock:
            self._kernels += kernels
            self._copies += copies

    def stop(self) -> None:
        """Markers, flush, stop recording; write every record and the clock's figures."""
        try:
            self._mark()
            self._cupti.activity_flush_all(FLUSH_FORCED)
        finally:
            for kind in self._kinds:
                self._cupti.activity_disable(kind)
            self._detach()
        last = calibrate(self._cupti.get_timestamp)
        self._write(self._first, last)

    def _detach(self) -> None:
        session = _session(self._cupti)
        with session.lock:
            if session.sink is self:
                session.sink = None

    def _write(self, first: Calibration, last: Calibration) -> None:
        with self._lock:
            kernels, copies = list(self._kernels), list(self._copies)
        markers = [c for c in copies if c[5] == MARKER_BYTES]
        names: dict[str, str] = {}
        for (start, end), (_, _, device, stream, name) in zip(self._mapped(kernels, first, last), kernels):
            short = names.setdefault(name, short_name(name))
            self._recorder.device("cupti_kernel", start, end, device=device, stream=stream, name=short)
        for (start, end), (_, _, device, stream, kind, nbytes) in zip(self._mapped(copies, first, last), copies):
            if nbytes != MARKER_BYTES:
                self._recorder.device("cupti_memcpy", start, end, device=device, stream=stream,
                                      copy_kind=self._copy_kinds.get(kind, str(kind)), bytes=nbytes)
        self._recorder.instant("cupti_clock", offsets_ns=[first.offset_ns, last.offset_ns],
                               error_ns=max(first.error_ns, last.error_ns),
                               **self._marker_check(self._mapped(markers, first, last), markers))

    @staticmethod
    def _mapped(records: list[tuple], first: Calibration, last: Calibration) -> list[tuple[int, int]]:
        if not records:
            return []
        stamps = to_host_ns(np.array([(r[0], r[1]) for r in records], dtype=np.int64).ravel(), first, last)
        return [tuple(map(int, pair)) for pair in stamps.reshape(-1, 2)]

    def _marker_check(self, mapped: list[tuple[int, int]], records: list[tuple]) -> dict:
        """Each host bracket (device, check, t0, t1) matched with the marker record of its
        device nearest in time: whether all fit, and the mapping error bound [-lag, lead]
        of each (device, check)'s narrowest bracket, the widest of those."""
        groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
        fit = len(mapped) == len(self._markers)
        for device, check, t0, t1 in self._markers:
            mine = [m for m, r in zip(mapped, records) if r[2] == device]
            if not mine:
                fit = False
                continue
            start, end = min(mine, key=lambda m: abs((m[0] + m[1]) / 2 - (t0 + t1) / 2))
            groups.setdefault((device, check), []).append((-(t1 - end), start - t0))
        bounds = []
        for group in groups.values():
            misfits = [b for b in group if b[0] > 0 or b[1] < 0]  # the record outside its bracket
            fit &= not misfits
            # a misfit's bound shows the violation; else the narrowest bracket's
            bounds += misfits or [min(group, key=lambda b: b[1] - b[0])]
        low = min((b[0] for b in bounds), default=0)
        high = max((b[1] for b in bounds), default=0)
        return {"markers_fit": bool(fit and bounds), "bound_ns": [low, high]}
