"""Devices and their GPU workers.

A ``Device`` is one CUDA device (or the CPU backend, id 0): a lock, a stream of its own,
and a Prover per proving key, made on first use and kept (bases resident, buffers reused:
no allocation or free per partition; Numba defers frees, which would make memory
accounting lag). Its workers (``gpu_workers_per_device``) share the lock; each runs:

    picked_up -> lock_wait -> lock_held [alloc (first use of a key), gpu_bracket
    [staging, kernel phases, download, sync]] -> epilogue (outside the lock) -> done

The lock covers device work only: the epilogue (proof assembly, pairing check, writing)
runs after it is released, so with two workers one's epilogue overlaps the other's
device work. Device intervals come from the PhaseTimer's CUDA events, mapped onto the
host clock by an anchor event the host waits for before the first launch.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Protocol

from numba import cuda

from numba_cuzk import backend
from numba_cuzk.engine.job import Partition, PartitionResult
from numba_cuzk.engine.record import Recorder, host_ms_to_ns, now_ns
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.timing import PhaseTimer

HOST_PHASES = {"upload": "staging", "download": "download", "sync": "sync"}  # the rest are kernels
G1_BYTES, G2_BYTES, FR_BYTES = 96, 192, 32  # affine points and field elements in the curve layout
CSR_BYTES_PER_COEFFICIENT = 36  # 32 B value + 4 B column index
WORK_VECTORS = 5  # a, b, c, d and the zero vector: n Fr each


def key_bytes(pk: ProvingKey) -> int:
    """Device bytes of a Prover for ``pk``: the five queries, A and B as CSR, the witness
    and work vectors. The NTT and MSM workspaces, cached per shape and shared by every key
    of that shape, are not counted."""
    n, m = pk.domain_size, pk.n_vars
    queries = G1_BYTES * (2 * m + (m - pk.n_public - 1) + n) + G2_BYTES * m
    csr = CSR_BYTES_PER_COEFFICIENT * int(pk.coefficients.matrix.size) + 2 * 8 * (n + 1)
    return queries + csr + FR_BYTES * (m + WORK_VECTORS * n)


@dataclass(eq=False)
class Device:
    """One device: ``id`` (CUDA ordinal; 0 for the CPU backend), ``gpu``, ``name``.
    ``budget_bytes`` caps the provers' key_bytes (least recently used evicted first)."""

    id: int
    gpu: bool
    name: str
    budget_bytes: int | None = None
    uuid: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stream: object = None
    provers: OrderedDict = field(default_factory=OrderedDict)  # id(pk) -> (pk, Prover, bytes)

    def context(self):
        """Makes this device current in the calling thread."""
        return cuda.gpus[self.id] if self.gpu else nullcontext()

    def prover(self, pk: ProvingKey, recorder: Recorder, ids: dict) -> Prover:
        """The Prover for ``pk`` (made and recorded as an ``alloc`` on first use). Call
        with the lock held, in this device's context. Keys are told apart by identity (the
        cache holds a reference, so an id is not reused while cached)."""
        entry = self.provers.get(id(pk))
        if entry is not None:
            self.provers.move_to_end(id(pk))
            return entry[1]
        need = key_bytes(pk)
        if self.budget_bytes is not None and need > self.budget_bytes:
            raise ValueError(f"the proving key needs {need} device bytes, over the budget of {self.budget_bytes}")
        while self.budget_bytes is not None and sum(e[2] for e in self.provers.values()) + need > self.budget_bytes:
            self.provers.popitem(last=False)
        if self.gpu:
            cuda.current_context().memory_manager.deallocations.clear()  # free evicted keys now, not later
        start = now_ns()
        prover = Prover(pk, gpu=self.gpu, stream=self.stream)
        recorder.interval("alloc", start, now_ns(), device=self.id, bytes=need, **ids)
        self.provers[id(pk)] = (pk, prover, need)
        return prover


