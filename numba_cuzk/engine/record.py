"""The engine's side of the timeline: every time is a ``time.monotonic_ns()`` reading
(CLOCK_MONOTONIC, the same clock in every process of the host, so synthesis processes
time themselves), converted to the file's ms since t0 by ``events.TimelineWriter``.
Without a writer nothing is recorded, and the engine runs the same code."""

from __future__ import annotations

import time
from typing import Any

from numba_cuzk.events import TimelineWriter


def now_ns() -> int:
    return time.monotonic_ns()


def host_ms_to_ns(ms: float) -> int:
    """A PhaseTimer time (host monotonic ms) as monotonic ns."""
    return round(ms * 1e6)


class Recorder:
    """Thread-safe (the writer is). ``writer`` None: records nothing."""

    def __init__(self, writer: TimelineWriter | None) -> None:
        self._writer = writer

    @property
    def live_path(self):
        """The timeline file being written (renamed into place at close); None: no timeline."""
        return self._writer.live_path if self._writer else None

    def instant(self, event: str, at_ns: int | None = None, **fields: Any) -> None:
        if self._writer:
            self._writer.instant(event, None if at_ns is None else self._writer.ms(at_ns), **fields)

    def interval(self, event: str, start_ns: int, end_ns: int, **fields: Any) -> None:
        if self._writer:
            self._writer.interval(event, self._writer.ms(start_ns), self._writer.ms(end_ns), **fields)

    def kernel(self, phase: str, start_ns: int, end_ns: int, **fields: Any) -> None:
        if self._writer:
            self._writer.kernel(phase, self._writer.ms(start_ns), self._writer.ms(end_ns), **fields)

    def device(self, event: str, start_ns: int, end_ns: int, **fields: Any) -> None:
        if self._writer:
            self._writer.device(event, self._writer.ms(start_ns), self._writer.ms(end_ns), **fields)

    def close(self) -> None:
        if self._writer:
            self._writer.close()
