"""The synthesis pool: partitions' witnesses made in parallel on the CPU.

Processes by default: the circuit builders are numpy plus Numba loops compiled without
``nogil``, so they hold the GIL most of the time and threads barely scale
(``python -m bench.engine`` measures 1-16 workers both ways). Processes are spawned, not
forked: forking a process that has run OpenMP (Numba's parallel loops) or holds a CUDA
context is unsafe; so the main module must be import-safe (``if __name__ == "__main__"``).

A worker checks the witness it made (shape, canonical, wire 0: groth16.witness.
validate_witness) and counts its scalar classes (ops.scalar_counts) before handing it
over (``WitnessCheck``): at 2^27 that is ~1.6 s of numpy per partition, which the engine
did in the pool's one result thread, one partition after the other (the H200's PoRep
timeline: a partition queued every ~1.6 s whatever the synthesis workers did). In the
workers it runs in parallel, off the engine's GIL.

A process worker writes the witness as an .npy file in shared memory (/dev/shm) and sends
back its path; the engine maps it and unlinks it at once (the mapping lives until the
witness is dropped). For a 2^20-wire witness (32 MiB) that took 22 ms from the worker's
write to the engine holding it, against 145 ms pickled through the pool's pipe, which one
thread of the engine reads for every worker (measured on the 2-core test machine).
Workers time their synthesizer on the host's monotonic clock and ignore SIGINT: Ctrl-C
reaches the engine alone, which drains.

Nothing is left in /dev/shm: a witness file is named after the engine's process
(``numba-cuzk-witness-<engine pid>-<pool>-...``); ``shutdown`` removes the pool's files
that were never collected (a worker killed while writing one), and a new pool removes those
of engines that died (SIGKILL). A worker exits when its engine does, so the pool's
semaphores go too (multiprocessing's resource tracker unlinks them when the last
process holding them is gone).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import tempfile
import threading
import time
import uuid
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from numba_cuzk.circuits import witness
from numba_cuzk.engine.job import Synthesizer
from numba_cuzk.engine.ops import ScalarCounts, scalar_counts
from numba_cuzk.groth16.witness import validate_witness


SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
SHARED_PREFIX = "numba-cuzk-witness-"
PARENT_POLL_S = 0.5  # how soon a worker notices that its engine died


@dataclass(frozen=True)
class SharedWitness:
    """A witness a process worker left in SHARED_DIR as an .npy file."""

    path: str


@dataclass(frozen=True)
class WitnessCheck:
    """What a worker checks of the witness it made: ``n_wires`` (validate_witness), and with
    ``classes`` its ScalarCounts, private wires from ``private_from``."""

    n_wires: int
    private_from: int
    classes: bool = True


@dataclass(frozen=True)
class Synthesized:
    """A synthesizer's run [start_ns, end_ns] (host monotonic clock: the synthesizer, the
    witness's check and its hand-over) on worker ``worker`` (process id, thread id) and
    what it returned: the witness, or from a process worker the path of the witness's
    .npy in SHARED_DIR (``witness()`` reads either); ``counts``: its ScalarCounts, when
    the check counted them."""

    result: object
    start_ns: int
    end_ns: int
    worker: tuple[int, int]
    counts: ScalarCounts | None = None

    def witness(self) -> object:
        """The witness; a shared-memory file is mapped (read-only) and unlinked."""
        if not isinstance(self.result, SharedWitness):
            return self.result
        try:
            return np.asarray(np.load(self.result.path, mmap_mode="r"))
        finally:
            os.unlink(self.result.path)


def run_synthesizer(synthesizer: Synthesizer, shared: str | None, check: WitnessCheck | None = None) -> Synthesized:
    """Runs in a pool worker; ``check``: the witness checked (ValueError naming the
    problem) and counted here; ``shared``: hand an array back through a shared-memory file
    whose name starts with this prefix."""
    start = time.monotonic_ns()
    result = synthesizer()
    counts = None
    if check is not None:
        validate_witness(result, check.n_wires)
        counts = scalar_counts(result, check.private_from) if check.classes else None
    if shared and isinstance(result, np.ndarray):
        path = os.path.join(SHARED_DIR, f"{shared}{os.getpid()}-{uuid.uuid4().hex}.npy")
        np.save(path, result, allow_pickle=False)
        result = SharedWitness(path)
    return Synthesized(result, start, time.monotonic_ns(), (os.getpid(), threading.get_ident()), counts)


def circuit_witness(name: str, log_constraints: int, seed: int) -> np.ndarray:
    """A picklable synthesizer for the built-in circuits: instance ``seed`` of circuit
    ``name`` at 2^log_constraints (circuits.witness; every seed shares one R1CS, which
    synthesis does not build)."""
    return witness(name, log_constraints, seed)


def _init_process_worker(numba_threads: int, warmup: Synthesizer | None, started) -> None:
    """Spread the cores over the workers (each build's parallel loops would otherwise start
    one thread per core in every worker), leave Ctrl-C to the engine, compile ahead, then
    wait at ``started`` for the other workers (see SynthesisPool._start)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    import numba

    numba.set_num_threads(max(1, min(numba_threads, numba.config.NUMBA_NUM_THREADS)))
    _warm_up(warmup)
    try:
        started.wait(_START_TIMEOUT_S)
    except threading.BrokenBarrierError:  # a worker that died starting: the pool reports it
        pass


