"""Time a proof's phases where they run: CUDA events on the GPU, the host clock on the CPU.

    timer = PhaseTimer(stream)           # stream None: the CPU backend; clock=: see below
    with timer.phase("ntt"): ...         # launches (GPU) or work (CPU) inside
    with timer.phase("stream_b2", stream=copy): ...   # work on another stream of the device
    with timer.host_phase("epilogue"): ...   # host work, on the host clock either way
    timer.intervals_ms()                 # [(name, start_ms, end_ms)] after the work ended

A pipeline's timers share a device's ``ClockAnchor`` instead (``PhaseTimer(stream,
anchor=...)``): one mapping for all its partitions, so that they line up with each other
(per-timer anchors each carry their own error, and partitions queued ahead of the device,
as CUDA graphs are, overlapped by up to 5 ms on the H200's timeline).

A CUDA graph's phases (cuda_graph.py) are timed by a ``PhaseTimer(stream, graph=True)``
used while capturing: its events become nodes of the graph, recorded again by every
replay, and ``marks`` holds them; the timer of each replay ``adopt``s those marks.

GPU intervals are relative to an anchor event recorded when the timer is made, so they
measure device execution, not launch calls; ``anchor_host_ms`` (set by ``sync_anchor``)
maps them onto the host monotonic clock. Recorded on an idle stream, the anchor completes
as it is recorded, so the host time read just before recording it is its time, to the
driver's latency (µs). It is recorded on ``stream`` unless ``clock`` is given, a stream
kept idle for anchors (one device's events share its clock): then work may already be
queued on ``stream`` when the timer is made. The time the host sees the anchor complete
can be ms later, when another thread holds the GIL (an epilogue's pairing). The record
call itself can block for ms behind another thread's driver call (seen on the H200 with
the engine's copy stream), so ``intervals_ms(launched_ms=...)`` also uses causality: no
device event precedes the host time before its launch, a lower bound on the anchor that
holds every mapped interval inside its host bracket.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk import cuda_graph


@contextmanager
def wall_ms(into: dict[str, float], name: str):
    """Adds the block's wall ms (host clock) to ``into[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[name] = into.get(name, 0.0) + (time.perf_counter() - start) * 1e3


def host_ms() -> float:
    """The host monotonic clock in ms (the timeline's clock)."""
    return time.monotonic_ns() / 1e6


class ClockAnchor:
    """An event recorded on ``clock`` (a stream kept idle) and the host ms it was recorded
    at, refreshed after ``refresh_s`` (elapsed times are float ms: ~1 us resolution within
    10 s). Of ``tries`` records the one whose call returned soonest is kept: its host time
    is off by at most that call's duration (recorded in ``error_ms``)."""

    def __init__(self, clock, refresh_s: float = 10.0, tries: int = 3) -> None:
        self.clock, self.refresh_s, self.tries = clock, refresh_s, tries
        self._lock = threading.Lock()
        self._current: tuple | None = None
        self.error_ms = 0.0

    def current(self) -> tuple:
        """(event, host ms) of the anchor in force (thread-safe)."""
        with self._lock:
            if self._current is None or host_ms() - self._current[1] > 1e3 * self.refresh_s:
                best = None
                for _ in range(self.tries):
                    event = cuda.event()
                    before = host_ms()
                    event.record(self.clock)
                    after = host_ms()
                    if best is None or after - before < best[2]:
                        best = (event, before, after - before)
                best[0].synchronize()
                self._current, self.error_ms = (best[0], best[1]), best[2]
            return self._current


class PhaseTimer:
    def __init__(self, stream=None, clock=None, graph: bool = False, anchor: ClockAnchor | None = None) -> None:
        self.stream = stream
        self.graph = graph
        self._marks: list = []  # (name, start event, end event) on the GPU
        self._host_marks: list = []  # (name, start, end) host ms
        self.anchor_host_ms: float | None = None
        self._anchor = None
        if stream is not None and anchor is not None:
            self._anchor, self._recorded_ms = anchor.current()
            return
        self._recorded_ms = host_ms()
        if stream is not None and not graph:
            self._anchor = cuda.event()
            self._anchor.record(clock or stream)

    @property
    def marks(self) -> list:
        """The GPU phases' (name, start event, end event), in launch order."""
        return list(self._marks)

    def adopt(self, marks: list) -> None:
        """Time ``marks`` (a graph timer's) as phases of this timer: a replay's."""
        self._marks.extend(marks)

    def sync_anchor(self) -> float:
        """Wait for the anchor event and map it to host ms: the time it was recorded, which
        is its time on the device when its stream was idle then (the caller's promise)."""
        if self._anchor is not None:
            self._anchor.synchronize()
        self.anchor_host_ms = self._recorded_ms
        return self.anchor_host_ms

    @contextmanager
    def host_phase(self, name: str):
        start = host_ms()
        yield
        self._host_marks.append((name, start, host_ms()))

    @contextmanager
    def phase(self, name: str, stream=None):
        """Device work launched inside, bracketed by events on ``stream`` (default: the
        timer's; another stream of the same device for work that overlaps it, such as a
        copy stream's transfers)."""
        if self.stream is None:
            with self.host_phase(name):
                yield
            return
        start, end = cuda.event(), cuda.event()
        record = cuda_graph.record_event if self.graph else (lambda event, on: event.record(on))
        record(start, stream or self.stream)
        yield
        record(end, stream or self.stream)
        self._marks.append((name, start, end))

    def intervals_ms(self, launched_ms: float | None = None) -> list[tuple[str, float, float]]:
        """(name, start, end) in ms: host phases on the host clock; GPU phases relative
        to the anchor, plus anchor_host_ms when known, raised if needed so that the first
        GPU phase starts no earlier than ``launched_ms`` (host ms before its launch).
        Waits for every GPU event (phases on other streams may end later)."""
        if not self._marks:
            return list(self._host_marks)
        for _, _, end in self._marks:
            end.synchronize()
        since = lambda event: cuda.event_elapsed_time(self._anchor, event)  # noqa: E731
        marks = [(name, since(s), since(e)) for name, s, e in self._marks]
        base = self.anchor_host_ms or 0.0
        if launched_ms is not None:
            base = max(base, launched_ms - min(start for _, start, _ in marks))
        return [(name, base + s, base + e) for name, s, e in marks] + self._host_marks

    def durations_ms(self) -> dict[str, float]:
        """Total ms per phase name."""
        totals: dict[str, float] = {}
        for name, start, end in self.intervals_ms():
            totals[name] = totals.get(name, 0.0) + end - start
        return totals
