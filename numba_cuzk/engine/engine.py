"""The Engine: partitions synthesized on the CPU while others are proved on the GPUs.

    with Engine(EngineConfig(timeline_path="run.jsonl")) as engine:
        future = engine.submit(Job(pk, [partial(circuit_witness, "bit_heavy", 20, s) for s in range(10)]))
        result = future.result()           # JobResult: proofs in partition order

Threads: a dispatcher admits partitions in submission order (HostBudget: backpressure)
and hands them to the synthesis pool, whose workers check each witness (shape,
canonical, wire 0) and count its scalars (ops.py) where it is made; a finished synthesis
is queued as it lands (the pool's result thread only maps the witness); each device's stager takes
partitions from the one shared queue as its proof slots free up, so jobs spread over
the devices, and uploads them for its GPU workers (``gpu_workers_per_device``;
numba_cuzk.engine.gpu); an NVML sampler; with ``trace="kernels"``, CUPTI's record of every
kernel and copy (numba_cuzk.engine.kernel_trace). Every step is a timeline event
(numba_cuzk.events).

Faults: a synthesizer that raises, a witness that is refused, or an error on the device
or in the epilogue fails that partition (a ``failed`` event) and so its job (``JobFailed``
naming partition, stage and error); the job's partitions not yet started are cancelled
(``failed`` with stage "cancelled"), those in flight finish and keep their proofs. The
engine goes on serving other jobs.

Numba's parallel CPU loops (witness checks, the CPU backend's kernels) run from several
engine threads at once: the threading layer must be thread-safe, omp or tbb (Numba picks
one when it can; workqueue aborts on concurrent use).
"""

from __future__ import annotations

import itertools
import queue
import shutil
import sys
import threading
from concurrent.futures import Future

from numba_cuzk.engine.assembly import Assembled, Assembler
from numba_cuzk.engine.budget import HostBudget
from numba_cuzk.engine.config import EngineConfig, trace_kinds
from numba_cuzk.engine.gpu import Device, Staged, gpu_worker, open_devices, stager
from numba_cuzk.engine.job import Job, JobState, Partition, PartitionResult
from numba_cuzk.engine.counters import CounterSampler
from numba_cuzk.engine.kernel_trace import KernelTrace
from numba_cuzk.engine.nvml import NvmlSampler
from numba_cuzk.engine.record import Recorder, now_ns
from numba_cuzk.engine.synthesis import SHARED_DIR, Synthesized, SynthesisPool, WitnessCheck
from numba_cuzk.events import TimelineWriter
from numba_cuzk.groth16.prove import Blinding


