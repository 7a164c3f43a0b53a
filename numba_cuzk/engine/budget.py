"""Backpressure: a partition is admitted (its synthesis may start) only when its witness
fits the host-memory budget and fewer than ``max_partitions`` are in flight. It holds its
bytes until its witness is staged (copied into a device's pinned slot: fixed buffers,
allocated with the key), so synthesis never runs further ahead of the GPUs than the
budget allows, and the queue between them is bounded by the same rule."""

from __future__ import annotations

import threading


class HostBudget:
    """``limit_bytes`` of witnesses and ``max_partitions`` partitions in flight; ``limit_name``
    says what sets the limit (for the error of a witness that could never fit).
    ``peak_bytes`` and ``peak_partitions`` are the most ever held at once."""

    def __init__(self, limit_bytes: int, max_partitions: int, limit_name: str = "the host memory budget") -> None:
        self.limit_bytes, self.max_partitions, self.limit_name = limit_bytes, max_partitions, limit_name
        self._cond = threading.Condition()
        self._bytes = self._partitions = 0
        self.peak_bytes = self.peak_partitions = 0
        self._cancelled = False

    def acquire(self, nbytes: int) -> bool:
        """Wait until ``nbytes`` fit, take them; False if ``cancel`` came first.
        ValueError if they could never fit."""
        if nbytes > self.limit_bytes:
            raise ValueError(f"a witness of {nbytes} bytes exceeds {self.limit_name} of {self.limit_bytes} bytes")
        with self._cond:
            self._cond.wait_for(lambda: self._cancelled or (
                self._partitions < self.max_partitions and self._bytes + nbytes <= self.limit_bytes))
            if self._cancelled:
                return False
            self._bytes += nbytes
            self._partitions += 1
            self.peak_bytes = max(self.peak_bytes, self._bytes)
            self.peak_partitions = max(self.peak_partitions, self._partitions)
            return True

    def release(self, nbytes: int) -> None:
        with self._cond:
            self._bytes -= nbytes
            self._partitions -= 1
            self._cond.notify_all()

    def cancel(self) -> None:
        """Make every waiting and later ``acquire`` return False."""
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()
