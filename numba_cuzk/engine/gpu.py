"""Devices, their stagers and their GPU workers.

A ``Device`` is one CUDA device (or the CPU backend, id 0): a lock, a compute stream, a
copy stream and a clock stream (kept idle: timers' anchors), and a ``Resident`` per
proving key, made on first use and kept (bases resident, buffers reused: no allocation or
free per partition; Numba defers frees, which would make memory accounting lag). Each key
has ``gpu_workers + 1`` proof slots (pinned witness and result buffers, device copy), so
that one is always free to stage into.

The device's stager takes synthesized partitions from the engine's shared queue (so
jobs spread over devices as they free slots) and, outside the lock, copies the witness
into a free slot and uploads it on the copy stream; the partition's host memory goes
back to the budget there. Its GPU workers (``gpu_workers_per_device``) share the lock:

    stager:  [alloc (first use of a key, under the lock)] staging -> device.staged
    worker:  picked_up -> lock_wait -> lock_held [launches] -> sync (the device done)
             -> the next partition;  gpu_bracket: first launch .. the device seen done
    assembly (numba_cuzk.engine.assembly): epilogue -> done

The lock covers launching a partition's device work (kernel phases after the slot's
upload, then the download), not waiting for it: with two workers, one queues partition
i+1 on the stream while the device still runs partition i, so the device goes from one
to the next without waiting for the host (the stream keeps them in order; each
downloads into its own slot). The epilogue (proof assembly, pairing check, writing) runs
outside the lock and off the worker's path, in the engine's assembly pool. A key's
Prover replays one CUDA graph per slot (EngineConfig.graphs), so holding the lock is
~0.6 ms per partition, not ~23 ms of launches. Device intervals come from PhaseTimers'
CUDA events, mapped onto the host clock by the device's ClockAnchor, one event on the
idle clock stream shared by all its timers.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Protocol

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk import backend
from numba_cuzk.engine.job import Partition
from numba_cuzk.engine.ops import proof_ops
from numba_cuzk.engine.record import Recorder, host_ms_to_ns, now_ns
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.memory import free_bytes, plan_memory
from numba_cuzk.groth16.shape import KeyShape
from numba_cuzk.groth16.prove import STREAM_PHASES, Blinding, ProofSlot, Prover, placed_queries
from numba_cuzk.groth16.timing import ClockAnchor, PhaseTimer

# recorded as intervals of their own (a streamed query's copies overlap the kernels); the other phases are kernels
INTERVAL_PHASES = {"download", "sync"}


def key_bytes(pk: ProvingKey, slots: int = 1, gpu: bool = False, tail: int | None = None) -> int:
    """Device bytes of a Prover for ``pk`` with ``slots`` proof slots: its memory plan
    (groth16/memory.py: queries, CSR, MSM and NTT workspaces, work vectors, witness slots,
    margin), on a GPU the one the Prover will make for the memory free now (a query it
    streams costs its chunk buffers; one already there, from a resident setup, counts),
    on the CPU backend every query resident; ``tail``: the Prover's bit/tail split (GPU)."""
    if not gpu:
        return plan_memory(KeyShape.of(pk), None, slots=slots).device_bytes
    return plan_memory(KeyShape.of(pk), free_bytes(), slots=slots, placed=placed_queries(pk), tail=tail).device_bytes


@dataclass(eq=False)
class Resident:
    """A proving key made ready on a device: its Prover, its device bytes, and its proof
    slots not in use (a slot goes back once its proof's results are collected)."""

    pk: ProvingKey
    prover: Prover
    nbytes: int
    free: queue.Queue


@dataclass(frozen=True)
class Staged:
    """A partition whose witness is in ``slot`` of ``resident`` (uploading or uploaded),
    with its public inputs, read before the host witness was let go."""

    part: Partition
    resident: Resident
    slot: ProofSlot
    public: list[int]