def _ready() -> int:
    return os.getpid()


def _exit_with(engine_pid: int) -> None:
    """End this worker once its engine is gone (re-parented: a SIGKILLed engine never
    shuts its pool down, and a worker blocked on the call queue would wait for ever)."""
    while os.getppid() == engine_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def remove_shared(prefix: str | None = None) -> None:
    """Remove the witness files whose names start with ``prefix`` (None: those of engines
    no longer running)."""
    for name in os.listdir(SHARED_DIR):
        if not name.startswith(prefix or SHARED_PREFIX):
            continue
        try:
            pid = int(name[len(SHARED_PREFIX):].split("-")[0])
        except ValueError:
            continue
        if prefix is not None or not _alive(pid):
            try:
                os.unlink(os.path.join(SHARED_DIR, name))
            except FileNotFoundError:  # collected meanwhile
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _warm_up(warmup: Synthesizer | None) -> None:
    if warmup is None:
        return
    try:
        warmup()
    except Exception:  # a warm-up only compiles; the partitions report their own errors
        pass


_START_TIMEOUT_S = 120


class SynthesisPool:
    """``workers`` threads or spawned processes (``kind``) running synthesizers; ``warmup``
    (see EngineConfig.synthesis_warmup) runs in each process as it starts, or once here."""

    def __init__(self, kind: str, workers: int, warmup: Synthesizer | None = None) -> None:
        self.kind, self.workers, self.warmup = kind, workers, warmup
        if warmup is not None:
            self.check(warmup)
        if kind == "thread":
            _warm_up(warmup)  # compiled code is shared by the threads
        else:
            remove_shared()  # left by engines that were killed
        self._shared = f"{SHARED_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}-" if kind == "process" else None
        self._executor = self._make()
        self._indices: dict[tuple[int, int], int] = {}
        self._lock = threading.Lock()

    def _make(self) -> Executor:
        if self.kind == "thread":
            return ThreadPoolExecutor(self.workers, thread_name_prefix="synthesis")
        per_worker = max(1, (os.cpu_count() or 1) // self.workers)
        context = multiprocessing.get_context("spawn")
        started = context.Barrier(self.workers)
        executor = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init_process_worker,
                                       initargs=(per_worker, self.warmup, started))
        self._start(executor)
        return executor

    def _start(self, executor: ProcessPoolExecutor) -> None:
        """Every worker spawned, imported and warmed up before the first partition: a pool
        spawned on demand starts its processes (numba's import, the warm-up's kernel loads,
        ~1 s of CPU each) beside the first partitions, and the GPU workers' launching
        threads starve (device busy 83% in the first round of an engine, 97% after, on an
        H200 with 15 workers). Each task of ``workers`` spawns a process (none is idle);
        none completes until every worker is past the barrier."""
        for future in [executor.submit(_ready) for _ in range(self.workers)]:
            future.result(timeout=2 * _START_TIMEOUT_S)

    def check(self, synthesizer: Synthesizer | np.ndarray) -> None:
        """TypeError unless ``synthesizer`` can run here: a witness given as an array, or a
        callable (picklable, for processes)."""
        if isinstance(synthesizer, np.ndarray):
            return
        if not callable(synthesizer):
            raise TypeError(f"a partition must be a witness array or a callable making one, got "
                            f"{type(synthesizer).__name__}")
        if self.kind == "process":
            try:
                pickle.dumps(synthesizer)
            except Exception as exc:
                raise TypeError(f"synthesizer {synthesizer!r} cannot be sent to a synthesis process ({exc}); use a "
                                "functools.partial of a module-level function, or synthesis='thread'") from exc

    def submit(self, synthesizer: Synthesizer | np.ndarray, check: WitnessCheck | None = None) -> Future:
        """Future[Synthesized]; ``check``: what the worker checks (run_synthesizer). A
        witness given as an array is checked at once, here (it is never sent to a
        process). A process pool broken by a dead worker is replaced (its partitions fail;
        later ones run on the new pool)."""
        if isinstance(synthesizer, np.ndarray):
            done: Future = Future()
            try:
                done.set_result(run_synthesizer(lambda: synthesizer, None, check))
            except Exception as exc:  # refused as a worker's witness would be: in the future
                done.set_exception(exc)
            return done
        try:
            return self._executor.submit(run_synthesizer, synthesizer, self._shared, check)
        except BrokenExecutor:
            self._executor = self._make()
            return self._executor.submit(run_synthesizer, synthesizer, self._shared, check)

    def worker_index(self, worker: tuple[int, int]) -> int:
        """Small worker numbers for the timeline, in order of first appearance."""
        with self._lock:
            return self._indices.setdefault(worker, len(self._indices))

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        if self._shared is not None:
            remove_shared(self._shared)  # a worker killed while writing one