def open_devices(devices: tuple[int, ...] | None, budget_bytes: int | None) -> list[Device]:
    """The devices to prove on (see EngineConfig.devices), each with its stream."""
    if devices is None:
        devices = tuple(range(len(cuda.gpus))) if backend.cuda_available() else ()
    if not devices:
        return [Device(0, False, f"cpu x{os.cpu_count()} (CPU backend)", budget_bytes)]
    if not backend.cuda_available():
        raise ValueError(f"devices {list(devices)} asked for, but no GPU is available ({backend.backend_name()})")
    count = len(cuda.gpus)
    if len(set(devices)) != len(devices) or not all(0 <= d < count for d in devices):
        raise ValueError(f"devices must be distinct CUDA ordinals below {count}, got {list(devices)}")
    opened = []
    for d in devices:
        gpu = cuda.gpus[d]
        with gpu:
            name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
            opened.append(Device(d, True, name, budget_bytes, getattr(gpu, "uuid", None), stream=cuda.stream()))
    return opened


class Pipeline(Protocol):
    """What a GPU worker reports to (the Engine)."""

    recorder: Recorder

    def release(self, part: Partition) -> None: ...
    def proved(self, part: Partition, result: PartitionResult) -> None: ...
    def failed(self, part: Partition, stage: str, error: BaseException) -> None: ...
    def skip(self, part: Partition) -> None: ...


def gpu_worker(device: Device, worker: int, work: queue.Queue, pipeline: Pipeline) -> None:
    """Prove partitions from ``work`` on ``device`` until a None arrives."""
    with device.context():
        while (part := work.get()) is not None:
            pipeline.recorder.instant("picked_up", **part.ids, device=device.id, gpu_worker=worker)
            if part.job.failed:
                pipeline.skip(part)
                continue
            stage = "gpu"
            try:
                prover, points, gpu_ms = _device_work(device, worker, part, pipeline.recorder)
                public = prover.public_inputs(part.witness)
                pipeline.release(part)
                stage = "epilogue"
                pipeline.proved(part, _epilogue(device, part, prover, points, public, gpu_ms, pipeline.recorder))
            except Exception as exc:  # the partition's job fails; the worker serves the next one
                pipeline.failed(part, stage, exc)


def _device_work(device: Device, worker: int, part: Partition, rec: Recorder) -> tuple[Prover, dict, float]:
    """Under the device lock: the prover's device work. Recorded once the lock is released,
    so that writing events never holds the device; returns (prover, points, lock-held ms)."""
    ids, where = part.ids, {"device": device.id, "gpu_worker": worker}
    asked = now_ns()
    device.lock.acquire()
    got = now_ns()
    try:
        prover = device.prover(part.job.job.pk, rec, ids)
        timer = PhaseTimer(device.stream)
        timer.sync_anchor()  # the stream is idle here: its anchor maps device time to host time
        start = now_ns()
        points = prover.device_work(part.witness, timer)
        end = now_ns()
    finally:
        device.lock.release()
        released = now_ns()
        rec.interval("lock_wait", asked, got, **ids, **where)
        rec.interval("lock_held", got, released, **ids, **where)
    rec.interval("gpu_bracket", start, end, **ids, **where)
    for phase, start_ms, end_ms in timer.intervals_ms():  # its events are complete: no wait
        start_ns, end_ns = host_ms_to_ns(start_ms), host_ms_to_ns(end_ms)
        if phase in HOST_PHASES:
            rec.interval(HOST_PHASES[phase], start_ns, end_ns, **ids, device=device.id)
        else:
            rec.kernel(phase, start_ns, end_ns, **ids, device=device.id, **part.ops.get(phase, {}))
    return prover, points, (released - got) / 1e6


def _epilogue(device: Device, part: Partition, prover: Prover, points: dict, public: list[int], gpu_ms: float,
              rec: Recorder) -> PartitionResult:
    """Outside the lock: assemble and check the proof, write it if the job asks."""
    start = now_ns()
    proof = prover.assemble(points, public, check=True)
    part.job.write(part.index, proof, public)
    end = now_ns()
    rec.interval("epilogue", start, end, **part.ids, device=device.id, in_lock=False)
    return PartitionResult(part.index, proof, public, device.id, part.synthesis_ms, gpu_ms, (end - start) / 1e6,
                           (end - part.synthesis_start_ns) / 1e6)