@dataclass(eq=False)
class Device:
    """One device: ``id`` (CUDA ordinal; 0 for the CPU backend), ``gpu``, ``name``,
    ``workers`` (GPU workers sharing the lock). ``budget_bytes`` caps the residents'
    key_bytes (least recently used evicted first; a partition staged for an evicted key
    keeps it alive until its device work ends)."""

    id: int
    gpu: bool
    name: str
    workers: int = 1
    budget_bytes: int | None = None
    graphs: bool = True  # Provers replay CUDA graphs (EngineConfig.graphs)
    uuid: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stream: object = None
    copy_stream: object = None
    tail: int | None = None  # the Provers' bit/tail split (EngineConfig.tail)
    clock: object = None  # a stream for timers' anchors only: idle, so an anchor's time is its record time
    anchor: object = None  # the ClockAnchor on ``clock`` that every timer of this device maps by
    staged: queue.Queue = field(default_factory=queue.Queue)  # Staged, then a None per worker
    residents: OrderedDict = field(default_factory=OrderedDict)  # id(pk) -> Resident

    def context(self):
        """Makes this device current in the calling thread."""
        return cuda.gpus[self.id] if self.gpu else nullcontext()

    def resident(self, pk: ProvingKey, recorder: Recorder, ids: dict) -> Resident:
        """The Resident for ``pk`` (made under the lock, and recorded as an ``alloc``, on
        first use). Called in this device's context, by its stager and by a daemon's
        PreloadKey: a key already resident is found without the lock, so staging never
        waits for device work (on the H200 that wait left the other GPU worker idle, 7.6 ms
        per partition); a miss looks again under the lock, so two callers missing at once
        (a preload and the key's first proof) make one Resident, not two device copies.
        Keys are told apart by identity (the cache holds a reference, so an id is not
        reused while cached)."""
        entry = self.residents.get(id(pk))
        if entry is None:
            with self.lock:
                entry = self.residents.get(id(pk))
                if entry is None:
                    return self._make_resident(pk, recorder, ids)
        self.residents.move_to_end(id(pk))
        return entry

    def _make_resident(self, pk: ProvingKey, recorder: Recorder, ids: dict) -> Resident:
        slots = self.workers + 1
        need = key_bytes(pk, slots, self.gpu, self.tail)
        if self.budget_bytes is not None and need > self.budget_bytes:
            raise ValueError(f"the proving key needs {need} device bytes, over the budget of {self.budget_bytes}")
        while self.budget_bytes is not None and sum(e.nbytes for e in self.residents.values()) + need > self.budget_bytes:
            self.residents.popitem(last=False)
        if self.gpu:
            cuda.current_context().memory_manager.deallocations.clear()  # free evicted keys now, not later
        start = now_ns()
        prover = Prover(pk, gpu=self.gpu, stream=self.stream, slots=slots, graphs=self.graphs,
                        tail=self.tail if self.gpu else None)
        prover.warm_up()  # compilation belongs to the alloc, not to the first partition's kernels
        recorder.interval("alloc", start, now_ns(), device=self.id, bytes=need, **ids)
        free: queue.Queue = queue.Queue()
        for slot in prover.slots:
            free.put(slot)
        entry = self.residents[id(pk)] = Resident(pk, prover, need, free)
        return entry


def open_devices(devices: tuple[int, ...] | None, workers: int, budget_bytes: int | None,
                 graphs: bool = True, tail: int | None = None) -> list[Device]:
    """The devices to prove on (see EngineConfig.devices), each with its three streams and
    ``workers`` GPU workers."""
    if devices is None:
        devices = tuple(range(len(cuda.gpus))) if backend.cuda_available() else ()
    if not devices:
        return [Device(0, False, f"cpu x{os.cpu_count()} (CPU backend)", workers, budget_bytes, graphs)]
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
            clock = cuda.stream()
            opened.append(Device(d, True, name, workers, budget_bytes, graphs, getattr(gpu, "uuid", None),
                                 stream=cuda.stream(), copy_stream=cuda.stream(), clock=clock,
                                 anchor=ClockAnchor(clock), tail=tail))
    return opened


class Pipeline(Protocol):
    """What a stager and a GPU worker report to (the Engine)."""

    recorder: Recorder

    def release(self, part: Partition) -> None: ...
    def assemble(self, staged: Staged, device: int, points: dict, blinding: Blinding, kernel_ms: float) -> None: ...
    def failed(self, part: Partition, stage: str, error: BaseException) -> None: ...
    def skip(self, part: Partition) -> None: ...


def stager(device: Device, work: queue.Queue, pipeline: Pipeline) -> None:
    """Stage partitions from ``work`` for ``device``'s workers until a None arrives; then
    stop the workers."""
    with device.context():
        while (part := work.get()) is not None:
            if part.job.failed:
                pipeline.skip(part)
                continue
            try:
                resident = device.resident(part.job.job.pk, pipeline.recorder, part.ids)
                slot = resident.free.get()  # waits while every slot holds a proof in flight
            except Exception as exc:
                pipeline.failed(part, "staging", exc)
                continue
            _stage(device, part, resident, slot, pipeline)
    for _ in range(device.workers):
        device.staged.put(None)


