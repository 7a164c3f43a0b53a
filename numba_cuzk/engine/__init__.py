"""The proving engine: jobs of P partitions (one proving key, one witness each), CPU
synthesis overlapped with GPU proving, one consumer per device, every step on a timeline.

    config.py     EngineConfig: devices, workers, in-flight and memory budgets, timeline
    job.py        Job, JobResult, PartitionResult, JobFailed; per-job bookkeeping
    engine.py     Engine: submit(job) -> Future[JobResult], close() drains
    synthesis.py  the synthesis pool (processes or threads), circuit_witness
    budget.py     HostBudget: backpressure from the host-memory budget
    gpu.py        devices (lock, stream, resident provers) and their GPU workers
    ops.py        field products per kernel phase, for kernel efficiency
    record.py     timeline events on the host monotonic clock
    nvml.py       the NVML sampler
    workload.py   built-in circuits' keys and partitions

The names below are imported from their modules on first use (``__getattr__``): importing
one module of the package (a client's config) does not import the engine and its kernels.
"""

from __future__ import annotations

from numba_cuzk.lazy import lazy_attributes

_HOME = {"EngineConfig": "config", "Engine": "engine", "Job": "job", "JobFailed": "job", "JobResult": "job",
         "PartitionResult": "job", "circuit_witness": "synthesis"}
__all__ = sorted(_HOME)

__getattr__ = lazy_attributes(__name__, _HOME)
