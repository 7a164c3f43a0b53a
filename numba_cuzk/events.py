"""The engine's timeline: what it records about every partition, and the file it writes.

A timeline is a JSONL file. Line 1 is a header; every later line is one event. The
engine writes it (``TimelineWriter``); ``numba_cuzk.timeline`` reads and analyses it.
Pure Python: no numba, so the schema can be read and written anywhere.

Header (line 1)::

    {"format": "numba-cuzk-timeline", "version": 1, "pid": 4242, "host": "h200-1",
     "start_unix_s": 1764460800.123, "clock": "monotonic", "t0_ns": 8123456789,
     "devices": [{"id": 0, "name": "NVIDIA H200"}], "config": {...}}

``start_unix_s`` is the wall-clock time of t0 (s since the epoch); ``t0_ns`` is
``time.monotonic_ns()`` at t0; ``config`` is free-form (the engine's knobs).

Event lines: ``{"event": NAME, "t_ms": T, ...}``. ``t_ms`` is host monotonic time in ms
since t0, at 1 us resolution. An interval also has ``end_ms`` (>= ``t_ms``); an instant
has none. Device intervals are timed on the GPU with CUDA events and mapped onto the host
clock by the engine; the writer records the numbers it is given.

Identity fields: ``job`` (str), ``partition`` (int, index in its job), ``worker`` (int,
synthesis worker), ``device`` (int, CUDA ordinal), ``gpu_worker`` (int, GPU worker index
on its device). Optional fields are written only when known.

==================== ======== ======================================== =========================== =============================
event                kind     fields                                   optional                    meaning
==================== ======== ======================================== =========================== =============================
synthesis            interval job partition worker                                                 CPU synthesis of the witness
queued               instant  job partition                                                        entered the GPU queue
picked_up            instant  job partition device gpu_worker                                      a GPU worker took it
lock_wait            interval job partition device gpu_worker                                      waiting for the device lock
lock_held            interval job partition device gpu_worker                                      acquired .. released
gpu_bracket          interval job partition device gpu_worker                                      cuzk's GPU_START..GPU_END
staging              interval job partition device                                                 upload to the device
alloc                interval device bytes                             job partition               a key made resident, warm-up
sync                 interval device                                   job partition               host in a synchronize
kernel               device   job partition device phase               fr_muls fq_muls             one kernel phase
transfer             device   job partition device phase                                           a streamed query's copies
download             interval job partition device                                                 results to the host
epilogue             interval job partition device in_lock                                         proof assembly (CPU)
done                 instant  job partition                                                        proof written
failed               instant  job error                                partition stage             a partition/job failed
nvml                 instant  device util_pct mem_used_bytes                                       one NVML sample
cupti_kernel         device   device stream name                                                   one kernel, from CUPTI
cupti_memcpy         device   device stream copy_kind bytes                                        one copy, from CUPTI
cupti_clock          instant  offsets_ns error_ns bound_ns markers_fit                             how CUPTI's clock was mapped
cupti_unavailable    instant  error                                                                no kernel trace: why
counters             interval device source metrics                    clock_error_us              hardware counters, one period
counters_unavailable instant  error                                    source                      no counters: why
key_tier             instant  key tier                                 from_tier bytes host_memory a daemon's key moved tier
served               interval job key priority outcome                                             a daemon's job: arrival..answer
serve_step           interval job step                                                             a daemon's own step of a job
==================== ======== ======================================== =========================== =============================

What the intervals cover, and the other fields:

- ``lock_wait`` runs from asking for the per-device lock to getting it; ``lock_held`` from
  getting it to releasing it: the partition's launches, which the device may run after
  the previous partition's kernels (on the CPU backend, the work itself).
- ``gpu_bracket`` is the host time from just before the first kernel launch to the host
  seeing the partition's device work finish: cuzk's GPU_START..GPU_END, waits and launch
  gaps included (brackets of partitions queued one behind the other overlap).
- ``sync`` is the host waiting for a partition's device work (outside the lock).
- ``staging`` runs from the host's copy of the witness into a pinned slot to the end of
  its upload on the device's copy stream (device-timed), which overlaps the previous
  partition's kernels; ``download`` runs from issuing the copy of the results to the
  host to its completion (device-timed).
- ``kernel`` is a device interval: ``phase`` names it ("ntt_h", "msm_a", "msm_b_g2");
  ``fr_muls`` / ``fq_muls`` count the Fr / Fq Montgomery products it performs (an Fq2
  product counts as 3 Fq), the basis of kernel efficiency.
- ``epilogue``: ``in_lock`` (bool) says whether it ran inside the device lock; ``device``
  is the device that proved the partition.
- ``alloc``: ``bytes`` allocated (a proving key made resident: its buffers, and one run of
  its device work on a dummy witness, which compiles the kernels on first use).
- ``failed``: ``error`` is the exception text, ``stage`` where it happened ("admission",
  "synthesis", "staging", "gpu", "epilogue"), or "cancelled" for a partition never started
  (its job failed, or the engine was closed).
- ``nvml``: ``util_pct`` is NVML's GPU utilization (%), ``mem_used_bytes`` its used memory,
  sampled every ``config["nvml_period_ms"]`` ms.
- ``cupti_kernel`` / ``cupti_memcpy`` (with ``trace="kernels"``): every kernel and copy the
  device ran, from CUPTI's activity records, mapped onto the host clock
  (numba_cuzk.engine.kernel_trace); ``stream`` is CUPTI's stream id, ``name`` the kernel's
  function name, ``copy_kind`` CUPTI's ("HTOD", "DTOH", ...), ``bytes`` the copy's size.
  Unlike ``kernel`` phases (CUDA events around a group of launches), they hold no host
  launch gaps.
- ``cupti_clock``: how the records were mapped: ``offsets_ns``, the CUPTI-minus-host clock
  offsets measured at the trace's start and stop (interpolated between), ``error_ns`` the
  calibration's own error; the clock markers (a copy per device at start and stop, between
  two host readings): ``markers_fit`` whether each record fit inside its host bracket, and
  ``bound_ns`` the mapping error bound they give, [low, high].
- ``cupti_unavailable``: ``error`` says why CUPTI could not load or start; the run went on
  without kernel records.
- ``counters`` (with ``trace="counters"``): the device's hardware counters averaged over
  [t_ms, end_ms], one sampling period (numba_cuzk.engine.counters): ``source`` names where
  they come from ("nvml-gpm"), ``metrics`` maps names to values (``sm_active_pct``,
  ``sm_occupancy_pct``, ``int_pipe_pct``, ``fp32_pipe_pct``, ``fp64_pipe_pct``,
  ``fp16_pipe_pct``, ``tensor_pipe_pct``, ``dram_bw_pct`` in %; ``pcie_tx_mib_s``,
  ``pcie_rx_mib_s``, ``nvlink_tx_mib_s``, ``nvlink_rx_mib_s`` in MiB/s; a metric the GPU
  does not report is absent); ``clock_error_us`` bounds the ends' placement on the host clock.
- ``counters_unavailable``: ``error`` says why no counters could be read (``source``, the
  one tried); the run went on without them.
- ``key_tier`` (numba_cuzk.serve): proving key ``key`` (its content hash) moved to ``tier``
  "hot" (resident on a device), "warm" (host memory) or "cold" (on disk only), from
  ``from_tier``; ``bytes`` its host bytes; ``host_memory`` (not when cold) "pinned" (the
  daemon proves on GPUs: its queries in pinned host memory) or "pageable".
- ``served`` (numba_cuzk.serve): a daemon's job from its arrival (the call's handler
  entered) to its answer; ``outcome`` "proved", "failed", "cancelled" or "refused" (the
  daemon shut down before it started).
- ``serve_step`` (numba_cuzk.serve): a step of a job in the daemon outside the engine;
  ``step`` "witness" (the request's arrival to the job queued: its witness parsed and
  checked, its key acquired), "answer" (the engine's result landed to the reply's texts
  made) or "reply" (the texts made to the gRPC thread building the reply: its wake-up).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from numba_cuzk.fileio import AtomicFile

FORMAT = "numba-cuzk-timeline"
VERSION = 1
INSTANT, INTERVAL, DEVICE = "instant", "interval", "device"


@dataclass(frozen=True)
class EventSpec:
    """One row of the table above: ``kind`` is INSTANT, INTERVAL or DEVICE (a device
    interval, from CUDA events); ``required`` and ``optional`` name the fields besides
    ``event``, ``t_ms`` and ``end_ms``."""

    kind: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()


_PART = ("job", "partition")
_GPU = (*_PART, "device", "gpu_worker")
EVENTS: dict[str, EventSpec] = {
    "synthesis": EventSpec(INTERVAL, (*_PART, "worker")),
    "queued": EventSpec(INSTANT, _PART),
    "picked_up": EventSpec(INSTANT, _GPU),
    "lock_wait": EventSpec(INTERVAL, _GPU),
    "lock_held": EventSpec(INTERVAL, _GPU),
    "gpu_bracket": EventSpec(INTERVAL, _GPU),
    "staging": EventSpec(INTERVAL, (*_PART, "device")),
    "alloc": EventSpec(INTERVAL, ("device", "bytes"), _PART),
    "sync": EventSpec(INTERVAL, ("device",), _PART),
    "kernel": EventSpec(DEVICE, (*_PART, "device", "phase"), ("fr_muls", "fq_muls")),
    "transfer": EventSpec(DEVICE, (*_PART, "device", "phase")),
    "download": EventSpec(INTERVAL, (*_PART, "device")),
    "epilogue": EventSpec(INTERVAL, (*_PART, "device", "in_lock")),
    "done": EventSpec(INSTANT, _PART),
    "failed": EventSpec(INSTANT, ("job", "error"), ("partition", "stage")),
    "nvml": EventSpec(INSTANT, ("device", "util_pct", "mem_used_bytes")),
    "cupti_kernel": EventSpec(DEVICE, ("device", "stream", "name")),
    "cupti_memcpy": EventSpec(DEVICE, ("device", "stream", "copy_kind", "bytes")),
    "cupti_clock": EventSpec(INSTANT, ("offsets_ns", "error_ns", "bound_ns", "markers_fit")),
    "cupti_unavailable": EventSpec(INSTANT, ("error",)),
    "counters": EventSpec(INTERVAL, ("device", "source", "metrics"), ("clock_error_us",)),
    "counters_unavailable": EventSpec(INSTANT, ("error",), ("source",)),
    "key_tier": EventSpec(INSTANT, ("key", "tier"), ("from_tier", "bytes", "host_memory")),
    "served": EventSpec(INTERVAL, ("job", "key", "priority", "outcome")),
    "serve_step": EventSpec(INTERVAL, ("job", "step")),
}


def check_fields(event: str, fields: dict[str, Any]) -> None:
    """Raise ValueError unless ``event`` is in EVENTS and ``fields`` are its fields."""
    spec = EVENTS.get(event)
    if spec is None:
        raise ValueError(f"unknown timeline event {event!r}; known: {', '.join(EVENTS)}")
    missing = [name for name in spec.required if name not in fields]
    extra = sorted(set(fields) - set(spec.required) - set(spec.optional))
    if missing or extra:
        raise ValueError(f"event {event!r}: missing fields {missing}, unknown fields {extra}")


class TimelineWriter:
    """Appends events to a timeline, one JSON line each, written whole and flushed at once.
    Safe to call from any thread.

    By default the file is a temporary beside ``path`` (``live_path``, which a live reader
    may follow) that ``close`` renames to ``path`` (fileio.AtomicFile): a file at ``path``
    is a whole run's. With ``live`` (a daemon's timeline, watched while it grows) the
    file is at ``path`` from the start: the header is written to a temporary that is then
    renamed to ``path``, so a reader finds the name only once the header is whole, and
    every event is appended to that file. A reader of a live file sees whole lines and
    possibly the start of the one being written (reader.read skips it).

    Times are ms since t0, the writer's creation, on ``time.monotonic_ns()``.
    """

    def __init__(self, path: str | os.PathLike, devices: Sequence[dict] = (),
                 config: dict | None = None, *, live: bool = False):
        self._t0_ns = time.monotonic_ns()
        start_unix_s = time.time()
        self._lock = threading.Lock()
        self._target = AtomicFile(path, "w")
        self._file = self._target.file
        self._write({
            "format": FORMAT, "version": VERSION, "pid": os.getpid(), "host": socket.gethostname(),
            "start_unix_s": round(start_unix_s, 6), "clock": "monotonic", "t0_ns": self._t0_ns,
            "devices": list(devices), "config": dict(config or {}),
        })
        self._live = live
        if live:
            os.replace(self._target.temporary, self._target.path)

    def now_ms(self) -> float:
        """Host time now, ms since t0."""
        return self.ms(time.monotonic_ns())

    def ms(self, monotonic_ns: int) -> float:
        """A ``time.monotonic_ns()`` reading as ms since t0."""
        return (monotonic_ns - self._t0_ns) / 1e6

    def instant(self, event: str, at_ms: float | None = None, **fields: Any) -> None:
        """Record instant ``event`` at ``at_ms`` (ms since t0; default now)."""
        t_ms = self.now_ms() if at_ms is None else at_ms
        self._event(event, INSTANT, {"t_ms": round(t_ms, 3)}, fields)

    def interval(self, event: str, start_ms: float, end_ms: float, **fields: Any) -> None:
        """Record host interval ``event`` over [start_ms, end_ms] (ms since t0)."""
        self._event(event, INTERVAL, _bounds(start_ms, end_ms), fields)

    @contextmanager
    def span(self, event: str, **fields: Any) -> Iterator[None]:
        """Record host interval ``event`` over the ``with`` body, even if it raises."""
        start_ms = self.now_ms()
        try:
            yield
        finally:
            self.interval(event, start_ms, self.now_ms(), **fields)

    def kernel(self, phase: str, start_ms: float, end_ms: float, *, job: str, partition: int,
               device: int, fr_muls: int | None = None, fq_muls: int | None = None) -> None:
        """Record a kernel phase's device interval, already mapped onto the host clock
        (ms since t0), with its Fr / Fq product counts where known."""
        counts = {k: n for k, n in (("fr_muls", fr_muls), ("fq_muls", fq_muls)) if n is not None}
        fields = {"job": job, "partition": partition, "device": device, "phase": phase, **counts}
        self._event("kernel", DEVICE, _bounds(start_ms, end_ms), fields)

    @property
    def live_path(self) -> Path:
        """The file being written: ``path`` when ``live``, else the temporary that ``close``
        renames to it."""
        return self._target.path if self._live else self._target.temporary

    def device(self, event: str, start_ms: float, end_ms: float, **fields: Any) -> None:
        """Record device interval ``event`` (a CUPTI record), already on the host clock."""
        self._event(event, DEVICE, _bounds(start_ms, end_ms), fields)

    def close(self) -> None:
        with self._lock:
            if self._file.closed:
                return
            if self._live:  # already at its name: made durable, as a commit would
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
            else:
                self._target.commit()

    def __enter__(self) -> TimelineWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _event(self, event: str, kind: str, times: dict[str, float],
               fields: dict[str, Any]) -> None:
        check_fields(event, fields)
        if EVENTS[event].kind != kind:
            raise ValueError(f"event {event!r} is a {EVENTS[event].kind} event, not {kind}")
        self._write({"event": event, **times, **fields})

    def _write(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()


def _bounds(start_ms: float, end_ms: float) -> dict[str, float]:
    if end_ms < start_ms:
        raise ValueError(f"interval ends before it starts: {start_ms} > {end_ms} ms")
    return {"t_ms": round(start_ms, 3), "end_ms": round(end_ms, 3)}