def _stage(device: Device, part: Partition, resident: Resident, slot, pipeline: Pipeline) -> None:
    """Load the witness into ``slot``, let the host witness go, hand the partition to the
    workers, and then (the upload's events complete) record the staging interval."""
    start = now_ns()
    timer = PhaseTimer(device.copy_stream, clock=device.clock, anchor=device.anchor)
    timer.sync_anchor()
    try:
        public = resident.prover.public_inputs(part.witness)
        slot.load(part.witness, device.copy_stream, timer)
    except Exception as exc:
        resident.free.put(slot)
        pipeline.failed(part, "staging", exc)
        return
    pipeline.release(part)
    device.staged.put(Staged(part, resident, slot, public))
    ((_, _, end_ms),) = timer.intervals_ms(launched_ms=start / 1e6)
    pipeline.recorder.interval("staging", start, host_ms_to_ns(end_ms), **part.ids, device=device.id)


def gpu_worker(device: Device, worker: int, pipeline: Pipeline) -> None:
    """Prove the partitions ``device``'s stager hands over until a None arrives."""
    with device.context():
        while (staged := device.staged.get()) is not None:
            part = staged.part
            pipeline.recorder.instant("picked_up", **part.ids, device=device.id, gpu_worker=worker)
            if part.job.failed:
                staged.resident.free.put(staged.slot)
                pipeline.skip(part)
                continue
            try:
                points, blinding, kernel_ms = _device_work(device, worker, staged, pipeline.recorder)
            except Exception as exc:  # the partition's job fails; the worker serves the next one
                pipeline.failed(part, "gpu", exc)
                continue
            pipeline.assemble(staged, device.id, points, blinding, kernel_ms)  # off this worker's path: returns at once


def _device_work(device: Device, worker: int, staged: Staged, rec: Recorder) -> tuple[dict, Blinding, float]:
    """The prover's device work on the staged slot: launched under the device lock,
    waited for after it (the slot goes back once its results are collected). Events are
    written after the lock is released, so writing never holds the device; returns
    (points, the proof's Blinding, drawn while the device works, kernel device ms)."""
    part, ids, where = staged.part, staged.part.ids, {"device": device.id, "gpu_worker": worker}
    prover, slot = staged.resident.prover, staged.slot
    asked = now_ns()
    device.lock.acquire()
    got = now_ns()
    try:
        timer = PhaseTimer(device.stream, clock=device.clock, anchor=device.anchor)
        timer.sync_anchor()
        start = now_ns()
        prover.enqueue(slot, timer)
    except BaseException:
        try:
            if device.gpu:
                device.stream.synchronize()  # the slot is reused only once the stream is done with it
        finally:  # a faulted device raises here too: the slot still goes back, the first error propagates
            staged.resident.free.put(slot)
        raise
    finally:
        device.lock.release()
        released = now_ns()
        rec.interval("lock_wait", asked, got, **ids, **where)
        rec.interval("lock_held", got, released, **ids, **where)
    try:
        blinding = prover.epilogue_key.blinding()  # while the device works: off the epilogue's path
        points = prover.collect(slot, timer)
        end = now_ns()
        # read before the slot goes back: a slot's graph records the same events on every replay
        intervals = timer.intervals_ms(launched_ms=start / 1e6)  # events complete: no wait
    finally:
        staged.resident.free.put(slot)
    rec.interval("gpu_bracket", start, end, **ids, **where)
    ops = proof_ops(prover.pk, part.counts, prover.memory.bits, device.gpu)
    kernel_ms = 0.0
    for phase, start_ms, end_ms in intervals:
        start_ns, end_ns = host_ms_to_ns(start_ms), host_ms_to_ns(end_ms)
        if phase in STREAM_PHASES:  # copies on the copy stream, beside the kernels: not kernel time
            rec.device("transfer", start_ns, end_ns, **ids, device=device.id, phase=phase)
        elif phase in INTERVAL_PHASES:
            rec.interval(phase, start_ns, end_ns, **ids, device=device.id)
        else:
            kernel_ms += end_ms - start_ms
            rec.kernel(phase, start_ns, end_ns, **ids, device=device.id, **ops.get(phase, {}))
    return points, blinding, kernel_ms
