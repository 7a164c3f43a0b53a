"""The client side: jobs of partitions spread over a Dask cluster's GPU workers.

    with ClusterProver(client) as prover:
        future = prover.submit(zkey_path, [partial(circuit_witness, "bit_heavy", 20, s) for s in range(10)])
        result = future.result()                 # engine.JobResult, partitions in order
        prover.write_timeline("run.jsonl")       # one timeline of every worker

The partitions of the submitted jobs are cut into chunks (``task_partitions`` each), one
Dask task per chunk with ``resources={"GPU": 1}``: a worker with one GPU runs one chunk
at a time, which its engine pipelines, and Dask spreads the chunks over the workers. By
default each GPU worker gets about ``TASKS_PER_WORKER`` chunks: few enough that the
engine's pipeline rarely drains between two (a drain costs about one synthesis), enough
to balance the load and to bound the work redone when a worker is lost.

Faults: a lost worker's chunks are run again elsewhere by Dask (a task whose workers keep
dying fails after distributed.scheduler.allowed-failures); with ``out_dir``, the proofs a
lost worker stored are read back, not proved again, and no proof is ever written twice
(proofs.py). A partition that fails on every try (``tries``) fails its job, naming it and
the error (engine.JobFailed, with the partitions proved all the same); other partitions
and jobs go on.
"""

from __future__ import annotations

import math
import os
import pickle
import threading
import time
import uuid
import warnings
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import Callable, Sequence

import numpy as np
from distributed import Client

from numba_cuzk.cluster import clock, keys, merge
from numba_cuzk.cluster.keys import KeyRef
from numba_cuzk.cluster.proofs import check_job_name
from numba_cuzk.cluster.worker import (PLUGIN_NAME, Chunk, Entry, FailedPartition, ProvedPartition, ProvingPlugin,
                                       describe_worker, prove_chunk)
from numba_cuzk.engine import EngineConfig, JobFailed, JobResult
from numba_cuzk.engine.job import Synthesizer
from numba_cuzk.groth16.keys import Proof

TASKS_PER_WORKER = 2
Zkey = str | os.PathLike | bytes | KeyRef  # a zkey file, its bytes, or a key the cluster has (add_key)
Progress = Callable[[str, int], None]  # (job, partition index), once per proved partition