class Engine:
    """Proves submitted jobs until ``close``; see the module docstring and EngineConfig."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        """Build the engine (devices, budget, queues, threads not yet started), then start
        it: the synthesis and assembly pools, the kernel trace, the threads, the NVML
        sampler. If starting raises, what had started is stopped before the error
        propagates: no process, thread or shared-memory file outlives a failed start."""
        self.config = config = config or EngineConfig()
        self.devices: list[Device] = open_devices(config.devices, config.gpu_workers_per_device,
                                                  config.device_memory_budget_bytes, config.graphs, tail=config.tail)
        workers = len(self.devices) * config.gpu_workers_per_device
        self.budget = _host_budget(config, workers)
        self._admit: queue.Queue = queue.Queue()  # partitions waiting for admission, None: stop
        self._work: queue.Queue = queue.Queue()  # synthesized partitions; bounded by the budget
        self._jobs: list[JobState] = []
        self._names: set[str] = set()
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self._closed = False
        self._threads = [threading.Thread(target=self._dispatch, name="dispatch", daemon=True)]
        self._threads += [threading.Thread(target=stager, args=(d, self._work, self), daemon=True,
                                           name=f"stage{d.id}") for d in self.devices]
        self._threads += [threading.Thread(target=gpu_worker, args=(d, w, self), daemon=True, name=f"gpu{d.id}.{w}")
                          for d in self.devices for w in range(config.gpu_workers_per_device)]
        self._switch_interval_s = sys.getswitchinterval()
        self.pool: SynthesisPool | None = None
        self.assembler: Assembler | None = None
        self.trace: KernelTrace | None = None
        self.counters: CounterSampler | None = None
        self.nvml: NvmlSampler | None = None
        self.recorder = Recorder(self._writer())
        try:
            self._start()
        except BaseException as error:
            self._stop_started(error)
            raise

    def _start(self) -> None:
        """Start, in order: the pools (processes for ``synthesis="process"``), the kernel
        trace and the counter sampler (``trace``), the threads, the NVML sampler."""
        config = self.config
        self.pool = SynthesisPool(config.synthesis, config.synthesis_workers, config.synthesis_warmup)
        self.assembler = Assembler(config.assembly, len(self.devices))  # ~7.5 ms per partition of ~43 on a GPU
        kinds = trace_kinds(config.trace)
        if "kernels" in kinds:
            self.trace = KernelTrace.start(self.recorder, [d.id for d in self.devices if d.gpu])
        if "counters" in kinds:
            self.counters = CounterSampler.start(self.recorder, [(d.id, d.uuid) for d in self.devices if d.gpu],
                                                 config.counters_period_ms)
        if config.switch_interval_ms is not None:
            sys.setswitchinterval(config.switch_interval_ms / 1e3)
        for thread in self._threads:
            thread.start()
        self.nvml = NvmlSampler(self.recorder, [(d.id, d.uuid) for d in self.devices if d.gpu], config.nvml_period_ms)

    def _stop_started(self, error: BaseException) -> None:
        """After a failed start: stop what _start had started, in reverse, and close the
        timeline. A step that fails too is noted on ``error``, which is the one raised."""
        self._closed = True
        steps = [self.nvml and self.nvml.stop, self._stop_threads, self.counters and self.counters.stop,
                 self.trace and self.trace.stop,
                 lambda: sys.setswitchinterval(self._switch_interval_s), self.assembler and self.assembler.shutdown,
                 self.pool and self.pool.shutdown, self.recorder.close]
        for step in filter(None, steps):
            try:
                step()
            except Exception as stop_error:
                error.add_note(f"stopping the engine after it: {type(stop_error).__name__}: {stop_error}")

    def _stop_threads(self) -> None:
        """Stop the dispatcher, the stagers and (through them) the GPU workers, if started."""
        self._admit.put(None)
        for _ in self.devices:  # each stager then stops its device's workers
            self._work.put(None)
        for thread in self._threads:
            if thread.ident is not None:
                thread.join()

    def _writer(self) -> TimelineWriter | None:
        if self.config.timeline_path is None:
            return None
        header = {**self.config.as_dict(), "max_in_flight": self.budget.max_partitions,
                  "host_memory_budget_bytes": self.budget.limit_bytes}
        return TimelineWriter(self.config.timeline_path, [{"id": d.id, "name": d.name} for d in self.devices], header,
                              live=self.config.timeline_live)

    # --- the API ---------------------------------------------------------------------------

    def submit(self, job: Job) -> Future:
        """Queue ``job``; a Future of its JobResult (or JobFailed). Raises at once
        (ValueError, TypeError) for a job that cannot run: no partitions, a name already
        used, a synthesizer that is not callable (or not picklable for processes)."""
        if not job.partitions:
            raise ValueError("a job needs at least one partition")
        if job.indices is not None and (len(job.indices) != len(job.partitions) or len(set(job.indices)) != len(
                job.indices)):
            raise ValueError(f"a job's indices must be distinct, one per partition: {list(job.indices)}")
        for synthesizer in job.partitions:
            self.pool.check(synthesizer)
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine is closed")
            name = job.name or f"job-{next(self._counter)}"
            if name in self._names:
                raise ValueError(f"job name {name!r} is already used in this engine")
            self._names.add(name)
            state = JobState(job, name, now_ns())
            if state.out_dir is not None:
                state.out_dir.mkdir(parents=True, exist_ok=True)
            self._jobs.append(state)
        for part in state.partitions():
            self._admit.put(part)
        return state.future

    def close(self, cancel: bool = False) -> None:
        """Drain: wait for every submitted job, then stop the threads and the pool and close
        the timeline. ``cancel``: partitions not yet admitted are cancelled (their jobs fail)
        and only those in flight are finished (Ctrl-C)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if cancel:
            self.budget.cancel()
        self._admit.put(None)
        for state in self._jobs:
            state.future.exception()  # waits; failures are the submitters' to read
        for _ in self.devices:  # each stager then stops its device's workers
            self._work.put(None)
        for thread in self._threads:
            thread.join()
        self.pool.shutdown()
        self.assembler.shutdown()
        self.nvml.stop()
        if self.trace is not None:
            self.trace.stop()
        if self.counters is not None:
            self.counters.stop()
        self.recorder.close()
        sys.setswitchinterval(self._switch_interval_s)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(cancel=exc_type is not None)

    # --- synthesis -------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Admit partitions in submission order and start their synthesis."""
        while (part := self._admit.get()) is not None:
            if part.job.failed:
                self.skip(part)
                continue
            try:
                admitted = self.budget.acquire(part.nbytes)
            except ValueError as exc:
                self.failed(part, "admission", exc)
                continue
            if not admitted:
                self.skip(part)
                continue
            part.admitted = True
            try:
                future = self.pool.submit(part.synthesizer, self._check(part.job.job.pk))
            except Exception as exc:  # e.g. a pool that cannot start
                self.failed(part, "synthesis", exc)
                continue
            future.add_done_callback(lambda f, part=part: self._synthesized(part, f))

    def _check(self, pk) -> WitnessCheck:
        """What a synthesis worker checks of a witness for ``pk``: its scalar classes only
        where some MSM counts them (a GPU with the bit/tail split counts none: ops.py)."""
        split = self.config.tail is not None and any(d.gpu for d in self.devices)
        return WitnessCheck(pk.n_vars, pk.n_public + 1, classes=not split)

    def _synthesized(self, part: Partition, future: Future) -> None:
        """Where a synthesis lands (the pool's result thread, for every worker: nothing here
        reads the witness): record it, queue it for the GPUs."""
        try:
            out: Synthesized = future.result()
            part.synthesis_start_ns, part.synthesis_ms = out.start_ns, (out.end_ns - out.start_ns) / 1e6
            self.recorder.interval("synthesis", out.start_ns, out.end_ns, **part.ids,
                                   worker=self.pool.worker_index(out.worker))
            part.witness, part.counts = out.witness(), out.counts
        except Exception as exc:
            self.failed(part, "synthesis", exc)
            return
        self.recorder.instant("queued", **part.ids)
        self._work.put(part)

    # --- settling partitions (also called by the GPU workers) -----------------------------

    def release(self, part: Partition) -> None:
        """The partition's witness is no longer needed: its host budget goes back."""
        part.witness = None
        if part.admitted:
            part.admitted = False
            self.budget.release(part.nbytes)

    def assemble(self, staged: Staged, device: int, points: dict, blinding: Blinding, kernel_ms: float) -> None:
        """A GPU worker's collected partition: its proof assembled, checked and written in
        the assembly pool (numba_cuzk.engine.assembly); returns at once."""
        future = self.assembler.submit(staged.resident.prover.epilogue_key, points, staged.public, blinding)
        future.add_done_callback(lambda f: self._assembled(staged, device, kernel_ms, f))

    def _assembled(self, staged: Staged, device: int, kernel_ms: float, future: Future) -> None:
        part = staged.part
        try:
            out: Assembled = future.result()
            self.recorder.interval("epilogue", out.start_ns, out.end_ns, **part.ids, device=device, in_lock=False)
            part.job.write(part.index, out.proof, staged.public)
        except Exception as exc:
            self.failed(part, "epilogue", exc)
            return
        end = now_ns()
        self.recorder.instant("done", **part.ids)
        part.job.proved(PartitionResult(part.index, out.proof, staged.public, device, part.synthesis_ms, kernel_ms,
                                        (out.end_ns - out.start_ns) / 1e6, (end - part.synthesis_start_ns) / 1e6), end)

    def failed(self, part: Partition, stage: str, error: BaseException) -> None:
        self.release(part)
        self.recorder.instant("failed", **part.ids, stage=stage, error=f"{type(error).__name__}: {error}")
        part.job.fail(part.index, stage, error, now_ns())

    def skip(self, part: Partition) -> None:
        """A partition that will not run: its job failed, or the engine was cancelled."""
        self.release(part)
        why = "its job failed" if part.job.failed else "the engine was closed"
        self.recorder.instant("failed", **part.ids, stage="cancelled", error=f"not started: {why}")
        part.job.cancel(now_ns())


def _host_budget(config: EngineConfig, gpu_workers: int) -> HostBudget:
    """The config's host budget; with synthesis in processes at most the free space of
    SHARED_DIR, where their witnesses wait until staged (a container's /dev/shm can be
    far smaller than its memory: 64 MB is Docker's default)."""
    limit, in_flight = config.host_budget(), config.in_flight(gpu_workers)
    if config.synthesis == "process":
        free = shutil.disk_usage(SHARED_DIR).free
        if free < limit:
            return HostBudget(free, in_flight, f"the free space of {SHARED_DIR} (witnesses from synthesis processes "
                                               f"wait there; mount a larger one or use thread synthesis)")
    return HostBudget(limit, in_flight)
