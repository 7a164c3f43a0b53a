"""What is submitted (``Job``), what comes back (``JobResult``, ``JobFailed``), and the
engine's bookkeeping of each job and partition on its way.

A job is P partitions proved with one proving key, like a Filecoin PoRep proof of 10
partitions. Each partition is a synthesizer: a callable returning its witness, (8, n_vars)
uint32 canonical Fr with wire 0 = 1 (``functools.partial(circuit_witness, "mimc", 10,
seed)``, ``functools.partial(read_wtns, path)``, or in thread mode any lambda), or the
witness itself when it is already in memory.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from numba_cuzk.engine.config import WITNESS_BYTES_PER_WIRE
from numba_cuzk.engine.ops import ScalarCounts
from numba_cuzk.groth16.formats import write_proof_json, write_public_json
from numba_cuzk.groth16.keys import Proof, ProvingKey

Synthesizer = Callable[[], np.ndarray]


def partition_files(folder: Path, index: int) -> tuple[Path, Path]:
    """(proof.json, public.json) of partition ``index`` in ``folder``:
    partition-III.proof.json and partition-III.public.json."""
    stem = f"partition-{index:03d}"
    return folder / f"{stem}.proof.json", folder / f"{stem}.public.json"


@dataclass(frozen=True)
class Job:
    """``pk`` proves every partition; ``partitions`` are their synthesizers, in order.
    ``name`` identifies the job in results and the timeline (default "job-N", unique per
    engine). ``out_dir``: each proof is written there as it completes,
    partition-III.proof.json and partition-III.public.json (snarkjs's formats), through a
    temporary file and a rename, so a file that exists is whole. ``on_proved`` is called
    with each PartitionResult as it completes, on an assembly thread (progress bars); it
    must not raise. ``indices``: the partitions' indices in results and file names
    (default 0..P-1; a rerun that resumes a job gives the ones still to prove)."""

    pk: ProvingKey
    partitions: Sequence[Synthesizer | np.ndarray]
    name: str | None = None
    out_dir: str | os.PathLike | None = None
    on_proved: Callable[[PartitionResult], None] | None = None
    indices: Sequence[int] | None = None


@dataclass(frozen=True)
class PartitionResult:
    """One proved partition. Times in ms: ``synthesis_ms`` the synthesizer's run,
    ``kernel_ms`` its kernels' device time, ``epilogue_ms`` proof assembly,
    check and writing, ``total_ms`` from synthesis start to the proof."""

    index: int
    proof: Proof
    public_inputs: list[int]
    device: int
    synthesis_ms: float
    kernel_ms: float
    epilogue_ms: float
    total_ms: float


@dataclass(frozen=True)
class JobResult:
    """A proved job: ``partitions`` in partition order; ``elapsed_ms`` from submit to the
    last proof."""

    name: str
    partitions: list[PartitionResult]
    elapsed_ms: float

    @property
    def proofs(self) -> list[Proof]:
        return [p.proof for p in self.partitions]


class JobFailed(Exception):
    """A job with a partition that failed. The message names the first failure (partition
    ``index``, ``stage``, error), which is also ``__cause__``; ``finished`` holds the
    partitions that were proved all the same (index -> PartitionResult): finished proofs
    are never lost. ``index`` and ``stage`` are None for a job cancelled by ``close``."""

    def __init__(self, message: str, finished: dict[int, PartitionResult], index: int | None = None,
                 stage: str | None = None) -> None:
        super().__init__(message)
        self.finished, self.index, self.stage = finished, index, stage


@dataclass(eq=False)
class Partition:
    """One partition on its way through the engine. ``nbytes``: its witness's host bytes
    (the budget it holds); ``counts``: its witness's scalar classes (ops.ScalarCounts, from
    the synthesis worker; None when not counted), for the kernel phases' products."""

    job: JobState
    index: int
    synthesizer: Synthesizer | np.ndarray
    nbytes: int
    admitted: bool = False
    witness: np.ndarray | None = None
    counts: ScalarCounts | None = None
    synthesis_start_ns: int = 0
    synthesis_ms: float = 0.0

    @property
    def ids(self) -> dict:
        """The timeline's identity fields."""
        return {"job": self.job.name, "partition": self.index}


class JobState:
    """A submitted job: its future resolves once every partition is settled (proved,
    failed, or cancelled), so nothing of the job is still running then."""

    def __init__(self, job: Job, name: str, submitted_ns: int) -> None:
        self.job, self.name, self.submitted_ns = job, name, submitted_ns
        self.future: Future = Future()
        self.future.set_running_or_notify_cancel()  # a job in the engine cannot be cancelled
        self._lock = threading.Lock()
        self._results: dict[int, PartitionResult] = {}
        self._unsettled = len(job.partitions)
        self._failure: tuple[int, str, BaseException] | None = None
        self.out_dir = None if job.out_dir is None else Path(job.out_dir)

    @property
    def failed(self) -> bool:
        return self._failure is not None

    def partitions(self) -> list[Partition]:
        nbytes = WITNESS_BYTES_PER_WIRE * self.job.pk.n_vars
        indices = range(len(self.job.partitions)) if self.job.indices is None else self.job.indices
        return [Partition(self, i, s, nbytes) for i, s in zip(indices, self.job.partitions)]

    def write(self, index: int, proof: Proof, public_inputs: list[int]) -> None:
        """Partition ``index``'s proof.json and public.json into out_dir, if the job has one
        (each written atomically: fileio.atomic_write)."""
        if self.out_dir is None:
            return
        proof_path, public_path = partition_files(self.out_dir, index)
        write_public_json(public_path, public_inputs)
        write_proof_json(proof_path, proof)  # last: a proof file means the partition is done

    def proved(self, result: PartitionResult, now_ns: int) -> None:
        with self._lock:
            self._results[result.index] = result
        if self.job.on_proved is not None:
            self.job.on_proved(result)
        self._settle(now_ns)

    def fail(self, index: int, stage: str, error: BaseException, now_ns: int) -> None:
        """Partition ``index`` failed in ``stage`` (the first failure is the job's error)."""
        with self._lock:
            if self._failure is None:
                self._failure = (index, stage, error)
        self._settle(now_ns)

    def cancel(self, now_ns: int) -> None:
        """A partition that will not run (its job failed, or the engine was closed)."""
        self._settle(now_ns)

    def _settle(self, now_ns: int) -> None:
        with self._lock:
            self._unsettled -= 1
            if self._unsettled:
                return
            finished = dict(sorted(self._results.items()))
            failure = self._failure
        if failure is None and len(finished) == len(self.job.partitions):
            self.future.set_result(JobResult(self.name, list(finished.values()), (now_ns - self.submitted_ns) / 1e6))
            return
        if failure is None:
            message = f"job {self.name}: cancelled, the engine was closed ({len(finished)} partitions proved)"
            self.future.set_exception(JobFailed(message, finished))
            return
        index, stage, error = failure
        failed = JobFailed(f"job {self.name}: partition {index} failed in {stage}: {type(error).__name__}: {error}",
                           finished, index, stage)
        failed.__cause__ = error
        self.future.set_exception(failed)
