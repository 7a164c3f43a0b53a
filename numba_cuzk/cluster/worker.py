"""The worker side: one Engine per Dask worker, its proving keys, and the proving task.

``ProvingPlugin`` is a Dask WorkerPlugin: every worker gets its own instance, which makes
the worker's Engine on its first task (on CUDA ordinal 0 of the GPUs the worker sees, the
dask-cuda convention of one GPU per worker, or the CPU backend where there is none) and
keeps it, with every proving key it has been sent, for the worker's life. A key arrives
once per worker (keys.py), is written to the worker's local directory and read on first
use; the engine keeps it resident on the device from then on.

``prove_chunk`` is the Dask task: a chunk of partitions (possibly from several jobs),
run by the worker's engine as one-partition engine jobs, so the engine pipelines the
chunk (synthesis overlapped with proving) and a partition that fails fails alone. A
failed partition is tried again, ``tries`` times in all; a partition whose proof is
already stored (an earlier attempt of this task, on a worker since lost) is read back,
not proved again (proofs.py). Each proved partition is reported at once as a Dask event
on the chunk's progress topic.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import socket
import threading
from collections import Counter
from concurrent.futures import as_completed
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from numba_cuzk import backend
from numba_cuzk.cluster import proofs
from numba_cuzk.engine import Engine, EngineConfig, Job, JobFailed
from numba_cuzk.engine.job import PartitionResult, Synthesizer
from numba_cuzk.fileio import atomic_write
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.keys import Proof, ProvingKey

PLUGIN_NAME = "numba-cuzk"
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    """Partition ``index`` of job ``job``: a synthesizer or a witness, as in engine.Job."""

    job: str
    index: int
    partition: Synthesizer | np.ndarray


@dataclass(frozen=True)
class Chunk:
    """One Dask task's partitions, proved with the key of SHA-256 ``digest``; proofs
    stored under ``out_dir`` if given (proofs.py); each partition tried up to ``tries``
    times. ``topic``: the submitting ClusterProver's, unique to it: its progress events
    go there, and its timeline keeps the events of its own tasks only."""

    digest: str
    entries: tuple[Entry, ...]
    out_dir: str | None
    tries: int
    topic: str


@dataclass(frozen=True)
class ProvedPartition:
    """A proved partition, as engine.PartitionResult (times in ms) plus where it was
    proved. ``device``: the worker's device id in what a task returns, the cluster-wide id
    (ClusterProver.devices) in what the client returns; None with ``recovered``: the proof
    is another attempt's, read back from out_dir (its times are then 0)."""

    job: str
    index: int
    proof: Proof
    public_inputs: list[int]
    worker: str
    device: int | None
    synthesis_ms: float = 0.0
    kernel_ms: float = 0.0
    epilogue_ms: float = 0.0
    total_ms: float = 0.0
    recovered: bool = False


@dataclass(frozen=True)
class FailedPartition:
    """A partition that failed on every one of its ``tries``; ``error`` is the last one's."""

    job: str
    index: int
    worker: str
    error: str
    tries: int


