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
    batch.py      `numba-cuzk run`'s work: jobs from a circuit or witness files, resume, summary
"""

from numba_cuzk.engine.config import EngineConfig
from numba_cuzk.engine.engine import Engine
from numba_cuzk.engine.job import Job, JobFailed, JobResult, PartitionResult
from numba_cuzk.engine.synthesis import circuit_witness

__all__ = ["Engine", "EngineConfig", "Job", "JobFailed", "JobResult", "PartitionResult", "circuit_witness"]