class ClusterProver:
    """Proves jobs on ``client``'s cluster: one Engine per worker (ProvingPlugin), each
    partition tried up to ``tries`` times. The first ClusterProver on a cluster gives the
    workers' engines their ``config`` (None: EngineConfig()), kept for the workers' life;
    a later one with another config is warned. A context manager; see the module docstring."""

    def __init__(self, client: Client, config: EngineConfig | None = None, *, tries: int = 2) -> None:
        if tries < 1:
            raise ValueError(f"tries must be at least 1, got {tries}")
        self.client, self.tries = client, tries
        if config is not None:
            _warn_if_configured_otherwise(client, config)
        client.register_plugin(ProvingPlugin(config))
        self.topic = f"numba-cuzk-progress-{uuid.uuid4().hex}"
        self._jobs: dict[str, _JobState] = {}
        self._tasks: set = set()  # Dask futures of the chunks in flight: a dropped future cancels its task
        self._device_ids: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        client.subscribe_topic(self.topic, self._on_event)

    def __enter__(self) -> ClusterProver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening for progress (jobs in flight still settle)."""
        self.client.unsubscribe_topic(self.topic)

    # --- jobs ----------------------------------------------------------------------------------

    def add_key(self, zkey: Zkey, trusted: bool = False) -> KeyRef:
        """Send a proving key to the workers, each once (keys.py; nothing if the cluster
        has it); the KeyRef names it in later submissions without reading or hashing the
        file again. ``trusted``: the workers skip its point checks."""
        if isinstance(zkey, KeyRef):
            return zkey
        return keys.install(self.client, zkey if isinstance(zkey, bytes) else _read(zkey), trusted)

    def submit(self, zkey: Zkey, partitions: Sequence[Synthesizer | np.ndarray], name: str | None = None,
               **options) -> Future:
        """One job: a Future of its JobResult (or JobFailed); ``options`` as submit_many."""
        (future,) = self.submit_many(zkey, [partitions], names=None if name is None else [name], **options)
        return future

    def submit_many(self, zkey: Zkey, jobs: Sequence[Sequence[Synthesizer | np.ndarray]], *,
                    names: Sequence[str] | None = None, out_dir: str | os.PathLike | None = None,
                    trusted: bool = False, task_partitions: int | None = None, workers: Sequence[str] | None = None,
                    on_progress: Progress | None = None) -> list[Future]:
        """Jobs proved with one key: a Future of JobResult (or JobFailed) per job.

        zkey: a zkey file or its bytes (add_key: sent to each worker once; ``trusted``
            skips the workers' point checks), or a KeyRef. jobs: each a list of partitions,
            synthesizers (picklable: they run on the workers) or witnesses, as engine.Job's.
        names: the jobs' names (letters, digits, _ . -; default "job-<random>").
        out_dir: each proof stored as OUT/<job>/partition-III.{proof,public}.json, exactly
            once (proofs.py); a workers' shared filesystem for a cluster of hosts.
        task_partitions: partitions per Dask task (default: see the module docstring).
        workers: prove on these worker addresses only.
        on_progress: called once per proved partition (job, index), from a Dask thread;
            it must be quick and must not raise.
        """
        names = list(names) if names is not None else [f"job-{uuid.uuid4().hex[:8]}" for _ in jobs]
        self._check_jobs(jobs, names)
        key = self.add_key(zkey, trusted)
        submitted = time.monotonic_ns()
        states = [_JobState(name, len(parts), on_progress, submitted) for name, parts in zip(names, jobs)]
        with self._lock:
            self._jobs.update((state.name, state) for state in states)
        work = [Entry(name, index, part) for name, parts in zip(names, jobs) for index, part in enumerate(parts)]
        size = task_partitions or self._task_partitions(len(work), workers)
        token = uuid.uuid4().hex[:8]
        for number, start in enumerate(range(0, len(work), size)):
            chunk = Chunk(key.digest, tuple(work[start:start + size]), None if out_dir is None else os.fspath(out_dir),
                          self.tries, self.topic)
            task = self.client.submit(prove_chunk, chunk, key=f"numba-cuzk-{token}-{number}", resources={"GPU": 1},
                                      workers=None if workers is None else list(workers), allow_other_workers=False,
                                      pure=False)
            with self._lock:
                self._tasks.add(task)
            task.add_done_callback(partial(self._chunk_done, chunk))
        return [state.future for state in states]

    def warm_up(self, zkey: Zkey, partitions: Sequence[Synthesizer | np.ndarray],
                trusted: bool = False) -> dict[str, float]:
        """Prove ``partitions`` on every GPU worker at once (compiling its kernels, starting
        its synthesis, making the key resident); seconds per worker address."""
        key = self.add_key(zkey, trusted)
        futures = {address: self.submit(key, partitions, name=f"warm-up-{uuid.uuid4().hex[:8]}", workers=[address],
                                        task_partitions=len(partitions))
                   for address in self.client.run_on_scheduler(_gpu_workers)}
        return {address: future.result().elapsed_ms / 1e3 for address, future in futures.items()}

    def _check_jobs(self, jobs: Sequence[Sequence], names: list[str]) -> None:
        if len(names) != len(jobs):
            raise ValueError(f"{len(names)} names for {len(jobs)} jobs")
        if any(len(parts) == 0 for parts in jobs):
            raise ValueError("a job needs at least one partition")
        for name in names:
            check_job_name(name)
        with self._lock:
            taken = [name for name in names if name in self._jobs]
        if taken or len(set(names)) != len(names):
            raise ValueError(f"job names must be unique among the jobs in flight: {taken or names}")

    def _task_partitions(self, partitions: int, workers: Sequence[str] | None) -> int:
        count = len(workers) if workers else len(self.client.run_on_scheduler(_gpu_workers))
        return max(1, math.ceil(partitions / (TASKS_PER_WORKER * max(1, count))))

    # --- results -------------------------------------------------------------------------------

    def _chunk_done(self, chunk: Chunk, task) -> None:
        """A chunk's task settled (a Dask callback thread): settle its partitions."""
        with self._lock:
            self._tasks.discard(task)
        try:
            outcomes, cause = task.result(), None
        except BaseException as exc:  # the task itself failed: no key, its workers kept dying, cancelled
            cause = exc
            outcomes = [FailedPartition(e.job, e.index, "", f"its task failed: {type(exc).__name__}: {exc}", 0)
                        for e in chunk.entries]
        for outcome in outcomes:
            if isinstance(outcome, ProvedPartition) and outcome.device is not None:
                outcome = replace(outcome, device=self._device_id(outcome.worker, outcome.device))
            state = self._jobs[outcome.job]
            if state.settle(outcome, cause):
                with self._lock:
                    del self._jobs[outcome.job]

    def _on_event(self, event: tuple) -> None:
        """A progress event from a worker (partition proved); results may come first."""
        _, message = event
        state = self._jobs.get(message["job"])
        if state is not None:
            state.progress(message["index"])

    def _device_id(self, address: str, local: int) -> int:
        """The cluster-wide id of device ``local`` of worker ``address`` (first come, first numbered)."""
        with self._lock:
            return self._device_ids.setdefault((address, local), len(self._device_ids))

    # --- where the work ran --------------------------------------------------------------------

    def devices(self) -> list[dict]:
        """The workers' devices (those whose engine has started): cluster-wide id, name,
        gpu, worker address and host; by id."""
        found = []
        for worker in self.client.run(describe_worker).values():
            for device in (worker or {}).get("devices", []):
                found.append({**device, "id": self._device_id(worker["address"], device["id"]),
                              "worker": worker["address"], "host": worker["host"]})
        return sorted(found, key=lambda d: d["id"])

    def write_timeline(self, path: str | os.PathLike, jobs: Sequence[str] | None = None) -> int:
        """The workers' timelines merged onto this client's clock (merge.py), with the
        events of ``jobs`` (None: all this prover submitted); returns the events written."""
        described = [w for w in self.client.run(describe_worker, timeline=True).values() if w and w["timeline"]]
        offsets = clock.measure(self.client, [w["address"] for w in described])
        return merge.merge(path, described, offsets, self._device_id, self.topic, jobs)


class _JobState:
    """A submitted job's partitions as they settle; its future resolves with the last."""

    def __init__(self, name: str, total: int, on_progress: Progress | None, submitted_ns: int) -> None:
        self.name, self.total, self.on_progress, self.submitted_ns = name, total, on_progress, submitted_ns
        self.future: Future = Future()
        self.future.set_running_or_notify_cancel()
        self._lock = threading.Lock()
        self._proved: dict[int, ProvedPartition] = {}
        self._failed: dict[int, tuple[FailedPartition, BaseException | None]] = {}
        self._reported: set[int] = set()

    def progress(self, index: int) -> None:
        """Partition ``index`` is proved: tell on_progress, once."""
        with self._lock:
            if index in self._reported:
                return
            self._reported.add(index)
        if self.on_progress is not None:
            self.on_progress(self.name, index)

    def settle(self, outcome: ProvedPartition | FailedPartition, cause: BaseException | None) -> bool:
        """Record one partition's outcome; True when it was the job's last."""
        with self._lock:
            if isinstance(outcome, ProvedPartition):
                self._proved[outcome.index] = outcome
            else:
                self._failed[outcome.index] = (outcome, cause)
            last = len(self._proved) + len(self._failed) == self.total
        try:
            if isinstance(outcome, ProvedPartition):
                self.progress(outcome.index)
        finally:  # a raising on_progress must not leave the job unsettled
            if last:
                self._finish()
        return last

    def _finish(self) -> None:
        elapsed_ms = (time.monotonic_ns() - self.submitted_ns) / 1e6
        proved = dict(sorted(self._proved.items()))
        if not self._failed:
            self.future.set_result(JobResult(self.name, list(proved.values()), elapsed_ms))
            return
        index = min(self._failed)
        failure, cause = self._failed[index]
        tries = f" after {failure.tries} tries" if failure.tries else ""
        failed = JobFailed(f"job {self.name}: partition {index} failed{tries}: {failure.error}", proved)
        failed.__cause__ = cause
        self.future.set_exception(failed)


def prove_many(client: Client, zkey: Zkey, witnesses: Sequence[Synthesizer | np.ndarray], *,
               config: EngineConfig | None = None, timeline: str | os.PathLike | None = None,
               **options) -> list[Proof]:
    """Prove one job of ``witnesses`` (synthesizers or witness arrays) on ``client``'s
    cluster; the proofs in order. Raises engine.JobFailed if a partition fails on every
    try. ``timeline``: write the job's cluster timeline there; ``options``: see
    ClusterProver.submit_many (out_dir, trusted, task_partitions, workers, on_progress)."""
    with ClusterProver(client, config) as prover:
        result = prover.submit(zkey, witnesses, **options).result()
        if timeline is not None:
            prover.write_timeline(timeline, [result.name])
    return result.proofs


def _read(zkey: str | os.PathLike) -> bytes:
    with open(zkey, "rb") as file:
        return file.read()


def _gpu_workers(dask_scheduler=None) -> list[str]:
    """On the scheduler: the addresses of the workers with a GPU resource."""
    return sorted(address for address, ws in dask_scheduler.workers.items() if ws.resources.get("GPU"))


def _worker_plugin(name: str, dask_scheduler=None) -> bytes | None:
    return dask_scheduler.worker_plugins.get(name)


def _warn_if_configured_otherwise(client: Client, config: EngineConfig) -> None:
    """Warn when the workers already run engines of another config (it is kept)."""
    registered = client.run_on_scheduler(_worker_plugin, PLUGIN_NAME)
    if registered is None:
        return
    theirs = pickle.loads(registered).config
    if theirs.as_dict() != config.as_dict():
        warnings.warn(f"the workers keep the engine settings they were given first ({theirs}); restart the "
                      "cluster to change them", stacklevel=3)