class ProvingPlugin(WorkerPlugin):
    """A worker's Engine (made with ``config`` on its first task; devices and timeline
    path chosen here) and its proving keys. Registered once per cluster under
    PLUGIN_NAME: registering it again keeps the workers' engines and keys as they are."""

    name = PLUGIN_NAME
    idempotent = True

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()

    def setup(self, worker) -> None:
        self.worker = worker
        self.directory = Path(worker.local_directory) / "numba-cuzk"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.timeline_path = self.directory / "timeline.jsonl"
        self.received: Counter = Counter()  # key digest -> times its bytes reached this worker
        self.loaded: Counter = Counter()  # key digest -> times it was read into a ProvingKey
        self._files: dict[str, tuple[Path, bool]] = {}  # digest -> (zkey file, trusted)
        self._keys: dict[str, ProvingKey] = {}
        self._engine: Engine | None = None
        self._names: dict[str, tuple[str, int, str]] = {}  # engine job name -> (job, index, topic)
        self._counter = itertools.count()
        self._lock = threading.Lock()  # the dicts above; held briefly (the event loop takes it too)
        self._making = threading.Lock()  # making the engine or reading a key: seconds, in a task thread

    async def teardown(self, worker) -> None:
        if self._engine is not None:  # in a thread: close waits for the partitions in flight
            await asyncio.to_thread(self._engine.close, True)

    @staticmethod
    def on(worker) -> ProvingPlugin:
        """The plugin of ``worker``; RuntimeError if the worker has none."""
        plugin = worker.plugins.get(PLUGIN_NAME)
        if not isinstance(plugin, ProvingPlugin):
            raise RuntimeError(f"worker {worker.address} has no {PLUGIN_NAME} plugin: make a ClusterProver first")
        return plugin

    # --- keys ------------------------------------------------------------------------------

    def receive(self, digest: str, data: bytes, trusted: bool) -> None:
        """Keep a key's zkey bytes (in the worker's local directory) until first use."""
        path = self.directory / f"{digest}.zkey"
        with atomic_write(path) as file:
            file.write(data)
        with self._lock:
            self._files[digest] = (path, trusted)
            self.received[digest] += 1

    def key(self, digest: str) -> ProvingKey:
        """The ProvingKey of ``digest``, read on first use and kept."""
        with self._making:
            if digest not in self._keys:
                with self._lock:
                    file = self._files.get(digest)
                if file is None:
                    raise LookupError(f"proving key {digest[:12]} has not reached worker {self.worker.address}")
                pk = read_zkey(file[0], trusted=file[1])
                with self._lock:
                    self._keys[digest] = pk
                    self.loaded[digest] += 1
            return self._keys[digest]

    # --- the engine ------------------------------------------------------------------------

    def engine(self) -> Engine:
        """This worker's Engine, made on first use."""
        with self._making:
            if self._engine is None:
                engine = Engine(self._engine_config())
                with self._lock:
                    self._engine = engine
            return self._engine

    def _engine_config(self) -> EngineConfig:
        devices = self.config.devices
        if devices is None:  # the worker's GPU is the first it sees (CUDA_VISIBLE_DEVICES)
            devices = (0,) if backend.cuda_available() else ()
        synthesis = self.config.synthesis
        if synthesis == "process" and multiprocessing.current_process().daemon:
            logger.warning("worker %s is a daemonic process, which cannot start synthesis processes: synthesis "
                           "runs in threads (start workers with distributed.worker.daemon = False)",
                           self.worker.address)
            synthesis = "thread"
        return replace(self.config, devices=devices, synthesis=synthesis, timeline_path=self.timeline_path)

    def describe(self, timeline: bool = False) -> dict:
        """Where this worker proves: address, host, devices (local id, name, gpu; none
        before the first task); with ``timeline``, its engine's timeline so far (text, None
        before the first task) and the engine job names' (job, index, topic)."""
        with self._lock:
            engine, names = self._engine, dict(self._names)
        described = {"address": self.worker.address, "host": socket.gethostname(),
                     "devices": [] if engine is None else [{"id": d.id, "name": d.name, "gpu": d.gpu}
                                                           for d in engine.devices]}
        if timeline:
            text = None if engine is None else engine.recorder.live_path.read_text(encoding="utf-8")
            described.update(timeline=text, names=names)
        return described

    # --- the task --------------------------------------------------------------------------

    def prove(self, chunk: Chunk) -> list[ProvedPartition | FailedPartition]:
        """Prove ``chunk`` (see the module docstring); outcomes in the chunk's order."""
        engine, pk = self.engine(), self.key(chunk.digest)
        settled: dict[tuple[str, int], ProvedPartition | FailedPartition] = {}
        todo = []
        for entry in chunk.entries:
            stored = proofs.read(chunk.out_dir, entry.job, entry.index) if chunk.out_dir else None
            if stored is None:
                todo.append(entry)
                continue
            settled[entry.job, entry.index] = self._report(chunk, ProvedPartition(
                entry.job, entry.index, *stored, self.worker.address, None, recovered=True))
        errors: dict[tuple[str, int], str] = {}
        for _ in range(chunk.tries):
            running = {engine.submit(Job(pk, [entry.partition], name=self._name(chunk, entry))): entry
                       for entry in todo}
            todo = []
            for future in as_completed(running):
                entry = running[future]
                try:
                    result = future.result()
                except JobFailed as exc:
                    errors[entry.job, entry.index] = _error_text(exc)
                    todo.append(entry)
                    continue
                settled[entry.job, entry.index] = self._report(chunk, self._proved(chunk, entry, result.partitions[0]))
            if not todo:
                break
        for entry in todo:
            settled[entry.job, entry.index] = FailedPartition(entry.job, entry.index, self.worker.address,
                                                              errors[entry.job, entry.index], chunk.tries)
        return [settled[entry.job, entry.index] for entry in chunk.entries]

    def _name(self, chunk: Chunk, entry: Entry) -> str:
        """A fresh engine job name for ``entry``, remembered for the timeline."""
        name = f"{entry.job}[{entry.index}]#{next(self._counter)}"
        with self._lock:
            self._names[name] = (entry.job, entry.index, chunk.topic)
        return name

    def _proved(self, chunk: Chunk, entry: Entry, part: PartitionResult) -> ProvedPartition:
        proof, public, ours = part.proof, part.public_inputs, True
        if chunk.out_dir:
            proof, public, ours = proofs.write_once(chunk.out_dir, entry.job, entry.index, proof, public)
        if not ours:
            return ProvedPartition(entry.job, entry.index, proof, public, self.worker.address, None, recovered=True)
        return ProvedPartition(entry.job, entry.index, proof, public, self.worker.address, part.device,
                               part.synthesis_ms, part.kernel_ms, part.epilogue_ms, part.total_ms)

    def _report(self, chunk: Chunk, proved: ProvedPartition) -> ProvedPartition:
        self.worker.log_event(chunk.topic, {"job": proved.job, "index": proved.index})
        return proved


def prove_chunk(chunk: Chunk) -> list[ProvedPartition | FailedPartition]:
    """The Dask task: prove ``chunk`` on this worker's engine."""
    return ProvingPlugin.on(get_worker()).prove(chunk)


def describe_worker(dask_worker, timeline: bool = False) -> dict | None:
    """For ``client.run``: ProvingPlugin.describe of this worker, None without the plugin."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    return plugin.describe(timeline) if isinstance(plugin, ProvingPlugin) else None


def key_counts(dask_worker) -> dict[str, dict[str, int]]:
    """For ``client.run``: per key digest, how often it reached this worker and was read."""
    plugin = ProvingPlugin.on(dask_worker)
    return {digest: {"received": plugin.received[digest], "loaded": plugin.loaded[digest]}
            for digest in plugin.received}


def _error_text(failed: JobFailed) -> str:
    """The partition's own error (type and message) from its one-partition job's failure."""
    cause = failed.__cause__
    return str(failed) if cause is None else f"{type(cause).__name__}: {cause}"

