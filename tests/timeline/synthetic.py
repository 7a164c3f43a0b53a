"""Synthetic timelines whose figures are known by construction.

``Pipeline`` describes a regular workload on one device: every partition takes
``synth_ms`` of synthesis and the same ``steps`` inside the device lock (and, optionally,
the same CUPTI kernel records inside each kernel step). ``write`` plays
it out through a TimelineWriter: synthesis worker w synthesizes partitions w, w + k,
w + 2k, ... back to back; each GPU worker takes the next ready partition when it is free,
waits for the lock (acquiring it ``handoff_ms`` after it is released), runs the steps,
releases the lock, then runs the epilogue outside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline.analysis import Analysis, analyze
from numba_cuzk.timeline.reader import read

BRACKETED = ("kernel", "sync")  # steps a cuzk GPU_START..GPU_END bracket spans


@dataclass(frozen=True)
class Pipeline:
    """``steps``: (what, ms) inside the lock, in order; what is an event name (kernel,
    sync, alloc, staging, download, epilogue: in the lock) or "gap" (nothing recorded)."""

    partitions: int
    synth_ms: float
    workers: int = 1
    gpu_workers: int = 1
    steps: tuple[tuple[str, float], ...] = (("kernel", 100.0),)
    handoff_ms: float = 0.0
    epilogue_ms: float = 0.0
    fr_muls: int | None = None  # per kernel
    # CUPTI kernel records of every kernel step, (start, duration ms, stream) from the
    # step's start (a start < 0 falls before it); None: a timeline without records
    records: tuple[tuple[float, float, int], ...] | None = None


def write(p: Pipeline, writer: TimelineWriter, job: str = "job0", device: int = 0) -> list[float]:
    """Write ``p``'s events; return each partition's first kernel start (ms), in order."""
    free = [0.0] * p.gpu_workers  # when each GPU worker is next free
    released = -p.handoff_ms  # the lock is free from the start
    first_kernels = []
    for i in range(p.partitions):
        ids = {"job": job, "partition": i}
        ready = (i // p.workers + 1) * p.synth_ms
        writer.interval("synthesis", ready - p.synth_ms, ready, worker=i % p.workers, **ids)
        writer.instant("queued", at_ms=ready, **ids)
        worker = min(range(p.gpu_workers), key=lambda w: free[w])
        gpu = {**ids, "device": device, "gpu_worker": worker}
        picked = max(ready, free[worker])
        writer.instant("picked_up", at_ms=picked, **gpu)
        acquired = max(picked, released + p.handoff_ms)
        writer.interval("lock_wait", picked, acquired, **gpu)
        released = _steps(p, writer, acquired, {**ids, "device": device}, worker, first_kernels)
        writer.interval("lock_held", acquired, released, **gpu)
        if p.epilogue_ms:
            writer.interval("epilogue", released, released + p.epilogue_ms, in_lock=False, **ids, device=device)
        free[worker] = released + p.epilogue_ms
        writer.instant("done", at_ms=free[worker], **ids)
    return first_kernels


def _steps(p: Pipeline, writer: TimelineWriter, t: float, ids: dict, worker: int,
           first_kernels: list[float]) -> float:
    """Write the steps from ``t`` on, and the host bracket; return when they end."""
    bracket = []
    for index, (what, ms) in enumerate(p.steps):
        if what == "kernel":
            counts = {} if p.fr_muls is None else {"fr_muls": p.fr_muls}
            writer.kernel(f"phase{index}", t, t + ms, **ids, **counts)
            for offset, length, stream in p.records or ():
                writer.device("cupti_kernel", t + offset, t + offset + length, device=ids["device"], stream=stream,
                              name=f"k{stream}")
            if not bracket:
                first_kernels.append(t)
        elif what == "transfer":  # a streamed query's copies on the copy stream
            writer.device("transfer", t, t + ms, **ids, phase="stream_b2")
        elif what == "alloc":
            writer.interval("alloc", t, t + ms, bytes=1 << 20, **ids)
        elif what == "epilogue":
            writer.interval("epilogue", t, t + ms, in_lock=True, **ids)
        elif what != "gap":
            writer.interval(what, t, t + ms, **ids)
        if what == "kernel" or (bracket and what in BRACKETED):
            bracket = [bracket[0] if bracket else t, t + ms]
        t += ms
    if bracket:
        writer.interval("gpu_bracket", *bracket, **ids, gpu_worker=worker)
    return t


def analysed(path, pipeline: Pipeline, window: str = "steady") -> Analysis:
    """Write ``pipeline`` to the timeline at ``path``, read it back and analyse ``window``."""
    with TimelineWriter(path) as writer:
        write(pipeline, writer)
    return analyze(read(path), window)


CUZK = Pipeline(  # the seed's case: per 100 ms period, 90 in the host bracket, 50 on the device
    partitions=10, synth_ms=40,
    steps=(("alloc", 5), ("kernel", 25), ("sync", 20), ("kernel", 25), ("sync", 20)), handoff_ms=5,
)
